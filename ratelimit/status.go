// SPDX-License-Identifier: Apache-2.0

package ratelimit

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// BucketStatus is what an administrator sees of one bucket: its limit, what
// is left and when it refills. It is read with checks that write nothing,
// so looking never spends.
type BucketStatus struct {
	// Name and Key identify the bucket; Key is without the "name:" prefix.
	Name Name   `json:"limit"`
	Key  string `json:"key"`
	// Enabled is false for a disabled limit; the other fields are then
	// zero.
	Enabled bool `json:"enabled"`
	// Limit is the bucket's size, with any override applied; Override says
	// whether one did.
	Limit    Limit `json:"-"`
	Override bool  `json:"override,omitempty"`
	// Capacity is the burst (rate) or the maximum (count).
	Capacity int64 `json:"capacity"`
	// Remaining is the tokens (rate) or member slots (count) left now.
	Remaining int64 `json:"remaining"`
	// NextAt is when one more request fits, if none does now; zero when
	// Remaining > 0 or when no wait helps.
	NextAt time.Time `json:"next_at,omitzero"`
	// FullAt is when the bucket is entirely full (rate) or empty (count)
	// again if nothing more is spent; At when it already is.
	FullAt time.Time `json:"full_at"`
	// At is the source's clock when it was read.
	At time.Time `json:"at"`
}

// Status reads the buckets of reqs without spending anything: one check per
// request, at the request's cost (0 reads the bucket as is). A disabled
// limit is reported with Enabled false and not read.
func (l *Limiter) Status(ctx context.Context, reqs ...Request) ([]BucketStatus, error) {
	out := make([]BucketStatus, len(reqs))
	var (
		ops []Op
		idx []int
	)
	for i, r := range reqs {
		if !r.Name.Valid() {
			return nil, fmt.Errorf("ratelimit: status: unknown limit name %d", int(r.Name))
		}
		if r.Key == "" {
			return nil, fmt.Errorf("ratelimit: status: %s: empty key", r.Name)
		}
		out[i] = BucketStatus{Name: r.Name, Key: r.Key}
		if !l.enforces(r.Name) {
			continue
		}
		key := BucketKey(r.Name, r.Key)
		lim, override := l.cfg.override(r.Name, key, r.OverrideKey)
		out[i].Enabled, out[i].Limit, out[i].Override = true, lim, override
		op := Op{Key: key, Limit: lim}
		if r.Name.Kind() == KindRate {
			op.Kind, op.Cost, out[i].Capacity = OpCheck, 0, lim.Burst
		} else {
			op.Kind, out[i].Capacity = OpCount, lim.Max
		}
		ops, idx = append(ops, op), append(idx, i)
	}
	if len(ops) == 0 {
		return out, nil
	}
	res, err := l.apply(ctx, ops)
	if err != nil {
		return nil, fmt.Errorf("ratelimit: status: %w", err)
	}
	at := time.UnixMicro(res.Now).UTC()
	for j, r := range res.Results {
		st := &out[idx[j]]
		st.At, st.Remaining, st.FullAt = at, r.Remaining, time.UnixMicro(r.TAT).UTC()
		if st.Name.Kind() == KindCount && r.Allowed {
			// A count check reports the slots left after adding a member.
			st.Remaining++
		}
		if st.Remaining > 0 {
			continue
		}
		switch st.Name.Kind() {
		case KindRate:
			// One token fits once TAT − now ≤ (burst − 1) × T.
			next := r.TAT - (st.Limit.Burst-1)*st.Limit.Emission()
			st.NextAt = time.UnixMicro(max(next, res.Now)).UTC()
		case KindCount:
			if r.RetryAfter > 0 {
				st.NextAt = time.UnixMicro(res.Now + r.RetryAfter).UTC()
			}
		}
	}
	return out, nil
}

// Policy returns a copy of the policy the limiter enforces.
func (l *Limiter) Policy() Policy { return l.cfg.clone() }

// Reset deletes the bucket named by a bucket key ("order-creation:42"),
// making it fresh.
func (l *Limiter) Reset(ctx context.Context, bucketKey string) error {
	if _, _, err := ParseBucketKey(bucketKey); err != nil {
		return err
	}
	if err := l.src.Reset(ctx, bucketKey); err != nil {
		return fmt.Errorf("ratelimit: reset %s: %w", bucketKey, err)
	}
	return nil
}

