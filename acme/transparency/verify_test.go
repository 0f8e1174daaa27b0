// SPDX-License-Identifier: Apache-2.0

package transparency_test

import (
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weir-pki/weir/acme/transparency"
)

// TestVerifyLogGood: a log laid out in a directory, and the log NewHandler
// serves from a store, verify in full, with the checkpoints held from
// when they were smaller.
func TestVerifyLogGood(t *testing.T) {
	es := logEntries(t, 0, 600)
	signer, v := logKey(t, "ca.weir.test/log")
	cp300 := writeLogDir(t, t.TempDir(), es[:300], signer)
	dir := t.TempDir()
	cp600 := writeLogDir(t, dir, es, signer)
	rep, err := transparency.VerifyLog(t.Context(), transparency.DirSource(dir), v, [][]byte{cp300, cp600})
	if err != nil {
		t.Fatalf("VerifyLog: %v", err)
	}
	if rep.Size != 600 || rep.Checkpoints != 2 || rep.HashTiles != 4 || rep.Root != rfcRoot(es) ||
		rep.Kinds[transparency.KindIssued] != 200 || rep.Kinds[transparency.KindRevoked] != 200 || rep.Kinds[transparency.KindEvent] != 200 {
		t.Fatalf("the report %+v", rep)
	}

	st, _, sv := sequencedLog(t, es[:517])
	held, err := st.LogCheckpoint(t.Context(), 300)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/log/", http.StripPrefix("/log", transparency.NewHandler(st)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	rep, err = transparency.VerifyLog(t.Context(), transparency.HTTPSource{Base: srv.URL + "/log/", Client: srv.Client()}, sv, [][]byte{held})
	if err != nil {
		t.Fatalf("VerifyLog of the served log: %v", err)
	}
	if rep.Size != 517 || rep.Checkpoints != 1 || rep.Root != rfcRoot(es[:517]) {
		t.Fatalf("the served log's report %+v", rep)
	}
	_, err = transparency.VerifyLog(t.Context(), transparency.HTTPSource{Base: srv.URL + "/elsewhere", Client: srv.Client()}, sv, nil)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "reading the log's checkpoint: GET "+srv.URL+"/elsewhere/checkpoint: 404") {
		t.Fatalf("VerifyLog of a URL with no log: %v", err)
	}
}

