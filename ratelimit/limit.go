// SPDX-License-Identifier: Apache-2.0

package ratelimit

import (
	"errors"
	"fmt"
	"time"
)

// Kind says how a limit counts.
type Kind int

const (
	// KindInvalid is a Limit with neither or both sets of fields, or an
	// invalid Name.
	KindInvalid Kind = iota
	// KindRate is a GCRA token bucket: Count per Period, Burst tokens.
	KindRate
	// KindCount is an exact count of members: at most Max.
	KindCount
)

// String returns "rate", "count" or "invalid".
func (k Kind) String() string {
	switch k {
	case KindRate:
		return "rate"
	case KindCount:
		return "count"
	default:
		return "invalid"
	}
}

// maxSpan bounds a bucket's capacity in time (Burst × emission interval) and
// a count window, so that every sum of microsecond timestamps stays far from
// int64 overflow.
const maxSpan = 100 * 365 * 24 * time.Hour

// Limit is the configured size of one bucket. A rate limit sets Count,
// Period and Burst; an exact-count limit sets Max and, except for
// pending-authorizations, Window. [Limit.Kind] says which.
//
// A rate limit allows Count requests per Period on average, with up to Burst
// at once: its emission interval is T = Period/Count and its capacity is
// Burst tokens. For example {Count: 20, Period: time.Hour, Burst: 5} has
// T = 3 min: an idle account may create 5 orders at once, then one every
// 3 minutes, and is back to 5 after 15 idle minutes.
//
// An exact-count limit admits a new member while fewer than Max members
// count. A duplicate-certificate member counts for Window after its issue
// time; a pending-authorization member counts until its own expiry, so its
// Window is 0.
type Limit struct {
	// Count is the number of tokens that refill per Period (rate limits).
	Count int64
	// Period is the refill period (rate limits).
	Period time.Duration
	// Burst is the bucket's capacity in tokens (rate limits).
	Burst int64
	// Max is the most members that may count at once (exact counts).
	Max int64
	// Window is how long a member counts after its timestamp (exact counts);
	// 0 means a member counts until its timestamp (an expiry).
	Window time.Duration
}

// Kind reports whether l is a rate limit or an exact count, and KindInvalid
// when it sets fields of both kinds or none.
func (l Limit) Kind() Kind {
	rate := l.Count != 0 || l.Period != 0 || l.Burst != 0
	count := l.Max != 0 || l.Window != 0
	switch {
	case rate && !count:
		return KindRate
	case count && !rate:
		return KindCount
	default:
		return KindInvalid
	}
}

// Emission returns the emission interval T = Period/Count in microseconds,
// truncated: the time one token takes to refill.
func (l Limit) Emission() int64 {
	if l.Count <= 0 {
		return 0
	}
	return l.Period.Microseconds() / l.Count
}

// Span is the time the limit counts over: a rate limit's period, an
// exact count's window (0 when it has none: pending-authorizations).
func (l Limit) Span() time.Duration {
	if l.Kind() == KindRate {
		return l.Period
	}
	return l.Window
}

// WindowMicros returns Window in microseconds.
func (l Limit) WindowMicros() int64 { return l.Window.Microseconds() }

// Validate reports every problem with l, each naming the limit as name (a
// limit name or a bucket key), joined with errors.Join.
func (l Limit) Validate(name string) error {
	var errs []error
	for _, p := range l.problems() {
		errs = append(errs, fmt.Errorf("ratelimit: %s: %s", name, p))
	}
	return errors.Join(errs...)
}

// problems lists what is wrong with l, unprefixed.
func (l Limit) problems() []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	switch l.Kind() {
	case KindRate:
		if l.Count <= 0 {
			bad("count must be positive, got %d", l.Count)
		}
		if l.Period <= 0 {
			bad("period must be positive, got %v", l.Period)
		}
		if l.Burst < 1 {
			bad("burst must be at least 1, got %d", l.Burst)
		}
		if len(out) > 0 {
			break
		}
		t := l.Emission()
		switch {
		case t < 1:
			bad("%d per %v is more than one per microsecond", l.Count, l.Period)
		case l.Burst > maxSpan.Microseconds()/t:
			bad("burst %d at one per %v spans more than %v", l.Burst, time.Duration(t)*time.Microsecond, maxSpan)
		}
	case KindCount:
		if l.Max < 1 {
			bad("max must be at least 1, got %d", l.Max)
		}
		if l.Window < 0 || l.Window > maxSpan {
			bad("window must be between 0 and %v, got %v", maxSpan, l.Window)
		}
	default:
		bad("set either count, period and burst (a rate limit) or max and window (an exact count), not both or neither")
	}
	return out
}
