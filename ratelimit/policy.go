// SPDX-License-Identifier: Apache-2.0

package ratelimit

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Policy is what a [Limiter] enforces: the limit of each name, which names
// are enabled, and the overrides of single buckets.
type Policy struct {
	// Limits holds the default Limit of each Name.
	Limits map[Name]Limit
	// Enabled lists the limits that are enforced. A Name that is absent or
	// false is disabled: its requests are dropped from every batch, so they
	// neither spend nor deny. An enabled Name needs an entry in Limits.
	Enabled map[Name]bool
	// Overrides replaces the limit of single buckets, keyed by [BucketKey]
	// ("order-creation:acct-42"), for example a large tenant's account. An
	// override of a disabled limit has no effect. A key may also name a
	// group of buckets, which requests join with [Request.OverrideKey]
	// ("order-creation:eab:team-x").
	Overrides map[string]Limit
}

// DefaultPolicy returns the policy of [DefaultConfig], the defaults weir
// runs with when its file sets no limits.
func DefaultPolicy() Policy { return DefaultConfig().basePolicy() }

// Validate reports every problem with c at once, joined with errors.Join,
// each naming the limit or bucket key concerned.
func (c Policy) Validate() error {
	var errs []error
	for _, n := range slices.Sorted(maps.Keys(c.Limits)) {
		if !n.Valid() {
			errs = append(errs, fmt.Errorf("ratelimit: unknown limit name %d", int(n)))
			continue
		}
		errs = append(errs, checkLimit(n.String(), n, c.Limits[n])...)
	}
	for _, n := range slices.Sorted(maps.Keys(c.Enabled)) {
		switch _, ok := c.Limits[n]; {
		case !n.Valid():
			errs = append(errs, fmt.Errorf("ratelimit: cannot enable unknown limit name %d", int(n)))
		case c.Enabled[n] && !ok:
			errs = append(errs, fmt.Errorf("ratelimit: %s is enabled but has no limit", n))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(c.Overrides)) {
		prefix, key, _ := strings.Cut(k, ":")
		n, err := ParseName(prefix)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("ratelimit: override %q: the key must start with a limit name and a colon: %w", k, err))
		case key == "":
			errs = append(errs, fmt.Errorf("ratelimit: override %q: empty key after the limit name", k))
		default:
			errs = append(errs, checkLimit("override "+k, n, c.Overrides[k])...)
		}
	}
	return errors.Join(errs...)
}

// checkLimit reports the problems of l as the limit of n, labelled label.
func checkLimit(label string, n Name, l Limit) []error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("ratelimit: %s: "+format, append([]any{label}, args...)...))
	}
	if k := l.Kind(); k != KindInvalid && k != n.Kind() {
		if n.Kind() == KindRate {
			bad("%s is a rate limit: set count, period and burst, not max and window", n)
		} else {
			bad("%s is an exact count: set max (and window), not count, period and burst", n)
		}
		return errs
	}
	for _, p := range l.problems() {
		bad("%s", p)
	}
	if len(errs) > 0 {
		return errs
	}
	switch {
	case n == DuplicateCertificate && l.Window <= 0:
		bad("window must be positive, got %v", l.Window)
	case n == PendingAuthorizations && l.Window != 0:
		bad("window must be 0: a pending authorization counts until its own expiry")
	}
	return errs
}

// clone returns a copy of c whose maps the caller cannot change.
func (c Policy) clone() Policy {
	return Policy{Limits: maps.Clone(c.Limits), Enabled: maps.Clone(c.Enabled), Overrides: maps.Clone(c.Overrides)}
}

// limitFor returns the limit of one bucket: its own override, else the
// override of its first group that has one (overrideKey, see
// Request.OverrideKey: "eab:LABEL", then "tenant:NAME"), else the
// default of its name. The bucket's own override wins because it is the
// more specific: an operator who singles out one account means it.
func (c *Policy) limitFor(n Name, bucketKey, overrideKey string) Limit {
	l, _ := c.override(n, bucketKey, overrideKey)
	return l
}

// override is limitFor, also reporting whether an override applied.
func (c *Policy) override(n Name, bucketKey, overrideKey string) (Limit, bool) {
	if l, ok := c.Overrides[bucketKey]; ok {
		return l, true
	}
	for rest := overrideKey; rest != ""; {
		var group string
		group, rest, _ = strings.Cut(rest, " ")
		if l, ok := c.Overrides[BucketKey(n, group)]; ok {
			return l, true
		}
	}
	return c.Limits[n], false
}

// GroupKeys joins the group override keys of an account, the most
// specific first ("eab:LABEL", then "tenant:NAME"), into the one
// [Request.OverrideKey] that names them: the first that has an override
// of a bucket's limit gives it. Empty keys are left out; a key holds no
// space (acme's rule for labels and tenant names).
func GroupKeys(keys ...string) string {
	var b strings.Builder
	for _, k := range keys {
		if k == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k)
	}
	return b.String()
}
