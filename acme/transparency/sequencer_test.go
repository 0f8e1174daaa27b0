// SPDX-License-Identifier: Apache-2.0

package transparency_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/transparency"
	"github.com/weir-pki/weir/storage/sqlite"
)

// rfcRoot is RFC 9162 §2.1.1's MTH of entries, computed directly.
func rfcRoot(entries [][]byte) tlog.Hash {
	if len(entries) == 1 {
		return rfcLeaf(entries[0])
	}
	k := 1
	for k*2 < len(entries) {
		k *= 2
	}
	return rfcNode(rfcRoot(entries[:k]), rfcRoot(entries[k:]))
}

// sequencerOn is a sequencer over a new SQLite store, and the log key's
// verifier.
func sequencerOn(t *testing.T) (*transparency.Sequencer, *sqlite.Store, note.Verifier) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "weir.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	signer, v := newLogKey(t)
	return &transparency.Sequencer{Store: st, Signer: signer}, st, v
}

// newLogKey is a new log key of origin ca.weir.test/log and its verifier.
func newLogKey(t *testing.T) (note.Signer, note.Verifier) {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, vkey, err := transparency.NewNoteSigner("ca.weir.test/log", key)
	if err != nil {
		t.Fatal(err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return signer, v
}

// head opens the stored head's checkpoint and checks it against the
// entries written so far, computed without the log's code.
func head(t *testing.T, st *sqlite.Store, v note.Verifier, written [][]byte) transparency.Checkpoint {
	t.Helper()
	size, msg, err := st.LogHead(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	c, err := transparency.OpenCheckpoint(msg, v)
	if err != nil {
		t.Fatalf("the checkpoint of size %d: %v", size, err)
	}
	if c.Size != size || c.Size != int64(len(written)) || c.Hash != rfcRoot(written) {
		t.Fatalf("checkpoint %d %x, head %d; want size %d, root %x", c.Size, c.Hash, size, len(written), rfcRoot(written))
	}
	return c
}

// TestSequencer: pending entries are integrated in the order written, in
// batches of at most MaxBatch, each with a checkpoint signed by the log
// key whose root is RFC 9162's; every entry has an inclusion proof and
// every checkpoint a consistency proof to the next, from the stored
// hashes.
func TestSequencer(t *testing.T) {
	seq, st, v := sequencerOn(t)
	ctx := t.Context()
	if size, n, err := seq.Integrate(ctx); err != nil || size != 0 || n != 0 {
		t.Fatalf("Integrate of an empty log = %d, %d, %v", size, n, err)
	}
	if _, cp, _ := st.LogHead(ctx); cp != nil {
		t.Fatalf("an empty log signed a checkpoint: %q", cp)
	}
	var written [][]byte
	write := func(es ...[]byte) {
		for _, e := range es {
			if err := st.AppendLogEntry(ctx, e); err != nil {
				t.Fatal(err)
			}
			written = append(written, e)
		}
	}
	write(entries(0, 5)...)
	if size, n, err := seq.Integrate(ctx); err != nil || size != 5 || n != 5 {
		t.Fatalf("Integrate = %d, %d, %v; want 5, 5", size, n, err)
	}
	c5 := head(t, st, v, written)

	seq.MaxBatch = 2
	write(entries(5, 3)...)
	for _, want := range []int64{7, 8} {
		if size, _, err := seq.Integrate(ctx); err != nil || size != want {
			t.Fatalf("Integrate = %d, %v; want size %d", size, err, want)
		}
		head(t, st, v, written[:want])
	}
	c8 := head(t, st, v, written)

	r := transparency.StoreHashReader(ctx, st)
	for i := range written {
		p, err := tlog.ProveRecord(8, int64(i), r)
		if err != nil {
			t.Fatal(err)
		}
		if err := tlog.CheckRecord(p, 8, c8.Hash, int64(i), rfcLeaf(written[i])); err != nil {
			t.Errorf("entry %d: inclusion proof: %v", i, err)
		}
	}
	p, err := tlog.ProveTree(8, 5, r)
	if err != nil {
		t.Fatal(err)
	}
	if err := tlog.CheckTree(p, 8, c8.Hash, 5, c5.Hash); err != nil {
		t.Errorf("consistency 5 -> 8: %v", err)
	}
	es, err := st.LogEntries(ctx, 0, 100)
	if err != nil || len(es) != 8 {
		t.Fatalf("LogEntries: %d, %v", len(es), err)
	}
	for i := range es {
		if string(es[i]) != string(written[i]) {
			t.Errorf("leaf %d is %q, written %q", i, es[i], written[i])
		}
	}
}

// TestSequencersRace: two sequencers on one store, integrating while
// entries are written. A batch that loses the race fails with a conflict
// and changes nothing; in the end every entry is in the tree once, in an
// order that one checkpoint proves.
func TestSequencersRace(t *testing.T) {
	a, st, v := sequencerOn(t)
	b := &transparency.Sequencer{Store: st, Signer: a.Signer, MaxBatch: 3}
	a.MaxBatch = 3
	ctx := t.Context()
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for _, s := range []*transparency.Sequencer{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 40 {
				if _, _, err := s.Integrate(ctx); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := range 60 {
		if err := st.AppendLogEntry(ctx, fmt.Appendf(nil, "entry %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, acme.ErrConflict) {
			t.Errorf("Integrate: %v, want only conflicts", err)
		}
	}
	for range 60 { // each call integrates at least one entry, or none is left
		_, n, err := a.Integrate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	es, err := st.LogEntries(ctx, 0, 100)
	if err != nil || len(es) != 60 {
		t.Fatalf("LogEntries: %d, %v; want all 60", len(es), err)
	}
	seen := map[string]bool{}
	for _, e := range es {
		if seen[string(e)] {
			t.Errorf("%q integrated twice", e)
		}
		seen[string(e)] = true
	}
	head(t, st, v, es)
}

// TestSequencerRefusesAnotherKey: a sequencer whose key does not verify
// the log's latest checkpoint (another replica's key, another origin)
// integrates nothing, and the entries stay pending for the right one;
// Integrated sees each stored batch.
func TestSequencerRefusesAnotherKey(t *testing.T) {
	seq, st, v := sequencerOn(t)
	ctx := t.Context()
	var seen int
	seq.Verifier, seq.Integrated = v, func(b []transparency.PendingEntry) { seen += len(b) }
	for _, e := range entries(0, 3) {
		if err := st.AppendLogEntry(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if size, n, err := seq.Integrate(ctx); err != nil || size != 3 || n != 3 || seen != 3 {
		t.Fatalf("Integrate = %d, %d, %v (Integrated saw %d), want 3, 3", size, n, err, seen)
	}
	signer, ov := newLogKey(t)
	intruder := &transparency.Sequencer{Store: st, Signer: signer, Verifier: ov}
	if err := st.AppendLogEntry(ctx, entries(3, 1)[0]); err != nil {
		t.Fatal(err)
	}
	if size, n, err := intruder.Integrate(ctx); err == nil || n != 0 || size != 3 {
		t.Fatalf("another key's Integrate = %d, %d, %v; want a refusal at size 3", size, n, err)
	}
	if size, n, err := seq.Integrate(ctx); err != nil || size != 4 || n != 1 {
		t.Fatalf("the log key's Integrate after the refusal = %d, %d, %v; want 4, 1", size, n, err)
	}
	if got, err := transparency.EntryTime([]byte(`{"v":1,"time":"2026-12-07T05:00:00Z"}`)); err != nil || got.Year() != 2026 {
		t.Errorf("EntryTime = %v, %v", got, err)
	}
	if _, err := transparency.EntryTime([]byte(`{"v":1}`)); err == nil {
		t.Error("EntryTime of an entry without a time: no error")
	}
}
