// SPDX-License-Identifier: Apache-2.0

package transparency_test

import (
	"fmt"
	"testing"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/weir-pki/weir/acme/transparency"
)

// memLog is a log in memory: its entries and its stored hashes, index by
// index, as a store keeps them.
type memLog struct {
	entries [][]byte
	hashes  []tlog.Hash
}

func (m *memLog) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		if x < 0 || x >= int64(len(m.hashes)) {
			return nil, fmt.Errorf("no stored hash %d", x)
		}
		out[i] = m.hashes[x]
	}
	return out, nil
}

func (m *memLog) size() int64 { return int64(len(m.entries)) }

// add appends entries through transparency.Append.
func (m *memLog) add(t *testing.T, entries ...[]byte) {
	t.Helper()
	hs, err := transparency.Append(m.size(), entries, m)
	if err != nil {
		t.Fatal(err)
	}
	if want := tlog.StoredHashCount(m.size()+int64(len(entries))) - int64(len(m.hashes)); int64(len(hs)) != want {
		t.Fatalf("Append added %d stored hashes, want %d", len(hs), want)
	}
	m.entries = append(m.entries, entries...)
	m.hashes = append(m.hashes, hs...)
}

func (m *memLog) root(t *testing.T) tlog.Hash {
	t.Helper()
	h, err := tlog.TreeHash(m.size(), m)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// entries makes n entries numbered from first.
func entries(first, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = fmt.Appendf(nil, `{"type":"issuance","serial":"%x"}`, first+i)
	}
	return out
}
