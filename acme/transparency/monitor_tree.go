// SPDX-License-Identifier: Apache-2.0

package transparency

import (
	"context"
	"fmt"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/tlog"
)

// checkTree checks the tree of cp, a checkpoint that verified, against
// the one held: no smaller, the same root at the same size, and when
// larger, a consistency proof from the served hash tiles and then every
// new entry against its leaf. The tiles are verified against cp's root
// as they are read (torchwood.TileHashReaderWithContext, which is
// tlog.TileHashReader), so a proof is the tree cp signed, not whatever
// the tiles say.
func (m *Monitor) checkTree(ctx context.Context, cp Checkpoint) (*Alarm, error) {
	if m.held == nil && cp.Size == 0 {
		return nil, nil
	}
	var old Checkpoint
	if m.held != nil {
		old = *m.held
	}
	switch {
	case cp.Size < old.Size:
		return &Alarm{Reason: ReasonRewind, Message: fmt.Sprintf(
			"the served checkpoint is of size %d (root %s), smaller than the checkpoint held of size %d (root %s): the log was cut back",
			cp.Size, cp.Hash, old.Size, old.Hash)}, nil
	case cp.Size == old.Size && cp.Hash != old.Hash:
		return &Alarm{Reason: ReasonFork, Message: fmt.Sprintf(
			"the served checkpoint of size %d has root %s, the checkpoint held of the same size has root %s: two trees of one size",
			cp.Size, cp.Hash, old.Hash)}, nil
	case cp.Size == old.Size:
		return nil, nil
	}
	tree := tlog.Tree{N: cp.Size, Hash: cp.Hash}
	hr := torchwood.TileHashReaderWithContext(ctx, tree, m.c.Log)
	if old.Size > 0 {
		proof, err := tlog.ProveTree(cp.Size, old.Size, hr)
		if err != nil {
			return tileFailure(err, fmt.Sprintf("reading the consistency proof from size %d to %d", old.Size, cp.Size))
		}
		if err := tlog.CheckTree(proof, cp.Size, cp.Hash, old.Size, old.Hash); err != nil {
			return &Alarm{Reason: ReasonFork, Message: fmt.Sprintf(
				"the served tree of size %d (root %s) does not extend the checkpoint held of size %d (root %s): the consistency proof fails, the history was rewritten (an entry removed, inserted or changed, or a new tree)",
				cp.Size, cp.Hash, old.Size, old.Hash)}, nil
		}
	}
	return m.checkEntries(ctx, old.Size, tree, hr)
}

// checkEntries reads the entries from index from to the end of tree,
// bundle by bundle, and checks that each is the leaf the tree hashed
// (hr, the tree's verified hash tiles) and that ParseEntry reads it.
func (m *Monitor) checkEntries(ctx context.Context, from int64, tree tlog.Tree, hr tlog.HashReader) (*Alarm, error) {
	mismatch := func(format string, args ...any) (*Alarm, error) {
		return &Alarm{Reason: ReasonEntryMismatch, Message: fmt.Sprintf(format, args...)}, nil
	}
	for start := from &^ (1<<TileHeight - 1); start < tree.N; start += 1 << TileHeight {
		t := EntryTile(start, tree.N)
		path := TilePath(t)
		data, err := m.c.Log.ReadTiles(ctx, []tlog.Tile{t})
		if err != nil {
			return nil, fmt.Errorf("reading entry bundle %s: %w", path, err)
		}
		if len(data) != 1 {
			return nil, fmt.Errorf("reading entry bundle %s: %d tiles read, want 1", path, len(data))
		}
		es, err := ParseEntryBundle(data[0])
		if err != nil {
			return mismatch("%s of the tree of size %d: %v", path, tree.N, err)
		}
		if len(es) != t.W {
			return mismatch("%s holds %d entries, the tree of size %d has %d there (indexes %d to %d)",
				path, len(es), tree.N, t.W, start, start+int64(t.W)-1)
		}
		first := max(from, start)
		indexes := make([]int64, 0, start+int64(t.W)-first)
		for i := first; i < start+int64(t.W); i++ {
			indexes = append(indexes, tlog.StoredHashIndex(0, i))
		}
		leaves, err := hr.ReadHashes(indexes)
		if err != nil {
			return tileFailure(err, fmt.Sprintf("reading the leaf hashes %d to %d", first, start+int64(t.W)-1))
		}
		for k, leaf := range leaves {
			i := first + int64(k)
			e := es[i-start]
			if h := tlog.RecordHash(e); h != leaf {
				return mismatch("entry does not match the tree at index %d: the entry in %s hashes to %s, the tree of size %d (root %s) has leaf %s",
					i, path, h, tree.N, tree.Hash, leaf)
			}
			if _, err := ParseEntry(e); err != nil {
				return &Alarm{Reason: ReasonUnparseableEntry, Message: fmt.Sprintf(
					"unparseable entry at index %d (in %s, leaf %s of the tree of size %d): %v", i, path, leaf, tree.N, err)}, nil
			}
		}
	}
	return nil, nil
}

// tileFailure is what a failure to read the tree's hashes while doing
// what means: a failure to fetch is transient (an error), any other a
// tile that does not hash to the signed root, an alarm.
func tileFailure(err error, what string) (*Alarm, error) {
	if isFetchError(err) {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return &Alarm{Reason: ReasonBadTile, Message: fmt.Sprintf(
		"%s: the served hash tiles do not match the signed root: %v", what, err)}, nil
}
