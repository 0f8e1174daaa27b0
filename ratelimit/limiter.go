// SPDX-License-Identifier: Apache-2.0

package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Limiter enforces a [Policy] over a [Source]. It holds no bucket state, so
// any number of Limiters — one per replica, or a new one after a reload —
// may share one Source.
type Limiter struct {
	cfg Policy
	src Source
	now func() time.Time
}

// New returns a Limiter enforcing cfg over src. now (nil means time.Now)
// dates the decisions that need no backend round trip, when every request
// names a disabled limit; all others carry the source's clock.
func New(cfg Policy, src Source, now func() time.Time) (*Limiter, error) {
	if src == nil {
		return nil, errors.New("ratelimit: nil Source")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if now == nil {
		now = time.Now
	}
	return &Limiter{cfg: cfg.clone(), src: src, now: now}, nil
}

// Request is one bucket of a request to the limiter.
type Request struct {
	// Name is the limit.
	Name Name
	// Key selects the bucket, in the format documented on Name (for
	// example [IPKey] or [FQDNSetKey]).
	Key string
	// Cost is the number of tokens a rate limit spends; 0 means 1. A
	// san-budget request costs the number of identifiers. Count limits
	// take 0 or 1.
	Cost int64
	// Member is the member a count limit adds (certificate serial,
	// authorization ID). Spend requires it; Check may leave it empty.
	Member string
	// MemberTime is the member's timestamp: its expiry for
	// pending-authorizations (required), the issue time for
	// duplicate-certificate (zero means the source's now).
	MemberTime time.Time
	// CheckOnly makes Spend only check this bucket: it spends or adds
	// nothing here, but a denial still denies the whole request. New-order
	// checks duplicate-certificate and failed-validation this way.
	CheckOnly bool
	// OverrideKey, when set, names the group overrides for the bucket, one
	// key or several separated by a space ([GroupKeys]), the most specific
	// first: the limit of Policy.Overrides[BucketKey(Name, group)] of the
	// first group that has one applies, unless the bucket has an override
	// of its own. An account bound with an EAB key of label team-x of
	// tenant team-a has "eab:team-x tenant:team-a". The bucket itself is
	// still the one of Key.
	OverrideKey string
}

// Spent records what one Spend wrote, so that it can be undone when the
// operation it paid for fails later (the order could not be stored).
type Spent struct {
	mu   sync.Mutex
	done bool
	undo []Op
}

// Check reports whether reqs would be allowed, spending nothing.
func (l *Limiter) Check(ctx context.Context, reqs ...Request) (Decision, error) {
	ops, names, err := l.batch(reqs, true)
	if err != nil {
		return Decision{}, err
	}
	if len(ops) == 0 {
		return Decision{Allowed: true, At: l.now()}, nil
	}
	res, err := l.apply(ctx, ops)
	if err != nil {
		return Decision{}, err
	}
	return decide(ops, names, res), nil
}

// Spend spends every bucket of reqs at once, all or nothing: if any bucket
// denies, nothing is spent anywhere. The Decision names the strictest denial
// and lists every denied bucket in Denied. Spent is nil when denied;
// otherwise pass it to [Limiter.Refund] if the operation fails.
func (l *Limiter) Spend(ctx context.Context, reqs ...Request) (Decision, *Spent, error) {
	ops, names, err := l.batch(reqs, false)
	if err != nil {
		return Decision{}, nil, err
	}
	if len(ops) == 0 {
		return Decision{Allowed: true, At: l.now()}, &Spent{}, nil
	}
	res, err := l.apply(ctx, ops)
	if err != nil {
		return Decision{}, nil, err
	}
	d := decide(ops, names, res)
	if !res.Committed {
		return d, nil, nil
	}
	s := &Spent{}
	for i, r := range res.Results {
		if !r.Applied {
			continue
		}
		switch op := ops[i]; op.Kind {
		case OpSpend:
			s.undo = append(s.undo, Op{Kind: OpRefund, Key: op.Key, Limit: op.Limit, Cost: op.Cost})
		case OpAdd:
			s.undo = append(s.undo, Op{Kind: OpRemove, Key: op.Key, Limit: op.Limit, Member: op.Member})
		}
	}
	return d, s, nil
}

// Refund undoes what a Spend wrote: rate buckets get their tokens back (a
// TAT never goes below the source's now) and count buckets lose the members
// that Spend added (not ones that were there already). It acts at most once
// per Spent; later calls, and a nil Spent, return nil. After an error the
// refund may be retried.
func (l *Limiter) Refund(ctx context.Context, s *Spent) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return nil
	}
	if len(s.undo) > 0 {
		res, err := l.apply(ctx, s.undo)
		if err != nil {
			return fmt.Errorf("ratelimit: refund: %w", err)
		}
		if !res.Committed {
			return errors.New("ratelimit: refund: the source did not commit")
		}
	}
	s.done = true
	return nil
}