// TestVerifyLogTampered: each way of altering a log, or of handing over
// another one, fails the audit with what is wrong and where.
func TestVerifyLogTampered(t *testing.T) {
	es := logEntries(t, 0, 600)
	signer, v := logKey(t, "ca.weir.test/log")
	foreign, _ := logKey(t, "ca.weir.test/log")
	cp400 := writeLogDir(t, t.TempDir(), es[:400], signer)
	cp600 := writeLogDir(t, t.TempDir(), es, signer)
	rewritten := logEntries(t, 300, 1)[0] // another valid entry 300
	without := slices.Delete(slices.Clone(es), 300, 301)
	with := slices.Insert(slices.Clone(es), 300, rewritten)
	changed := slices.Clone(es)
	changed[300] = rewritten

	// good is the directory of the good log; edit changes it.
	good := func(t *testing.T) string {
		dir := t.TempDir()
		writeLogDir(t, dir, es, signer)
		return dir
	}
	bundle := func(t *testing.T, dir, path string, entries [][]byte) {
		b, err := transparency.EntryBundle(entries)
		if err != nil {
			t.Fatal(err)
		}
		put(t, dir, path, b)
	}
	flip := func(t *testing.T, dir, path string, at int) {
		f := filepath.Join(dir, filepath.FromSlash(path))
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b[at] ^= 1
		put(t, dir, path, b)
	}
	for _, tc := range []struct {
		name string
		dir  func(t *testing.T) string
		held [][]byte
		want string
	}{
		{"truncated and re-signed, against a checkpoint held", func(t *testing.T) string {
			dir := t.TempDir()
			writeLogDir(t, dir, es[:500], signer)
			return dir
		}, [][]byte{cp400, cp600}, "the log is smaller than a checkpoint you hold: rewound (the log's size 500, held checkpoint 2's 600)"},
		{"an entry deleted from its bundle", func(t *testing.T) string {
			dir := good(t)
			bundle(t, dir, "tile/entries/001", without[256:511])
			return dir
		}, nil, "entry bundle tile/entries/001 holds 255 entries, the checkpoint's tree of size 600 has 256 there: an entry was deleted or inserted"},
		{"an entry inserted in the last bundle", func(t *testing.T) string {
			dir := good(t)
			bundle(t, dir, "tile/entries/002.p/88", append(slices.Clone(es[512:]), rewritten))
			return dir
		}, nil, "entry bundle tile/entries/002.p/88 holds 89 entries, the checkpoint's tree of size 600 has 88 there"},
		{"an entry rewritten in its bundle", func(t *testing.T) string {
			dir := good(t)
			bundle(t, dir, "tile/entries/001", changed[256:512])
			return dir
		}, nil, "hash tile tile/0/001 differs from the tree of the entries served at the hash of entry 300: the tile or the entry was altered"},
		{"an entry rewritten with its tiles, the checkpoint kept", func(t *testing.T) string {
			dir := t.TempDir()
			writeLogDir(t, dir, changed, signer)
			put(t, dir, "checkpoint", cp600)
			return dir
		}, nil, "the entries are not the ones the checkpoint signs"},
		{"an entry rewritten, the tree rebuilt and re-signed", func(t *testing.T) string {
			dir := t.TempDir()
			writeLogDir(t, dir, changed, signer)
			return dir
		}, [][]byte{cp400}, "the log's tree at size 400 has root"},
		{"the same, against the checkpoint of its size", func(t *testing.T) string {
			dir := t.TempDir()
			writeLogDir(t, dir, changed, signer)
			return dir
		}, [][]byte{cp600}, "held checkpoint 1 of that size"},
		{"an entry deleted, the tree rebuilt and re-signed", func(t *testing.T) string {
			dir := t.TempDir()
			writeLogDir(t, dir, without, signer)
			return dir
		}, [][]byte{cp400}, "the log's history was rewritten"},
		{"an entry inserted, the tree rebuilt and re-signed", func(t *testing.T) string {
			dir := t.TempDir()
			writeLogDir(t, dir, with, signer)
			return dir
		}, [][]byte{cp600}, "the log's tree at size 600 has root"},
		{"the checkpoint's signature broken", func(t *testing.T) string {
			dir := good(t)
			put(t, dir, "checkpoint", []byte(strings.Replace(string(cp600), "\n600\n", "\n601\n", 1)))
			return dir
		}, nil, "the log's checkpoint: invalid signature"},
		{"the checkpoint signed by another key", func(t *testing.T) string {
			dir := t.TempDir()
			writeLogDir(t, dir, es, foreign)
			return dir
		}, nil, "the log's checkpoint: note has no verifiable signatures"},
		{"a level-0 tile altered", func(t *testing.T) string {
			dir := good(t)
			flip(t, dir, "tile/0/000", 5*32+7)
			return dir
		}, nil, "hash tile tile/0/000 differs from the tree of the entries served at the hash of entry 5"},
		{"a level-1 tile altered", func(t *testing.T) string {
			dir := good(t)
			flip(t, dir, "tile/1/000.p/2", 40)
			return dir
		}, nil, "hash tile tile/1/000.p/2 differs from the tree of the entries served at hash 1 of level 8"},
		{"a tile cut short", func(t *testing.T) string {
			dir := good(t)
			put(t, dir, "tile/0/002.p/88", make([]byte, 87*32))
			return dir
		}, nil, "hash tile tile/0/002.p/88 is 2784 bytes, want 2816"},
		{"a tile missing", func(t *testing.T) string {
			dir := good(t)
			if err := os.Remove(filepath.Join(dir, "tile", "0", "001")); err != nil {
				t.Fatal(err)
			}
			return dir
		}, nil, "hash tile tile/0/001: open "},
		{"an entry that does not parse", func(t *testing.T) string {
			dir := good(t)
			bad := slices.Clone(es[:256])
			bad[10] = []byte(`{"v":1}`)
			bundle(t, dir, "tile/entries/000", bad)
			return dir
		}, nil, "entry 10 (in tile/entries/000): "},
		{"a held checkpoint of another key", good, [][]byte{cp400, writeLogDir(t, t.TempDir(), es[:10], foreign)},
			"held checkpoint 2: checkpoint: note has no verifiable signatures"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := transparency.VerifyLog(t.Context(), transparency.DirSource(tc.dir(t)), v, tc.held)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("VerifyLog = %+v, %v; want %q", rep, err, tc.want)
			}
		})
	}
}

// TestSources: what a source cannot read is an error saying what and
// where: a status other than 200 or 404, a file larger than any tile, a
// path out of a mirror's directory.
func TestSources(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/log/tile/entries/000" {
			w.Write(make([]byte, 256*(2+65535)+1))
			return
		}
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	src := transparency.HTTPSource{Base: srv.URL + "/log", Client: srv.Client()}
	if _, err := src.ReadFile(t.Context(), "checkpoint"); err == nil || err.Error() != "GET "+srv.URL+"/log/checkpoint: 503 Service Unavailable" {
		t.Errorf("a 503: %v", err)
	}
	if _, err := src.ReadFile(t.Context(), "tile/entries/000"); err == nil || !strings.Contains(err.Error(), "the body is over 16777472 bytes") {
		t.Errorf("a file too large: %v", err)
	}
	dir := t.TempDir()
	put(t, dir, "checkpoint", []byte("x"))
	if b, err := transparency.DirSource(dir).ReadFile(t.Context(), "checkpoint"); err != nil || string(b) != "x" {
		t.Errorf("DirSource: %q, %v", b, err)
	}
	if _, err := transparency.DirSource(filepath.Join(dir, "sub")).ReadFile(t.Context(), "../checkpoint"); err == nil || !strings.Contains(err.Error(), `"../checkpoint" is not a path within the log's directory`) {
		t.Errorf("DirSource(../checkpoint): %v", err)
	}
}
