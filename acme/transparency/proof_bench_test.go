// SPDX-License-Identifier: Apache-2.0

package transparency_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/weir-pki/weir/acme/transparency"
	"github.com/weir-pki/weir/acme/transparency/monitortest"
	"github.com/weir-pki/weir/storage/sqlite"
	"github.com/weir-pki/weir/storage/transfer"
)

// benchLogSize is the size of the log BenchmarkProveSerial proves in.
const benchLogSize = 100_000

// BenchmarkProveSerial: the inclusion proof of a certificate's issuance
// entry, found by serial, in a SQLite store whose log holds benchLogSize
// entries (written as weir migrate-storage's import writes a log, which
// is quicker to build than through the Sequencer), serials taken all
// over the log.
func BenchmarkProveSerial(b *testing.B) {
	path := filepath.Join(b.TempDir(), "weir.db")
	_, v := benchImportLog(b, path, benchLogSize)
	st, err := sqlite.Open(b.Context(), path, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	i := 0
	for b.Loop() {
		// A stride prime to the size visits leaves all over the tree.
		idx := int64(i*7919) % benchLogSize
		p, err := transparency.ProveSerial(b.Context(), st, benchSerial(idx))
		if err != nil {
			b.Fatal(err)
		}
		if p.Index != idx {
			b.Fatalf("the proof of entry %d is at index %d", idx, p.Index)
		}
		i++
	}
	b.StopTimer()
	p, err := transparency.ProveSerial(b.Context(), st, benchSerial(benchLogSize-1))
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := p.Verify(v); err != nil {
		b.Fatalf("the last entry's proof: %v", err)
	}
}

// benchSerial is the serial the benchmark's log records for leaf i.
func benchSerial(i int64) string { return fmt.Sprintf("%x", 1_000_000+i) }

// benchImportLog writes a log of n entries to a new SQLite store at path
// through its import: the entries (leaf i an event recorded under serial
// benchSerial(i)), the tree's stored hashes (Append) and the signed
// checkpoint of size n. It returns the checkpoint and the log key's
// verifier.
func benchImportLog(b *testing.B, path string, n int) ([]byte, note.Verifier) {
	b.Helper()
	ctx := b.Context()
	im, err := sqlite.OpenImport(ctx, path, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer im.Close()
	signer, v, _ := monitortest.NewLogKey(b, "ca.weir.test/log")
	entries := make([][]byte, n)
	rows := make([]transfer.LogEntry, n)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		e, err := transparency.EncodeEntry(transparency.Entry{V: transparency.EntryVersion, Kind: transparency.KindEvent,
			Time: at.Add(time.Duration(i) * time.Second), Actor: transparency.Actor{Kind: "system"},
			Event: &transparency.Event{Type: "bench"}})
		if err != nil {
			b.Fatal(err)
		}
		idx, serial := int64(i), benchSerial(int64(i))
		entries[i], rows[i] = e, transfer.LogEntry{ID: idx + 1, Entry: e, Serial: &serial, LogIndex: &idx}
	}
	tree := transparency.NewMemTree(int64(n))
	hashes, err := tree.Append(entries)
	if err != nil {
		b.Fatal(err)
	}
	hashRows := make([]transfer.LogHash, len(hashes))
	for i, h := range hashes {
		hashRows[i] = transfer.LogHash{Index: h.Index, Hash: h.Hash[:]}
	}
	const chunk = 10_000
	for from := 0; from < n; from += chunk {
		if err := im.LogEntries(ctx, rows[from:min(from+chunk, n)]); err != nil {
			b.Fatal(err)
		}
	}
	for from := 0; from < len(hashRows); from += chunk {
		if err := im.LogHashes(ctx, hashRows[from:min(from+chunk, len(hashRows))]); err != nil {
			b.Fatal(err)
		}
	}
	root, err := tree.Root()
	if err != nil {
		b.Fatal(err)
	}
	cp, err := transparency.SignCheckpoint(transparency.Checkpoint{Origin: signer.Name(), Size: int64(n), Hash: root}, signer)
	if err != nil {
		b.Fatal(err)
	}
	if err := im.LogCheckpoints(ctx, []transfer.LogCheckpoint{{Size: int64(n), Checkpoint: cp}}); err != nil {
		b.Fatal(err)
	}
	if _, err := im.Finish(context.WithoutCancel(ctx), transfer.Summary{LogSize: int64(n)}); err != nil {
		b.Fatal(err)
	}
	return cp, v
}
