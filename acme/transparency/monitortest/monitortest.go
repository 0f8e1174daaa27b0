// SPDX-License-Identifier: Apache-2.0

// Package monitortest serves a verifiable log as C2SP tlog-tiles from
// memory, for the tests of weir's log monitor (transparency.Monitor and
// "weir log monitor"): a test materialises a log (Files), serves it
// (Server) and swaps what is served for a tampered log to check that the
// monitor tells.
package monitortest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/weir-pki/weir/acme/transparency"
)

// Server is an httptest server serving a log's files at their tlog-tiles
// paths under URL; a path it does not hold is a 404.
type Server struct {
	// URL is the log's base URL.
	URL   string
	mu    sync.Mutex
	files map[string][]byte
	down  bool
}

// NewServer starts a server serving nothing yet; it stops with the test.
func NewServer(t testing.TB) *Server {
	s := &Server{files: map[string][]byte{}}
	srv := httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	t.Cleanup(srv.Close)
	s.URL = srv.URL + "/log"
	return s
}

// Serve replaces what the server serves with files (path to bytes).
func (s *Server) Serve(files map[string][]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files = files
}

// SetDown makes every request fail with 503 (down) or not.
func (s *Server) SetDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	b, ok := s.files[strings.TrimPrefix(r.URL.Path, "/log/")]
	down := s.down
	s.mu.Unlock()
	switch {
	case down:
		http.Error(w, "down for the test", http.StatusServiceUnavailable)
	case !ok:
		http.NotFound(w, r)
	default:
		w.Write(b)
	}
}

// NewLogKey generates a log key named origin: its signer and verifier,
// and the verifier key string a monitor is given.
func NewLogKey(t testing.TB, origin string) (note.Signer, note.Verifier, string) {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, vkey, err := transparency.NewNoteSigner(origin, key)
	if err != nil {
		t.Fatal(err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return signer, v, vkey
}

// EventEntries are n real entries, administrators' actions numbered from
// first (tag tells one run of entries from another).
func EventEntries(t testing.TB, tag string, first, n int) [][]byte {
	t.Helper()
	out := make([][]byte, n)
	for i := range out {
		data, err := json.Marshal(map[string]any{"n": first + i, "tag": tag})
		if err != nil {
			t.Fatal(err)
		}
		e, err := transparency.EncodeEntry(transparency.Entry{
			V:     transparency.EntryVersion,
			Kind:  transparency.KindEvent,
			Time:  time.Date(2026, 12, 7, 0, 0, first+i, 0, time.UTC),
			Actor: transparency.Actor{Kind: "admin", ID: "alice", Address: "192.0.2.7"},
			Event: &transparency.Event{Type: "tenant.update", Data: data},
		})
		if err != nil {
			t.Fatal(err)
		}
		out[i] = e
	}
	return out
}

// hashes are a tree's stored hashes, index by index.
type hashes []tlog.Hash

func (h hashes) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		if x < 0 || x >= int64(len(h)) {
			return nil, fmt.Errorf("no stored hash %d", x)
		}
		out[i] = h[x]
	}
	return out, nil
}

// Files materialises the log of entries as tlog-tiles: every hash tile
// and entry bundle of its tree (transparency.Append, tlog.ReadTileData,
// transparency.EntryBundle) and its checkpoint, signed by signers (the
// log's key first, then any witness's).
func Files(t testing.TB, entries [][]byte, signers ...note.Signer) map[string][]byte {
	t.Helper()
	stored, err := transparency.Append(0, entries, hashes(nil))
	if err != nil {
		t.Fatal(err)
	}
	size := int64(len(entries))
	files := map[string][]byte{}
	for _, tile := range tlog.NewTiles(transparency.TileHeight, 0, size) {
		data, err := tlog.ReadTileData(tile, hashes(stored))
		if err != nil {
			t.Fatal(err)
		}
		files[transparency.TilePath(tile)] = data
		if tile.L == 0 {
			start := tile.N << transparency.TileHeight
			b, err := transparency.EntryBundle(entries[start : start+int64(tile.W)])
			if err != nil {
				t.Fatal(err)
			}
			files[transparency.TilePath(transparency.EntryTile(start, size))] = b
		}
	}
	root, err := tlog.TreeHash(size, hashes(stored))
	if err != nil {
		t.Fatal(err)
	}
	files[transparency.CheckpointPath] = Checkpoint(t, size, root, signers...)
	return files
}

// Checkpoint is the checkpoint of the tree of size with root, signed by
// signers (the first one's name is the origin).
func Checkpoint(t testing.TB, size int64, root tlog.Hash, signers ...note.Signer) []byte {
	t.Helper()
	c := transparency.Checkpoint{Origin: signers[0].Name(), Size: size, Hash: root}
	b, err := transparency.SignCheckpoint(c, signers...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
