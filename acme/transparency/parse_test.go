// SPDX-License-Identifier: Apache-2.0

package transparency_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/weir-pki/weir/acme/transparency"
)

const goodHash = "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="

func TestParseCheckpoint(t *testing.T) {
	for _, tc := range []struct {
		name, text, err string
	}{
		{"good", "ca.weir.test/log\n5\n" + goodHash + "\n", ""},
		{"extension", "ca.weir.test/log\n5\n" + goodHash + "\nts 1700000000\n", ""},
		{"no final newline", "ca.weir.test/log\n5\n" + goodHash, "ending with a newline"},
		{"two lines", "ca.weir.test/log\n5\n", "lines, want an origin"},
		{"empty origin", "\n5\n" + goodHash + "\n", "empty origin"},
		{"negative size", "o\n-1\n" + goodHash + "\n", "not a decimal tree size"},
		{"size with a plus", "o\n+5\n" + goodHash + "\n", "not a decimal tree size"},
		{"size with zeros", "o\n05\n" + goodHash + "\n", "not a decimal tree size"},
		{"short hash", "o\n5\nAAAA\n", "not 32 bytes"},
		{"not base64", "o\n5\n!!!!\n", "not 32 bytes"},
		{"empty extension", "o\n5\n" + goodHash + "\n\n", "empty extension"},
		{"not UTF-8", "o\xff\n5\n" + goodHash + "\n", "not UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := transparency.ParseCheckpoint(tc.text)
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if c.String() != tc.text {
					t.Errorf("String() = %q, want the text parsed, %q", c.String(), tc.text)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v, want %q", err, tc.err)
			}
		})
	}
}

func TestTilePaths(t *testing.T) {
	for _, tc := range []struct {
		tile tlog.Tile
		path string
	}{
		{tlog.Tile{H: 8, L: 0, N: 0, W: 256}, "tile/0/000"},
		{tlog.Tile{H: 8, L: 0, N: 1234067, W: 256}, "tile/0/x001/x234/067"},
		{tlog.Tile{H: 8, L: 2, N: 5, W: 17}, "tile/2/005.p/17"},
		{tlog.Tile{H: 8, L: -1, N: 1000, W: 256}, "tile/entries/x001/000"},
		{tlog.Tile{H: 8, L: -1, N: 3, W: 1}, "tile/entries/003.p/1"},
	} {
		if got := transparency.TilePath(tc.tile); got != tc.path {
			t.Errorf("TilePath(%+v) = %q, want %q", tc.tile, got, tc.path)
		}
		got, err := transparency.ParseTilePath(tc.path)
		if err != nil || got != tc.tile {
			t.Errorf("ParseTilePath(%q) = %+v, %v; want %+v", tc.path, got, err, tc.tile)
		}
	}
	for _, bad := range []string{
		"", "tile", "tile/", "tile/0", "tile/0/0", "tile/0/0000", "tile/0/x000/001", "tile/0/000.p/256",
		"tile/0/000.p/0", "tile/8/0/000", "tile/data/000", "tile/entries/000.p/", "tiles/0/000", "tile/-1/000",
		"tile/0/001/", "/tile/0/000",
	} {
		if tile, err := transparency.ParseTilePath(bad); err == nil {
			t.Errorf("ParseTilePath(%q) = %+v, want an error", bad, tile)
		}
	}
}

func TestEntryBundles(t *testing.T) {
	es := [][]byte{[]byte("a"), {}, bytes.Repeat([]byte("x"), 65535)}
	b, err := transparency.EntryBundle(es)
	if err != nil {
		t.Fatal(err)
	}
	got, err := transparency.ParseEntryBundle(b)
	if err != nil || len(got) != len(es) {
		t.Fatalf("ParseEntryBundle: %d entries, %v", len(got), err)
	}
	for i := range es {
		if !bytes.Equal(got[i], es[i]) {
			t.Errorf("entry %d differs", i)
		}
	}
	if _, err := transparency.EntryBundle([][]byte{make([]byte, 65536)}); err == nil {
		t.Error("an entry of 65,536 bytes was bundled")
	}
	if _, err := transparency.EntryBundle(make([][]byte, 257)); err == nil {
		t.Error("257 entries were bundled")
	}
	for _, bad := range [][]byte{{0}, {0, 5, 'a'}, bytes.Repeat([]byte{0, 0}, 257)} {
		if _, err := transparency.ParseEntryBundle(bad); err == nil {
			t.Errorf("ParseEntryBundle(%x) succeeded", bad)
		}
	}
	if got := transparency.EntryTile(600, 700); got != (tlog.Tile{H: 8, L: -1, N: 2, W: 188}) {
		t.Errorf("EntryTile(600, 700) = %+v", got)
	}
}

// TestCheckpointKeys: a checkpoint opens only with the log's own key and
// origin; a log key must be Ed25519.
func TestCheckpointKeys(t *testing.T) {
	signer, verifier := logKey(t, "ca.weir.test/log")
	_, other := logKey(t, "ca.weir.test/log")
	c := transparency.Checkpoint{Origin: "ca.weir.test/log", Size: 7, Hash: tlog.RecordHash([]byte("x"))}
	b, err := transparency.SignCheckpoint(c, signer)
	if err != nil {
		t.Fatal(err)
	}
	got, err := transparency.OpenCheckpoint(b, verifier)
	if err != nil || got.Size != 7 || got.Hash != c.Hash {
		t.Fatalf("OpenCheckpoint = %+v, %v", got, err)
	}
	if _, err := transparency.OpenCheckpoint(b, other); err == nil {
		t.Error("a checkpoint opened with another key of the same name")
	}
	tampered := bytes.Replace(b, []byte("\n7\n"), []byte("\n8\n"), 1)
	if _, err := transparency.OpenCheckpoint(tampered, verifier); err == nil {
		t.Error("a checkpoint whose size was edited opened")
	}
	c.Origin = "elsewhere.test/log"
	b, _ = transparency.SignCheckpoint(c, signer)
	if _, err := transparency.OpenCheckpoint(b, verifier); err == nil || !strings.Contains(err.Error(), "origin") {
		t.Errorf("a checkpoint of another origin: %v, want refused for its origin", err)
	}
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if _, _, err := transparency.NewNoteSigner("ca.weir.test/log", ec); err == nil || !strings.Contains(err.Error(), "Ed25519") {
		t.Errorf("an ECDSA log key: %v, want refused", err)
	}
}