// ParseBucketKey splits a bucket key ("failed-validation:42:www.example.com")
// into its limit name and key.
func ParseBucketKey(s string) (Name, string, error) {
	name, key, ok := strings.Cut(s, ":")
	if !ok || key == "" {
		return 0, "", fmt.Errorf("ratelimit: %q is not a bucket key (limit:key, e.g. order-creation:42)", s)
	}
	n, err := ParseName(name)
	if err != nil {
		return 0, "", err
	}
	return n, key, nil
}

// Peek reads addr's global bucket at now (microseconds since the Unix
// epoch) without spending: the tokens left and the time, in microseconds,
// when the bucket is full again (now if it is).
func (e *Edge) Peek(addr netip.Addr, now int64) (remaining, fullAt int64) {
	key := edgeKey(addr)
	emission, burst := e.emission.Load(), e.burst.Load()
	h := e.hash(key)
	shard := &e.shards[h%edgeShards]
	base := ((h / edgeShards) & e.setMask) * edgeWays
	shard.mu.Lock()
	defer shard.mu.Unlock()
	for _, s := range shard.slots[base : base+edgeWays] {
		if s.key == key {
			return tokensLeft(s.tat, now, emission, burst*emission), max(s.tat, now)
		}
	}
	return burst, now
}

// Limit returns the global limit's burst and its emission interval, the
// time one token takes to refill.
func (e *Edge) Limit() (burst int64, emission time.Duration) {
	return e.burst.Load(), time.Duration(e.emission.Load()) * time.Microsecond
}

// Forget drops addr's global bucket (an administrator's reset).
func (e *Edge) Forget(addr netip.Addr) {
	key := edgeKey(addr)
	h := e.hash(key)
	shard := &e.shards[h%edgeShards]
	base := ((h / edgeShards) & e.setMask) * edgeWays
	shard.mu.Lock()
	defer shard.mu.Unlock()
	set := shard.slots[base : base+edgeWays]
	for i := range set {
		if set[i].key == key {
			set[i] = edgeSlot{}
		}
	}
}

// CheckCount reports whether n more members would fit r's count bucket now,
// spending nothing: what n adds in one batch would decide. (A Check batch
// evaluates each count op against the stored state alone, so it cannot
// tell whether several adds to one bucket fit together.)
func (l *Limiter) CheckCount(ctx context.Context, r Request, n int) (Decision, error) {
	if r.Name.Kind() != KindCount {
		return Decision{}, fmt.Errorf("ratelimit: check count: %s is not an exact count", r.Name)
	}
	if !l.enforces(r.Name) || n <= 0 {
		return Decision{Allowed: true, At: l.now()}, nil
	}
	key := BucketKey(r.Name, r.Key)
	lim := l.cfg.limitFor(r.Name, key, r.OverrideKey)
	snap, err := l.src.Get(ctx, []string{key})
	if err != nil {
		return Decision{}, fmt.Errorf("ratelimit: check count: %w", err)
	}
	now := snap.Now
	var leaves []int64
	if b, ok := snap.Buckets[key]; ok {
		for _, ts := range b.Members {
			if end := ts + lim.WindowMicros(); end > now {
				leaves = append(leaves, end)
			}
		}
	}
	slices.Sort(leaves)
	d := Decision{Limit: r.Name, Key: r.Key, At: time.UnixMicro(now).UTC(), Policy: lim}
	full := now
	if len(leaves) > 0 {
		full = leaves[len(leaves)-1]
	}
	d.ResetAt = time.UnixMicro(full).UTC()
	over := int64(len(leaves)) + int64(n) - lim.Max
	switch {
	case over <= 0:
		d.Allowed, d.Remaining = true, -over
	case int64(n) > lim.Max:
		d.Never = true
	default:
		// The over-th member to leave makes room for all n.
		d.RetryAfter = time.Duration(leaves[over-1]-now) * time.Microsecond
	}
	d.Buckets = []Decision{d}
	if !d.Allowed {
		d.Denied = d.Buckets
	}
	return d, nil
}
