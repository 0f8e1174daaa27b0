// SPDX-License-Identifier: Apache-2.0

package sqlrow

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/weir-pki/weir/acme"
)

// ParseAccountID parses an account ID, which a store assigns as the
// canonical decimal form of a positive integer.
func ParseAccountID(id acme.AccountID) (int64, bool) { return parseDecimal(string(id), 1) }

// FormatAccountID is the inverse of ParseAccountID.
func FormatAccountID(n int64) acme.AccountID { return acme.AccountID(strconv.FormatInt(n, 10)) }

// ParseOrdersCursor parses the cursor of an account's orders list, which a
// store gives out as the canonical decimal form of the sequence number of
// the last order of a page: a non-negative integer. Any other text (a
// sign, leading zeros, spaces, an overflow) was not given out, so it is
// refused rather than read as some position.
func ParseOrdersCursor(cursor string) (int64, bool) { return parseDecimal(cursor, 0) }

// FormatOrdersCursor is the inverse of ParseOrdersCursor.
func FormatOrdersCursor(seq int64) string { return strconv.FormatInt(seq, 10) }

// parseDecimal parses the canonical decimal form of an int64 of at least
// least.
func parseDecimal(s string, least int64) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < least || strconv.FormatInt(n, 10) != s {
		return 0, false
	}
	return n, true
}

// MinTime and MaxTime are the earliest and latest storable times: those
// Unix nanoseconds in an int64 can represent (about 1678 to 2262).
var (
	MinTime = time.Unix(0, math.MinInt64)
	MaxTime = time.Unix(0, math.MaxInt64)
)

// TimesInRange reports whether every non-zero time of ts is storable.
func TimesInRange(ts ...time.Time) bool {
	for _, t := range ts {
		if !t.IsZero() && (t.Before(MinTime) || t.After(MaxTime)) {
			return false
		}
	}
	return true
}

// ToNanos converts t to stored form: Unix nanoseconds, 0 for the zero
// time. Callers check the range with TimesInRange first.
func ToNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// Seq is a row read with its sequence number (orders.seq), for a
// statement whose rows come back in no particular order (UPDATE …
// RETURNING).
type Seq[T any] struct {
	Seq int64
	Row T
}

// BySeq returns the rows of rs in ascending sequence order.
func BySeq[T any](rs []Seq[T]) []T {
	slices.SortFunc(rs, func(a, b Seq[T]) int { return cmp.Compare(a.Seq, b.Seq) })
	return Unseq(rs)
}

// Unseq returns the rows of rs, in their order.
func Unseq[T any](rs []Seq[T]) []T {
	out := make([]T, len(rs))
	for i, r := range rs {
		out[i] = r.Row
	}
	return out
}

// FromNanos is the inverse of ToNanos: 0 is the zero time, any other
// value that many Unix nanoseconds, in UTC.
func FromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// NullNanos is the stored form of an optional time in a nullable column:
// nil (NULL) for the zero time.
func NullNanos(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	n := ToNanos(t)
	return &n
}
