// SPDX-License-Identifier: Apache-2.0

package transparency

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// VerifyReport is what VerifyLog checked.
type VerifyReport struct {
	// Size is the size of the checkpoint's tree, every entry of which was
	// read and parsed.
	Size int64
	// Root is the tree's root hash, recomputed and equal to the
	// checkpoint's.
	Root tlog.Hash
	// Kinds counts the entries by kind (KindIssued, KindRevoked,
	// KindEvent).
	Kinds map[string]int64
	// HashTiles is how many hash tiles were compared with the recomputed
	// ones.
	HashTiles int
	// Checkpoints is how many checkpoints the caller held were found
	// consistent with the log.
	Checkpoints int
	// Duration is how long the audit took.
	Duration time.Duration
}

// VerifyLog audits a whole log, served or mirrored, against the log's
// verifier key: the checkpoint is signed by it; every entry of its tree is
// read from the entry bundles and parses (ParseEntry); every stored hash
// is recomputed from the entries, and each hash tile served is the
// recomputed one byte for byte; the recomputed root is the checkpoint's;
// and each checkpoint in trusted (signed notes the caller kept from
// earlier, opened with logKey) is of the same tree: the same root at its
// size. A log grown from a checkpoint held verifies; one that lost,
// gained or changed an entry before it, was rebuilt, or shrank below it
// fails with what differs and where.
//
// Memory is bounded by the stored hashes (about 2 × 32 bytes an entry):
// entry bundles are read one at a time and not kept.
func VerifyLog(ctx context.Context, src TileSource, logKey note.Verifier, trusted [][]byte) (VerifyReport, error) {
	start := time.Now()
	raw, err := src.ReadFile(ctx, CheckpointPath)
	if err != nil {
		return VerifyReport{}, fmt.Errorf("reading the log's checkpoint: %w", err)
	}
	c, err := OpenCheckpoint(raw, logKey)
	if err != nil {
		return VerifyReport{}, fmt.Errorf("the log's %w", err)
	}
	held := make([]Checkpoint, len(trusted))
	for i, b := range trusted {
		if held[i], err = OpenCheckpoint(b, logKey); err != nil {
			return VerifyReport{}, fmt.Errorf("held checkpoint %d: %w", i+1, err)
		}
		if held[i].Size > c.Size {
			return VerifyReport{}, fmt.Errorf("the log is smaller than a checkpoint you hold: rewound (the log's size %d, held checkpoint %d's %d)", c.Size, i+1, held[i].Size)
		}
	}
	rep := VerifyReport{Size: c.Size, Kinds: map[string]int64{}}
	hashes, err := readEntries(ctx, src, c.Size, rep.Kinds)
	if err != nil {
		return VerifyReport{}, err
	}
	if rep.HashTiles, err = compareHashTiles(ctx, src, c.Size, hashes); err != nil {
		return VerifyReport{}, err
	}
	if rep.Root, err = tlog.TreeHash(c.Size, hashes); err != nil {
		return VerifyReport{}, fmt.Errorf("the root of size %d: %w", c.Size, err)
	}
	if rep.Root != c.Hash {
		return VerifyReport{}, fmt.Errorf("the entries' tree has root %s, the checkpoint %s: the entries are not the ones the checkpoint signs", b64(rep.Root), b64(c.Hash))
	}
	for i, h := range held {
		root, err := tlog.TreeHash(h.Size, hashes)
		if err != nil {
			return VerifyReport{}, fmt.Errorf("the root of size %d: %w", h.Size, err)
		}
		if root != h.Hash {
			return VerifyReport{}, fmt.Errorf("the log's tree at size %d has root %s, held checkpoint %d of that size %s: the log's history was rewritten", h.Size, b64(root), i+1, b64(h.Hash))
		}
		rep.Checkpoints++
	}
	rep.Duration = time.Since(start)
	return rep, nil
}

// readEntries reads and parses the entries of the tree of size from
// src's entry bundles, counts them by kind and returns the tree's stored
// hashes.
func readEntries(ctx context.Context, src TileSource, size int64, kinds map[string]int64) (hashList, error) {
	hashes := make(hashList, 0, min(tlog.StoredHashCount(size), 1<<20))
	for n := int64(0); n<<TileHeight < size; n++ {
		tile := EntryTile(n<<TileHeight, size)
		path := TilePath(tile)
		b, err := src.ReadFile(ctx, path)
		if err != nil {
			return nil, fmt.Errorf("entry bundle %s: %w", path, err)
		}
		es, err := ParseEntryBundle(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(es) != tile.W {
			return nil, fmt.Errorf("entry bundle %s holds %d entries, the checkpoint's tree of size %d has %d there: an entry was deleted or inserted", path, len(es), size, tile.W)
		}
		for j, e := range es {
			i := n<<TileHeight + int64(j)
			parsed, err := ParseEntry(e)
			if err != nil {
				return nil, fmt.Errorf("entry %d (in %s): %w", i, path, err)
			}
			kinds[parsed.Kind]++
			hs, err := tlog.StoredHashes(i, e, hashes)
			if err != nil {
				return nil, fmt.Errorf("hashing entry %d: %w", i, err)
			}
			hashes = append(hashes, hs...)
		}
	}
	return hashes, nil
}

// compareHashTiles compares every hash tile of the tree of size that src
// serves with the one recomputed from hashes, lowest level first, and
// names the first that differs. It returns how many it compared.
func compareHashTiles(ctx context.Context, src TileSource, size int64, hashes hashList) (int, error) {
	tiles := tlog.NewTiles(TileHeight, 0, size)
	slices.SortFunc(tiles, func(a, b tlog.Tile) int {
		if a.L != b.L {
			return a.L - b.L
		}
		return int(a.N - b.N)
	})
	for _, tile := range tiles {
		path := TilePath(tile)
		want, err := tlog.ReadTileData(tile, hashes)
		if err != nil {
			return 0, fmt.Errorf("recomputing %s: %w", path, err)
		}
		got, err := src.ReadFile(ctx, path)
		if err != nil {
			return 0, fmt.Errorf("hash tile %s: %w", path, err)
		}
		if bytes.Equal(got, want) {
			continue
		}
		if len(got) != len(want) {
			return 0, fmt.Errorf("hash tile %s is %d bytes, want %d", path, len(got), len(want))
		}
		k := 0
		for got[k] == want[k] {
			k++
		}
		k /= tlog.HashSize
		what := fmt.Sprintf("hash %d of level %d", tile.N<<TileHeight+int64(k), tile.L*TileHeight)
		if tile.L == 0 {
			what = fmt.Sprintf("the hash of entry %d", tile.N<<TileHeight+int64(k))
		}
		return 0, fmt.Errorf("hash tile %s differs from the tree of the entries served at %s: the tile or the entry was altered", path, what)
	}
	return len(tiles), nil
}

// hashList is a tree's stored hashes in the order of their indexes
// (tlog.StoredHashIndex), held in memory.
type hashList []tlog.Hash

// ReadHashes implements tlog.HashReader.
func (l hashList) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		if x < 0 || x >= int64(len(l)) {
			return nil, fmt.Errorf("stored hash %d is not computed (%d are)", x, len(l))
		}
		out[i] = l[x]
	}
	return out, nil
}

// b64 is a hash as a checkpoint writes it.
func b64(h tlog.Hash) string { return base64.StdEncoding.EncodeToString(h[:]) }
