// SPDX-License-Identifier: Apache-2.0

package transparency

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"

	"golang.org/x/mod/sumdb/tlog"
)

// TileHeight is the height of the tlog-tiles layout's tiles: 2^8 = 256
// hashes in a full hash tile, 256 entries in a full entry bundle.
const TileHeight = 8

// CheckpointPath is the path of the latest checkpoint in the tlog-tiles
// layout.
const CheckpointPath = "checkpoint"

// TilePath is the path of t in the tlog-tiles layout: tile/<L>/<N>[.p/<W>]
// for a hash tile, tile/entries/<N>[.p/<W>] for an entry bundle (t.L is
// -1). t.H must be TileHeight.
func TilePath(t tlog.Tile) string {
	p := "tile/" + strings.TrimPrefix(t.Path(), fmt.Sprintf("tile/%d/", TileHeight))
	if t.L == -1 {
		p = "tile/entries/" + strings.TrimPrefix(p, "tile/data/")
	}
	return p
}

// ParseTilePath is the tile of a tlog-tiles path; only the canonical
// spelling of each tile is accepted, as TilePath writes it.
func ParseTilePath(path string) (tlog.Tile, error) {
	rest, ok := strings.CutPrefix(path, "tile/")
	if !ok {
		return tlog.Tile{}, fmt.Errorf("%q is not a tile path", path)
	}
	if r, ok := strings.CutPrefix(rest, "entries/"); ok {
		rest = "data/" + r
	}
	t, err := tlog.ParseTilePath(fmt.Sprintf("tile/%d/%s", TileHeight, rest))
	if err != nil || TilePath(t) != path {
		return tlog.Tile{}, fmt.Errorf("%q is not a tile path", path)
	}
	return t, nil
}

// maxEntry is the largest entry an entry bundle can hold: its length is
// a big-endian uint16.
const maxEntry = math.MaxUint16

// EntryBundle is the entry bundle of entries (at most 256, in order):
// each entry after its length as a big-endian uint16.
func EntryBundle(entries [][]byte) ([]byte, error) {
	if len(entries) > 1<<TileHeight {
		return nil, fmt.Errorf("entry bundle: %d entries, at most %d", len(entries), 1<<TileHeight)
	}
	n := 0
	for i, e := range entries {
		if len(e) > maxEntry {
			return nil, fmt.Errorf("entry bundle: entry %d is %d bytes, at most %d", i, len(e), maxEntry)
		}
		n += 2 + len(e)
	}
	b := make([]byte, 0, n)
	for _, e := range entries {
		b = binary.BigEndian.AppendUint16(b, uint16(len(e)))
		b = append(b, e...)
	}
	return b, nil
}

// ParseEntryBundle is the entries of an entry bundle.
func ParseEntryBundle(b []byte) ([][]byte, error) {
	var out [][]byte
	for len(b) > 0 {
		if len(b) < 2 {
			return nil, errors.New("entry bundle: a truncated length")
		}
		n := int(binary.BigEndian.Uint16(b))
		if len(b) < 2+n {
			return nil, fmt.Errorf("entry bundle: entry %d claims %d bytes, %d left", len(out), n, len(b)-2)
		}
		out = append(out, b[2:2+n])
		b = b[2+n:]
	}
	if len(out) > 1<<TileHeight {
		return nil, fmt.Errorf("entry bundle: %d entries, at most %d", len(out), 1<<TileHeight)
	}
	return out, nil
}

// EntryTile is the entry bundle holding entry i of a tree of size
// entries (i < size): its index is i/256 and its width what the tree has
// of it, partial at the tree's right edge.
func EntryTile(i, size int64) tlog.Tile {
	n := i >> TileHeight
	return tlog.Tile{H: TileHeight, L: -1, N: n, W: int(min(size-n<<TileHeight, 1<<TileHeight))}
}