// Enforced returns the requests of reqs whose limit is enabled (reqs
// itself when that is all of them): those the Limiter acts on, and drops
// the others from every call. It is the one place that says so.
func (l *Limiter) Enforced(reqs []Request) []Request {
	n := 0
	for _, r := range reqs {
		if l.enforces(r.Name) {
			n++
		}
	}
	if n == len(reqs) {
		return reqs
	}
	out := make([]Request, 0, n)
	for _, r := range reqs {
		if l.enforces(r.Name) {
			out = append(out, r)
		}
	}
	return out
}

// LimitFor returns the limit r's bucket is held to (see [Decision.Policy]),
// false when r's limit is not enforced.
func (l *Limiter) LimitFor(r Request) (Limit, bool) {
	if !l.enforces(r.Name) {
		return Limit{}, false
	}
	return l.cfg.limitFor(r.Name, BucketKey(r.Name, r.Key), r.OverrideKey), true
}

// enforces reports whether the limit n is enabled.
func (l *Limiter) enforces(n Name) bool { return l.cfg.Enabled[n] }

// Remove deletes members from count buckets: a revoked certificate from
// duplicate-certificate, an authorization that left pending from
// pending-authorizations. Requests of disabled limits are dropped.
func (l *Limiter) Remove(ctx context.Context, reqs ...Request) error {
	var ops []Op
	for _, r := range reqs {
		if r.Name.Kind() != KindCount {
			return fmt.Errorf("ratelimit: remove: %s is not an exact count", r.Name)
		}
		if !l.enforces(r.Name) {
			continue
		}
		key := BucketKey(r.Name, r.Key)
		ops = append(ops, Op{Kind: OpRemove, Key: key, Limit: l.cfg.limitFor(r.Name, key, r.OverrideKey), Member: r.Member})
	}
	if len(ops) == 0 {
		return nil
	}
	if _, err := l.apply(ctx, ops); err != nil {
		return fmt.Errorf("ratelimit: remove: %w", err)
	}
	return nil
}

// batch turns reqs into ops, dropping disabled limits. names[i] is the Name
// of ops[i]. check turns every request into a check.
func (l *Limiter) batch(reqs []Request, check bool) (ops []Op, names []Name, err error) {
	ops = make([]Op, 0, len(reqs))
	names = make([]Name, 0, len(reqs))
	for _, r := range reqs {
		if !r.Name.Valid() {
			return nil, nil, fmt.Errorf("ratelimit: unknown limit name %d", int(r.Name))
		}
		if !l.enforces(r.Name) {
			continue
		}
		if r.Key == "" {
			return nil, nil, fmt.Errorf("ratelimit: %s: empty key", r.Name)
		}
		key := BucketKey(r.Name, r.Key)
		op := Op{Key: key, Limit: l.cfg.limitFor(r.Name, key, r.OverrideKey)}
		checkOnly := check || r.CheckOnly
		switch r.Name.Kind() {
		case KindRate:
			op.Kind, op.Cost = OpSpend, r.Cost
			if checkOnly {
				op.Kind = OpCheck
			}
			if r.Cost == 0 {
				op.Cost = 1
			}
			if r.Cost < 0 {
				return nil, nil, fmt.Errorf("ratelimit: %s %q: negative cost %d", r.Name, r.Key, r.Cost)
			}
		case KindCount:
			op.Kind, op.Member = OpAdd, r.Member
			if checkOnly {
				op.Kind = OpCount
			}
			if r.Cost != 0 && r.Cost != 1 {
				return nil, nil, fmt.Errorf("ratelimit: %s %q: an exact count costs 1, got %d", r.Name, r.Key, r.Cost)
			}
			if !r.MemberTime.IsZero() {
				op.MemberTime = r.MemberTime.UnixMicro()
			}
		}
		ops = append(ops, op)
		names = append(names, r.Name)
	}
	return ops, names, nil
}

// apply runs ops as one batch.
func (l *Limiter) apply(ctx context.Context, ops []Op) (*BatchResult, error) {
	res, err := l.src.Apply(ctx, &Batch{Ops: ops})
	if err != nil {
		return nil, err
	}
	if len(res.Results) != len(ops) {
		return nil, fmt.Errorf("ratelimit: source returned %d results for %d ops", len(res.Results), len(ops))
	}
	return res, nil
}
