// SPDX-License-Identifier: Apache-2.0

package transparency_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/weir-pki/weir/acme/transparency"
	"github.com/weir-pki/weir/acme/transparency/monitortest"
)

// serveLog serves m in the tlog-tiles layout, with its checkpoint signed
// by signer, as weir's public listener will.
func serveLog(t *testing.T, m *memLog, signer note.Signer) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := strings.TrimPrefix(r.URL.Path, "/")
		if path == transparency.CheckpointPath {
			c := transparency.Checkpoint{Origin: signer.Name(), Size: m.size(), Hash: m.root(t)}
			b, err := transparency.SignCheckpoint(c, signer)
			if err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			w.Write(b)
			return
		}
		tile, err := transparency.ParseTilePath(path)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		var data []byte
		if tile.L == -1 {
			start := tile.N << transparency.TileHeight
			data, err = transparency.EntryBundle(m.entries[start : start+int64(tile.W)])
		} else {
			data, err = tlog.ReadTileData(tile, m)
		}
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Write(data)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// httpTiles is a tlog.TileReader over HTTP at the tlog-tiles paths: the
// sumdb client code, reading a log it did not write.
type httpTiles struct {
	t    *testing.T
	base string
}

func (h httpTiles) Height() int { return transparency.TileHeight }

func (h httpTiles) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, tile := range tiles {
		b, err := h.get(transparency.TilePath(tile))
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

func (h httpTiles) SaveTiles([]tlog.Tile, [][]byte) {}

func (h httpTiles) get(path string) ([]byte, error) {
	res, err := http.Get(h.base + "/" + path)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", path, res.Status)
	}
	return io.ReadAll(res.Body)
}

// checkpoint reads the served checkpoint and opens it with the log's key.
func (h httpTiles) checkpoint(v note.Verifier) transparency.Checkpoint {
	h.t.Helper()
	b, err := h.get(transparency.CheckpointPath)
	if err != nil {
		h.t.Fatal(err)
	}
	c, err := transparency.OpenCheckpoint(b, v)
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

// logKey is a fresh log key (a crypto.Signer, as a key file or a token
// gives it) with its note signer and verifier.
func logKey(t *testing.T, name string) (note.Signer, note.Verifier) {
	s, v, _ := monitortest.NewLogKey(t, name)
	return s, v
}

// TestServedLogVerifies: the sumdb tlog client code reads the served log
// through the tlog-tiles paths, checks the signed checkpoint, an entry's
// inclusion (from its bundle) and the consistency of a later checkpoint
// with an earlier one; a log rewritten at the same size (a fork) fails
// the consistency check against the checkpoint held before.
func TestServedLogVerifies(t *testing.T) {
	signer, verifier := logKey(t, "ca.weir.test/log")
	m := &memLog{}
	m.add(t, entries(0, 300)...)
	srv := serveLog(t, m, signer)
	client := httpTiles{t: t, base: srv.URL}
	old := client.checkpoint(verifier)
	if old.Size != 300 {
		t.Fatalf("checkpoint size %d, want 300", old.Size)
	}
	m.add(t, entries(300, 333)...)
	cur := client.checkpoint(verifier)
	tree := tlog.Tree{N: cur.Size, Hash: cur.Hash}
	hr := tlog.TileHashReader(tree, client)

	// Entry 257, read from its bundle, is in the tree.
	bundle, err := client.get(transparency.TilePath(transparency.EntryTile(257, cur.Size)))
	if err != nil {
		t.Fatal(err)
	}
	es, err := transparency.ParseEntryBundle(bundle)
	if err != nil {
		t.Fatal(err)
	}
	e := es[257-256]
	if !bytes.Equal(e, m.entries[257]) {
		t.Fatalf("bundle entry %q, want %q", e, m.entries[257])
	}
	p, err := tlog.ProveRecord(cur.Size, 257, hr)
	if err != nil {
		t.Fatal(err)
	}
	if err := tlog.CheckRecord(p, cur.Size, cur.Hash, 257, tlog.RecordHash(e)); err != nil {
		t.Fatalf("inclusion of entry 257: %v", err)
	}
	// The new checkpoint extends the old one.
	tp, err := tlog.ProveTree(cur.Size, old.Size, hr)
	if err != nil {
		t.Fatal(err)
	}
	if err := tlog.CheckTree(tp, cur.Size, cur.Hash, old.Size, old.Hash); err != nil {
		t.Fatalf("consistency %d -> %d: %v", old.Size, cur.Size, err)
	}

	// A fork: entry 10 rewritten and the tree rebuilt, at the same size.
	forged := &memLog{}
	rewritten := append([][]byte{}, m.entries...)
	rewritten[10] = []byte(`{"type":"issuance","serial":"forged"}`)
	forged.add(t, rewritten...)
	fsrv := serveLog(t, forged, signer)
	fclient := httpTiles{t: t, base: fsrv.URL}
	fc := fclient.checkpoint(verifier)
	if fc.Size != cur.Size || fc.Hash == cur.Hash {
		t.Fatalf("the fork's checkpoint %d %v, want size %d with another root", fc.Size, fc.Hash, cur.Size)
	}
	fp, err := tlog.ProveTree(fc.Size, old.Size, tlog.TileHashReader(tlog.Tree{N: fc.Size, Hash: fc.Hash}, fclient))
	if err != nil {
		t.Fatal(err)
	}
	if err := tlog.CheckTree(fp, fc.Size, fc.Hash, old.Size, old.Hash); err == nil {
		t.Fatal("the fork's consistency proof checks against the checkpoint held before the rewrite")
	}
}
