// SPDX-License-Identifier: Apache-2.0

package transparency_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/weir-pki/weir/acme/transparency"
)

// get is one request to srv: its status, headers and body.
func get(t *testing.T, srv *httptest.Server, method, path string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, res.Header, b
}

// TestHandler: the served log of 600 entries, integrated by the Sequencer
// into a SQLite store: its checkpoint, full and partial hash tiles of
// levels 0 and 1 and entry bundles, byte for byte what tlog computes from
// the entries; tiles beyond the tree, malformed paths and other methods
// refused with the reason.
func TestHandler(t *testing.T) {
	es := logEntries(t, 0, 600)
	st, _, _ := sequencedLog(t, es)
	srv := httptest.NewServer(transparency.NewHandler(st))
	t.Cleanup(srv.Close)
	m := &memLog{}
	m.add(t, es...)
	_, cp, err := st.LogHead(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	hashTile := func(l, n int64, w int) []byte {
		b, err := tlog.ReadTileData(tlog.Tile{H: transparency.TileHeight, L: int(l), N: n, W: w}, m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	bundle := func(from, to int) []byte {
		b, err := transparency.EntryBundle(es[from:to])
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	const (
		full    = "public, max-age=31536000, immutable"
		partial = "public, max-age=10"
		octets  = "application/octet-stream"
		text    = "text/plain; charset=utf-8"
	)
	for _, tc := range []struct {
		method, path string
		status       int
		body         []byte // the exact body of a 200
		cache, ctype string
		reason       string // in the body of an error
	}{
		{"GET", "/checkpoint", 200, cp, "no-store", text, ""},
		{"HEAD", "/checkpoint", 200, nil, "no-store", text, ""},
		{"GET", "/tile/0/000", 200, hashTile(0, 0, 256), full, octets, ""},
		{"GET", "/tile/0/001", 200, hashTile(0, 1, 256), full, octets, ""},
		{"GET", "/tile/0/002.p/88", 200, hashTile(0, 2, 88), partial, octets, ""},
		{"GET", "/tile/0/002.p/50", 200, hashTile(0, 2, 50), partial, octets, ""},
		{"GET", "/tile/0/000.p/7", 200, hashTile(0, 0, 7), partial, octets, ""},
		{"GET", "/tile/1/000.p/2", 200, hashTile(1, 0, 2), partial, octets, ""},
		{"GET", "/tile/entries/000", 200, bundle(0, 256), full, octets, ""},
		{"GET", "/tile/entries/001", 200, bundle(256, 512), full, octets, ""},
		{"GET", "/tile/entries/002.p/88", 200, bundle(512, 600), partial, octets, ""},
		{"GET", "/tile/entries/002.p/3", 200, bundle(512, 515), partial, octets, ""},
		{"HEAD", "/tile/0/000", 200, nil, full, octets, ""},

		{"GET", "/tile/0/002.p/89", 404, nil, "", text, "tile/0/002.p/89 lies beyond the log's tree of size 600"},
		{"GET", "/tile/0/002", 404, nil, "", text, "beyond the log's tree of size 600"},
		{"GET", "/tile/0/003.p/1", 404, nil, "", text, "beyond"},
		{"GET", "/tile/1/000.p/3", 404, nil, "", text, "beyond"},
		{"GET", "/tile/1/000", 404, nil, "", text, "beyond"},
		{"GET", "/tile/2/000.p/1", 404, nil, "", text, "beyond"},
		{"GET", "/tile/entries/002.p/89", 404, nil, "", text, "beyond"},
		{"GET", "/tile/entries/003.p/1", 404, nil, "", text, "beyond"},
		{"GET", "/tile/0/0", 404, nil, "", text, `"tile/0/0" is not a tile path`},
		{"GET", "/tile/0/000.p/256", 404, nil, "", text, "is not a tile path"},
		{"GET", "/tile/0/000.p/0", 404, nil, "", text, "is not a tile path"},
		{"GET", "/tile/0/000.p/007", 404, nil, "", text, "is not a tile path"},
		{"GET", "/tile/8/0/000", 404, nil, "", text, "is not a tile path"},
		{"GET", "/tile/data/000", 404, nil, "", text, "is not a tile path"},
		{"GET", "/tile/entries/x", 404, nil, "", text, "is not a tile path"},
		{"GET", "/tile/-1/000", 404, nil, "", text, "is not a tile path"},
		{"GET", "/checkpoint/", 404, nil, "", text, "want checkpoint, tile/<L>/<N>"},
		{"GET", "/", 404, nil, "", text, "is not a tile path"},
		{"POST", "/checkpoint", 405, nil, "", text, "read-only"},
		{"PUT", "/tile/0/000", 405, nil, "", text, "read-only"},
	} {
		status, h, body := get(t, srv, tc.method, tc.path)
		where := tc.method + " " + tc.path
		if status != tc.status {
			t.Errorf("%s: %d, want %d: %s", where, status, tc.status, body)
			continue
		}
		if ct := h.Get("Content-Type"); ct != tc.ctype {
			t.Errorf("%s: Content-Type %q, want %q", where, ct, tc.ctype)
		}
		switch {
		case status != 200:
			if !strings.Contains(string(body), tc.reason) || strings.Count(string(body), "\n") != 1 {
				t.Errorf("%s: %q, want one line with %q", where, body, tc.reason)
			}
			if status == 405 && h.Get("Allow") != "GET, HEAD" {
				t.Errorf("%s: Allow %q", where, h.Get("Allow"))
			}
		case tc.method == "HEAD":
			if len(body) != 0 || h.Get("Content-Length") == "" || h.Get("Content-Length") == "0" {
				t.Errorf("%s: body %d bytes, Content-Length %q", where, len(body), h.Get("Content-Length"))
			}
		default:
			if !bytes.Equal(body, tc.body) || len(body) == 0 {
				t.Errorf("%s: %d bytes that differ from the %d tlog computes", where, len(body), len(tc.body))
			}
		}
		if status == 200 && h.Get("Cache-Control") != tc.cache {
			t.Errorf("%s: Cache-Control %q, want %q", where, h.Get("Cache-Control"), tc.cache)
		}
	}
}

// TestHandlerEmptyLog: before the first checkpoint there is nothing to
// serve, and the client is told why.
func TestHandlerEmptyLog(t *testing.T) {
	_, st, _ := sequencerOn(t)
	srv := httptest.NewServer(transparency.NewHandler(st))
	t.Cleanup(srv.Close)
	for path, reason := range map[string]string{
		"/checkpoint":           "the log is empty: no checkpoint signed yet\n",
		"/tile/0/000.p/1":       "tile/0/000.p/1 lies beyond the log's tree of size 0\n",
		"/tile/entries/000.p/1": "tile/entries/000.p/1 lies beyond the log's tree of size 0\n",
	} {
		if status, _, body := get(t, srv, "GET", path); status != 404 || string(body) != reason {
			t.Errorf("GET %s: %d %q, want 404 %q", path, status, body, reason)
		}
	}
}

// failingStore is a store whose stored hashes cannot be read.
type failingStore struct{ transparency.Store }

func (failingStore) LogHashes(context.Context, []int64) ([][sha256.Size]byte, error) {
	return nil, errors.New("disk I/O error at /var/lib/weir/secret.db")
}

// TestHandlerStoreError: a store failure is a 500 whose text says nothing
// of the store.
func TestHandlerStoreError(t *testing.T) {
	st, _, _ := sequencedLog(t, logEntries(t, 0, 3))
	srv := httptest.NewServer(transparency.NewHandler(failingStore{st}))
	t.Cleanup(srv.Close)
	status, _, body := get(t, srv, "GET", "/tile/0/000.p/3")
	if status != 500 || string(body) != "internal error reading the log\n" {
		t.Fatalf("GET a tile of a failing store: %d %q", status, body)
	}
	if status, _, body := get(t, srv, "GET", "/tile/entries/000.p/3"); status != 200 || len(body) == 0 {
		t.Fatalf("GET an entry bundle (which needs no hash): %d %q", status, body)
	}
}
