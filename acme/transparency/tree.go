// SPDX-License-Identifier: Apache-2.0

package transparency

import (
	"fmt"

	"golang.org/x/mod/sumdb/tlog"
)

// Append returns the stored hashes that appending entries to a tree of
// size entries adds, in the order of their stored indexes from
// tlog.StoredHashIndex(0, size) on: the leaf hash of each entry and the
// subtrees it completes. r reads the tree's stored hashes so far. Writing
// them at their indexes, and only then a checkpoint of the new size,
// keeps the stored tree and every checkpoint consistent.
func Append(size int64, entries [][]byte, r tlog.HashReader) ([]tlog.Hash, error) {
	var added []tlog.Hash
	read := withAdded(r, tlog.StoredHashIndex(0, size), &added)
	for i, e := range entries {
		hs, err := tlog.StoredHashes(size+int64(i), e, read)
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", size+int64(i), err)
		}
		added = append(added, hs...)
	}
	return added, nil
}

// withAdded reads the stored hashes from first on from *added (the ones a
// batch adds, not written yet) and the older ones from r.
func withAdded(r tlog.HashReader, first int64, added *[]tlog.Hash) tlog.HashReader {
	return tlog.HashReaderFunc(func(indexes []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(indexes))
		var older []int64
		var at []int
		for i, x := range indexes {
			if x >= first {
				if x-first >= int64(len(*added)) {
					return nil, fmt.Errorf("stored hash %d is not written yet", x)
				}
				out[i] = (*added)[x-first]
				continue
			}
			older, at = append(older, x), append(at, i)
		}
		if len(older) > 0 {
			hs, err := r.ReadHashes(older)
			if err != nil {
				return nil, err
			}
			if len(hs) != len(older) {
				return nil, fmt.Errorf("read %d stored hashes, asked for %d", len(hs), len(older))
			}
			for j, i := range at {
				out[i] = hs[j]
			}
		}
		return out, nil
	})
}
