// SPDX-License-Identifier: Apache-2.0

package transparency_test

import (
	"crypto/sha256"
	"testing"

	"golang.org/x/mod/sumdb/tlog"
)

// rfcLeaf and rfcNode are RFC 9162 §2.1.1's hashes, written out here so
// that the tree is checked against the RFC and not only against itself.
func rfcLeaf(e []byte) tlog.Hash { return sha256.Sum256(append([]byte{0}, e...)) }
func rfcNode(l, r tlog.Hash) tlog.Hash {
	return sha256.Sum256(append(append([]byte{1}, l[:]...), r[:]...))
}

// TestWorkedExample checks the package doc's example in numbers: the root
// of five entries, its stored hashes, and the consistency proof from size
// 3 to size 5.
func TestWorkedExample(t *testing.T) {
	m := &memLog{}
	es := entries(0, 5)
	m.add(t, es[:3]...)
	root3 := m.root(t)
	m.add(t, es[3:]...)
	h := make([]tlog.Hash, 5)
	for i, e := range es {
		h[i] = rfcLeaf(e)
	}
	h01, h23 := rfcNode(h[0], h[1]), rfcNode(h[2], h[3])
	if want := rfcNode(rfcNode(h01, h23), h[4]); m.root(t) != want {
		t.Fatalf("root of 5 = %v, want RFC 9162's %v", m.root(t), want)
	}
	if want := rfcNode(h01, h[2]); root3 != want {
		t.Fatalf("root of 3 = %v, want %v", root3, want)
	}
	if len(m.hashes) != 8 {
		t.Errorf("%d stored hashes for 5 entries, want 8", len(m.hashes))
	}
	p, err := tlog.ProveTree(5, 3, m)
	if err != nil {
		t.Fatal(err)
	}
	want := tlog.TreeProof{h[2], h[3], h01, h[4]}
	if len(p) != len(want) {
		t.Fatalf("proof %v, want %v", p, want)
	}
	for i := range want {
		if p[i] != want[i] {
			t.Errorf("proof[%d] = %v, want %v", i, p[i], want[i])
		}
	}
	if err := tlog.CheckTree(p, 5, m.root(t), 3, root3); err != nil {
		t.Errorf("the proof does not check: %v", err)
	}
}

// TestAppendInBatches: a tree grown one entry at a time and one grown in
// batches of any size have the same stored hashes, and every inclusion
// and consistency proof checks.
func TestAppendInBatches(t *testing.T) {
	const n = 600
	es := entries(0, n)
	one, batched := &memLog{}, &memLog{}
	for _, e := range es {
		one.add(t, e)
	}
	for i, step := 0, 1; i < n; i, step = i+step, step*3%257+1 {
		batched.add(t, es[i:min(i+step, n)]...)
	}
	if len(one.hashes) != len(batched.hashes) {
		t.Fatalf("%d against %d stored hashes", len(one.hashes), len(batched.hashes))
	}
	for i := range one.hashes {
		if one.hashes[i] != batched.hashes[i] {
			t.Fatalf("stored hash %d differs", i)
		}
	}
	root := one.root(t)
	for _, i := range []int64{0, 1, 255, 256, 257, 511, 599} {
		p, err := tlog.ProveRecord(n, i, one)
		if err != nil {
			t.Fatal(err)
		}
		if err := tlog.CheckRecord(p, n, root, i, rfcLeaf(es[i])); err != nil {
			t.Errorf("entry %d: %v", i, err)
		}
	}
}
