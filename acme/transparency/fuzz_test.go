// SPDX-License-Identifier: Apache-2.0

package transparency_test

import (
	"bytes"
	"testing"

	"github.com/weir-pki/weir/acme/transparency"
)

// The parsers of what a log serves, fuzzed: whatever they accept is what
// the writer would write, byte for byte, so that a monitor and the log
// read one form.

func FuzzParseCheckpoint(f *testing.F) {
	f.Add("ca.weir.test/log\n5\n" + goodHash + "\n")
	f.Add("o\n0\n" + goodHash + "\next\n")
	f.Fuzz(func(t *testing.T, text string) {
		c, err := transparency.ParseCheckpoint(text)
		if err == nil && c.String() != text {
			t.Fatalf("parsed %q, writes %q", text, c.String())
		}
	})
}

func FuzzParseTilePath(f *testing.F) {
	for _, p := range []string{"tile/0/000", "tile/0/x001/x234/067", "tile/2/005.p/17", "tile/entries/003.p/1"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, path string) {
		tile, err := transparency.ParseTilePath(path)
		if err == nil && transparency.TilePath(tile) != path {
			t.Fatalf("parsed %q as %+v, which writes %q", path, tile, transparency.TilePath(tile))
		}
	})
}

func FuzzParseEntryBundle(f *testing.F) {
	f.Add([]byte{0, 1, 'a', 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		es, err := transparency.ParseEntryBundle(b)
		if err != nil {
			return
		}
		again, err := transparency.EntryBundle(es)
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("parsed %x into %d entries, which bundle as %x (%v)", b, len(es), again, err)
		}
	})
}
