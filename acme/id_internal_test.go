// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"strings"
	"testing"
	"time"
)

// TestNewIDSortsByTime: IDs are 26 characters of lowercase Crockford
// base32, distinct, and an ID made in a later millisecond sorts after one
// made earlier, whatever their random parts.
func TestNewIDSortsByTime(t *testing.T) {
	const alphabet = "0123456789abcdefghjkmnpqrstvwxyz"
	seen := map[string]bool{}
	prev := ""
	for i := range 50 {
		id := newID[string]()
		if len(id) != 26 {
			t.Fatalf("newID() = %q: %d characters, want 26", id, len(id))
		}
		if strings.Trim(id, alphabet) != "" {
			t.Fatalf("newID() = %q: characters outside %q", id, alphabet)
		}
		if seen[id] {
			t.Fatalf("newID() repeated %q", id)
		}
		seen[id] = true
		if prev != "" && id <= prev {
			t.Fatalf("ID %d %q does not sort after the previous one %q, made at least 2 ms earlier", i, id, prev)
		}
		prev = id
		time.Sleep(2 * time.Millisecond)
	}
}

// TestSortedIDsKeepOrder: the encoding preserves the byte order of
// equal-length inputs, which the time prefix relies on.
func TestSortedIDsKeepOrder(t *testing.T) {
	pairs := [][2][]byte{
		{{0x00, 0xff}, {0x01, 0x00}},
		{{0x7f, 0xff, 0xff}, {0x80, 0x00, 0x00}},
		{{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc}, {0x12, 0x34, 0x56, 0x78, 0x9a, 0xbd}},
	}
	for _, p := range pairs {
		a, b := sortedIDs.EncodeToString(p[0]), sortedIDs.EncodeToString(p[1])
		if a >= b {
			t.Errorf("encode(%x) = %q, encode(%x) = %q: order not kept", p[0], a, p[1], b)
		}
	}
}
