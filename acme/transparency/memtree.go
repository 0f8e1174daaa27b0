// SPDX-License-Identifier: Apache-2.0

package transparency

import (
	"fmt"

	"golang.org/x/mod/sumdb/tlog"
)

// MemTree is a log's tree held in memory: every stored hash of its
// entries so far (about 2 × 32 bytes an entry). It builds a whole log's
// stored hashes and root at once, as a tool filling a new store does
// (weir-load -populate -log), without reading them back from a store.
type MemTree struct {
	hashes hashList
	size   int64
}

// NewMemTree is an empty tree with room for the stored hashes of
// capacity entries (0: none reserved; it grows as entries are added).
func NewMemTree(capacity int64) *MemTree {
	return &MemTree{hashes: make(hashList, 0, tlog.StoredHashCount(max(capacity, 0)))}
}

// Size is the number of entries in the tree.
func (t *MemTree) Size() int64 { return t.size }

// Append adds entries as the next leaves and returns the stored hashes
// they add, at their indexes (Append).
func (t *MemTree) Append(entries [][]byte) ([]StoredHash, error) {
	first := int64(len(t.hashes))
	added, err := Append(t.size, entries, t.hashes)
	if err != nil {
		return nil, err
	}
	t.hashes = append(t.hashes, added...)
	t.size += int64(len(entries))
	out := make([]StoredHash, len(added))
	for i, h := range added {
		out[i] = StoredHash{Index: first + int64(i), Hash: h}
	}
	return out, nil
}

// Root is the tree's root hash, what its checkpoint signs.
func (t *MemTree) Root() (tlog.Hash, error) {
	root, err := tlog.TreeHash(t.size, t.hashes)
	if err != nil {
		return tlog.Hash{}, fmt.Errorf("transparency: the root of size %d: %w", t.size, err)
	}
	return root, nil
}
