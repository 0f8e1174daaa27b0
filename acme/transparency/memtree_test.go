// SPDX-License-Identifier: Apache-2.0

package transparency_test

import (
	"testing"

	"github.com/weir-pki/weir/acme/transparency"
)

// TestMemTree: a tree built in memory in uneven batches has the RFC 9162
// root of its entries at every size, and its stored hashes come at
// consecutive indexes from 0.
func TestMemTree(t *testing.T) {
	es := logEntries(t, 0, 300)
	tree := transparency.NewMemTree(int64(len(es)))
	next := int64(0)
	for from := 0; from < len(es); {
		to := min(from+1+from%37, len(es))
		added, err := tree.Append(es[from:to])
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range added {
			if h.Index != next {
				t.Fatalf("stored hash at index %d, want %d", h.Index, next)
			}
			next++
		}
		root, err := tree.Root()
		if err != nil {
			t.Fatal(err)
		}
		if tree.Size() != int64(to) || root != rfcRoot(es[:to]) {
			t.Fatalf("size %d, root %x; want %d and the RFC 9162 root %x", tree.Size(), root, to, rfcRoot(es[:to]))
		}
		from = to
	}
	if _, err := transparency.NewMemTree(0).Root(); err != nil {
		t.Errorf("the empty tree's root: %v", err)
	}
}
