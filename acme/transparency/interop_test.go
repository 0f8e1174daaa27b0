// SPDX-License-Identifier: Apache-2.0

package transparency_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/weir-pki/weir/acme/transparency"
)

// The interoperability check: torchwood, a tlog-tiles client weir did not
// write (the one the Go ecosystem's transparency logs and witnesses are
// built on), reads the log NewHandler serves, mounted as weir's public
// listener mounts it, under /log/.

// torchwoodOn is torchwood's tile fetcher and client of the log st serves.
func torchwoodOn(t *testing.T, st transparency.Store) (*torchwood.TileFetcher, *torchwood.Client) {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/log/", http.StripPrefix("/log", transparency.NewHandler(st)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f, err := torchwood.NewTileFetcher(srv.URL+"/log/", torchwood.WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	c, err := torchwood.NewClient(f)
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

// torchwoodTree fetches the checkpoint, checks its signature with the log's
// verifier key (note.Open) and parses it with torchwood's own parser.
func torchwoodTree(t *testing.T, f *torchwood.TileFetcher, v note.Verifier) tlog.Tree {
	t.Helper()
	raw, err := f.ReadEndpoint(t.Context(), "checkpoint")
	if err != nil {
		t.Fatal(err)
	}
	n, err := note.Open(raw, note.VerifierList(v))
	if err != nil {
		t.Fatalf("the served checkpoint's signature: %v", err)
	}
	c, err := torchwood.ParseCheckpoint(n.Text)
	if err != nil {
		t.Fatalf("torchwood does not parse the checkpoint: %v", err)
	}
	if c.Origin != v.Name() {
		t.Fatalf("origin %q, want %q", c.Origin, v.Name())
	}
	return c.Tree
}

// readAll reads every entry of tree through torchwood's client, which
// checks each entry bundle against the tree's hashes. Entries stops
// before a partial bundle the first time; the next call reads it.
func readAll(ctx context.Context, c *torchwood.Client, tree tlog.Tree) ([][]byte, error) {
	var got [][]byte
	for range 3 {
		for i, e := range c.Entries(ctx, tree, int64(len(got))) {
			if i != int64(len(got)) {
				break
			}
			got = append(got, bytes.Clone(e))
		}
		if err := c.Err(); err != nil || int64(len(got)) == tree.N {
			return got, err
		}
	}
	return got, nil
}

// TestTorchwoodReadsTheServedLog: torchwood verifies the checkpoint, reads
// every entry (checked against the tree), returns an entry with its
// inclusion proof, and its hash reader proves an entry; each entry is the
// one appended. The log is served from SQLite, and from PostgreSQL.
func TestTorchwoodReadsTheServedLog(t *testing.T) {
	es := logEntries(t, 0, 600)
	t.Run("sqlite", func(t *testing.T) {
		_, st, _ := sequencerOn(t)
		torchwoodReads(t, st, es)
	})
	t.Run("postgres", func(t *testing.T) { torchwoodReads(t, postgresStore(t), es) })
}

// torchwoodReads is TestTorchwoodReadsTheServedLog on st.
func torchwoodReads(t *testing.T, st transparency.Store, es [][]byte) {
	ctx := t.Context()
	_, v := sequenceInto(t, st, es)
	f, c := torchwoodOn(t, st)
	tree := torchwoodTree(t, f, v)
	if tree.N != 600 {
		t.Fatalf("tree size %d, want 600", tree.N)
	}
	got, err := readAll(ctx, c, tree)
	if err != nil {
		t.Fatalf("torchwood reading the entries: %v", err)
	}
	if len(got) != len(es) {
		t.Fatalf("torchwood read %d entries, want %d", len(got), len(es))
	}
	for i := range es {
		if !bytes.Equal(got[i], es[i]) {
			t.Fatalf("entry %d: torchwood read %q, appended %q", i, got[i], es[i])
		}
	}
	for _, i := range []int64{0, 255, 256, 599} {
		e, proof, err := c.Entry(ctx, tree, i)
		if err != nil {
			t.Fatalf("torchwood Entry(%d): %v", i, err)
		}
		if !bytes.Equal(e, es[i]) {
			t.Fatalf("torchwood Entry(%d) = %q, appended %q", i, e, es[i])
		}
		if err := tlog.CheckRecord(proof, tree.N, tree.Hash, i, tlog.RecordHash(e)); err != nil {
			t.Fatalf("entry %d: torchwood's inclusion proof: %v", i, err)
		}
	}
	hr := torchwood.TileHashReaderWithContext(ctx, tree, f)
	proof, err := tlog.ProveRecord(tree.N, 300, hr)
	if err != nil {
		t.Fatalf("proving entry 300 from the served tiles: %v", err)
	}
	if err := tlog.CheckRecord(proof, tree.N, tree.Hash, 300, tlog.RecordHash(es[300])); err != nil {
		t.Fatalf("entry 300: %v", err)
	}
	if err := tlog.CheckRecord(proof, tree.N, tree.Hash, 300, tlog.RecordHash(es[301])); err == nil {
		t.Fatal("entry 301 checks as leaf 300")
	}
}

// alteredStore serves entry 300 changed: what torchwood must catch.
type alteredStore struct{ transparency.Store }

func (s alteredStore) LogEntries(ctx context.Context, from int64, n int) ([][]byte, error) {
	es, err := s.Store.LogEntries(ctx, from, n)
	if err == nil && from <= 300 && 300 < from+int64(len(es)) {
		e := bytes.Clone(es[300-from])
		e[len(e)-2] ^= 1
		es[300-from] = e
	}
	return es, err
}

// TestTorchwoodRefusesAnAlteredEntry: torchwood's check of the entries is
// real: an entry served other than the tree hashed it is refused.
func TestTorchwoodRefusesAnAlteredEntry(t *testing.T) {
	st, _, v := sequencedLog(t, logEntries(t, 0, 600))
	f, c := torchwoodOn(t, alteredStore{st})
	tree := torchwoodTree(t, f, v)
	got, err := readAll(t.Context(), c, tree)
	if err == nil || len(got) > 300 {
		t.Fatalf("torchwood read %d entries past an altered entry 300 (err %v)", len(got), err)
	}
	if _, _, err := c.Entry(t.Context(), tree, 300); err == nil {
		t.Fatal("torchwood Entry(300) returned the altered entry")
	}
}
