// SPDX-License-Identifier: Apache-2.0

package sqlrow

import (
	"strings"
	"testing"
)

// FuzzParseOrdersCursor: the cursor parser never panics, accepts exactly
// the texts FormatOrdersCursor gives out (canonical decimals of
// non-negative int64s), and reads them back.
func FuzzParseOrdersCursor(f *testing.F) {
	for _, s := range []string{"0", "1", "42", "9223372036854775807", "9223372036854775808", "-1", "+1", "01", " 1", "1 ",
		"1.0", "1e3", "0x10", "", "x", "AAAA", "%zz", strings.Repeat("9", 400)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := ParseOrdersCursor(s)
		if ok != canonicalCursor(s) {
			t.Fatalf("ParseOrdersCursor(%q) ok = %v; want %v", s, ok, !ok)
		}
		if ok && (n < 0 || FormatOrdersCursor(n) != s) {
			t.Fatalf("ParseOrdersCursor(%q) = %d, which FormatOrdersCursor gives as %q", s, n, FormatOrdersCursor(n))
		}
	})
}

// canonicalCursor is the reference, by the text alone: digits without a
// leading zero, at most math.MaxInt64.
func canonicalCursor(s string) bool {
	const maxInt64 = "9223372036854775807"
	if s == "" || len(s) > len(maxInt64) || len(s) > 1 && s[0] == '0' {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(s) < len(maxInt64) || s <= maxInt64
}

// TestParseOrdersCursor: the cursors given out parse back; other
// spellings of the same numbers, and what is no number, do not.
func TestParseOrdersCursor(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"7", 7, true}, {"9223372036854775807", 9223372036854775807, true},
		{"", 0, false}, {"-1", 0, false}, {"-0", 0, false}, {"+7", 0, false}, {"07", 0, false}, {" 7", 0, false},
		{"7\n", 0, false}, {"7.0", 0, false}, {"7e0", 0, false}, {"0x7", 0, false}, {"9223372036854775808", 0, false},
		{"Nw", 0, false}, {strings.Repeat("1", 1<<16), 0, false},
	} {
		n, ok := ParseOrdersCursor(tc.in)
		if n != tc.want || ok != tc.ok {
			t.Errorf("ParseOrdersCursor(%.30q) = %d, %v; want %d, %v", tc.in, n, ok, tc.want, tc.ok)
		}
	}
}
