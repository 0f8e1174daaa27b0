package transfer

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"time"
)

// The stored form's scalar encodings, shared by both SQL stores.

// ParseAccountID parses an account ID, which a store assigns as the
// canonical decimal form of a positive integer.
func ParseAccountID(id string) (int64, bool) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n <= 0 || strconv.FormatInt(n, 10) != id {
		return 0, false
	}
	return n, true
}

// FormatAccountID is the inverse of ParseAccountID.
func FormatAccountID(n int64) string { return strconv.FormatInt(n, 10) }

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
	out := make([]T, len(rs))
	for i, r := range rs {
		out[i] = r.Row
	}
	return out
}
