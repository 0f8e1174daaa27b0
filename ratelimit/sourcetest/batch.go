// SPDX-License-Identifier: Apache-2.0

package sourcetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/weir-pki/weir/ratelimit"
)

// testBatch checks that a batch is all or nothing and that its ops see each
// other in order.
func testBatch(t *testing.T, newSource newSourceFunc) {
	spend := func(key string, cost int64) ratelimit.Op {
		return ratelimit.Op{Kind: ratelimit.OpSpend, Key: key, Limit: orderLimit(), Cost: cost}
	}
	check := func(key string, cost int64) ratelimit.Op {
		return ratelimit.Op{Kind: ratelimit.OpCheck, Key: key, Limit: orderLimit(), Cost: cost}
	}
	add := func(key, member string) ratelimit.Op {
		return ratelimit.Op{Kind: ratelimit.OpAdd, Key: key, Limit: pendingLimit(), Member: member, MemberTime: start().Add(time.Hour).UnixMicro()}
	}
	count := func(key string) ratelimit.Op {
		return ratelimit.Op{Kind: ratelimit.OpCount, Key: key, Limit: pendingLimit()}
	}
	const a, empty, p, full = "order-creation:a", "order-creation:empty", "pending-authorizations:p", "pending-authorizations:full"

	tests := []struct {
		name          string
		ops           []ratelimit.Op
		wantCommitted bool
		wantAllowed   []bool
		wantRemaining []int64
	}{
		{
			name:          "a denied spend writes nothing",
			ops:           []ratelimit.Op{spend(a, 1), add(p, "x"), spend(empty, 1)},
			wantAllowed:   []bool{true, true, false},
			wantRemaining: []int64{4, 2, 0},
		},
		{
			name:          "a denied check writes nothing",
			ops:           []ratelimit.Op{spend(a, 1), add(p, "x"), check(empty, 1)},
			wantAllowed:   []bool{true, true, false},
			wantRemaining: []int64{4, 2, 0},
		},
		{
			name:          "a denied count writes nothing",
			ops:           []ratelimit.Op{spend(a, 1), add(p, "x"), count(full)},
			wantAllowed:   []bool{true, true, false},
			wantRemaining: []int64{4, 2, 0},
		},
		{
			name:          "a denied add writes nothing",
			ops:           []ratelimit.Op{spend(a, 1), add(full, "x")},
			wantAllowed:   []bool{true, false},
			wantRemaining: []int64{4, 0},
		},
		{
			name:          "an impossible cost writes nothing",
			ops:           []ratelimit.Op{add(p, "x"), spend(a, 6)},
			wantAllowed:   []bool{true, false},
			wantRemaining: []int64{2, 5},
		},
		{
			name:          "the second spend sees the first and denies both",
			ops:           []ratelimit.Op{spend(a, 3), spend(a, 3)},
			wantAllowed:   []bool{true, false},
			wantRemaining: []int64{2, 2},
		},
		{
			name:          "the second spend sees the first",
			ops:           []ratelimit.Op{spend(a, 3), spend(a, 2), check(a, 0)},
			wantCommitted: true,
			wantAllowed:   []bool{true, true, true},
			wantRemaining: []int64{2, 0, 0},
		},
		{
			name:          "an add and a remove of the same member",
			ops:           []ratelimit.Op{add(p, "x"), {Kind: ratelimit.OpRemove, Key: p, Limit: pendingLimit(), Member: "x"}},
			wantCommitted: true,
			wantAllowed:   []bool{true, true},
			wantRemaining: []int64{2, 3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, newSource)
			e.apply(spend(empty, 5), add(full, "f1"), add(full, "f2"), add(full, "f3"))
			before := e.get(a, empty, p, full)

			res := e.apply(tt.ops...)
			if res.Committed != tt.wantCommitted {
				t.Errorf("Committed = %v, want %v", res.Committed, tt.wantCommitted)
			}
			for i, r := range res.Results {
				if r.Allowed != tt.wantAllowed[i] || r.Remaining != tt.wantRemaining[i] {
					t.Errorf("op %d (%s %s): allowed %v remaining %d, want %v %d",
						i, tt.ops[i].Kind, tt.ops[i].Key, r.Allowed, r.Remaining, tt.wantAllowed[i], tt.wantRemaining[i])
				}
				if r.Applied && !res.Committed {
					t.Errorf("op %d: Applied in a batch that did not commit", i)
				}
			}
			if tt.wantCommitted {
				return
			}
			after := e.get(a, empty, p, full)
			if !sameBuckets(before, after) {
				t.Errorf("an uncommitted batch changed state:\nbefore %v\n after %v", before, after)
			}
		})
	}
}

// sameBuckets compares two snapshots' buckets.
func sameBuckets(x, y map[string]ratelimit.Bucket) bool {
	if len(x) != len(y) {
		return false
	}
	for k, bx := range x {
		by, ok := y[k]
		if !ok || bx.TAT != by.TAT || len(bx.Members) != len(by.Members) {
			return false
		}
		for m, ts := range bx.Members {
			if got, ok := by.Members[m]; !ok || got != ts {
				return false
			}
		}
	}
	return true
}

// testInvalidOps checks that malformed ops are errors, not decisions, and
// that a batch holding one writes nothing.
func testInvalidOps(t *testing.T, newSource newSourceFunc) {
	good := ratelimit.Op{Kind: ratelimit.OpSpend, Key: "order-creation:a", Limit: orderLimit(), Cost: 1}
	tests := []struct {
		name string
		op   ratelimit.Op
	}{
		{"empty key", ratelimit.Op{Kind: ratelimit.OpSpend, Limit: orderLimit(), Cost: 1}},
		{"unknown kind", ratelimit.Op{Kind: 99, Key: "k", Limit: orderLimit(), Cost: 1}},
		{"spend with a count limit", ratelimit.Op{Kind: ratelimit.OpSpend, Key: "k", Limit: dupLimit(), Cost: 1}},
		{"add with a rate limit", ratelimit.Op{Kind: ratelimit.OpAdd, Key: "k", Limit: orderLimit(), Member: "m"}},
		{"spend of 0", ratelimit.Op{Kind: ratelimit.OpSpend, Key: "k", Limit: orderLimit()}},
		{"negative check", ratelimit.Op{Kind: ratelimit.OpCheck, Key: "k", Limit: orderLimit(), Cost: -1}},
		{"refund of 0", ratelimit.Op{Kind: ratelimit.OpRefund, Key: "k", Limit: orderLimit()}},
		{"burst 0", ratelimit.Op{Kind: ratelimit.OpSpend, Key: "k", Limit: ratelimit.Limit{Count: 1, Period: time.Hour}, Cost: 1}},
		{"add without a member", ratelimit.Op{Kind: ratelimit.OpAdd, Key: "k", Limit: dupLimit()}},
		{"remove without a member", ratelimit.Op{Kind: ratelimit.OpRemove, Key: "k", Limit: dupLimit()}},
		{"pending add without an expiry", ratelimit.Op{Kind: ratelimit.OpAdd, Key: "k", Limit: pendingLimit(), Member: "m"}},
		{"negative member time", ratelimit.Op{Kind: ratelimit.OpAdd, Key: "k", Limit: dupLimit(), Member: "m", MemberTime: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, newSource)
			res, err := e.src.Apply(t.Context(), &ratelimit.Batch{Ops: []ratelimit.Op{good, tt.op}})
			if err == nil {
				t.Fatalf("Apply = %+v, want an error", res)
			}
			if got := e.get(good.Key); len(got) != 0 {
				t.Errorf("a rejected batch wrote %v", got)
			}
		})
	}
	t.Run("cancelled context", func(t *testing.T) {
		e := newEnv(t, newSource)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := e.src.Apply(ctx, &ratelimit.Batch{Ops: []ratelimit.Op{good}})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Apply with a cancelled context = %v, want an error wrapping context.Canceled", err)
		}
	})
}

// testGetReset checks the read-only view and the administrator's reset.
func testGetReset(t *testing.T, newSource newSourceFunc) {
	e := newEnv(t, newSource)
	const r, c = "order-creation:a", "duplicate-certificate:a:ff"
	if got := e.get(r, c); len(got) != 0 {
		t.Fatalf("Get on an empty source = %v, want nothing", got)
	}
	e.apply(
		ratelimit.Op{Kind: ratelimit.OpSpend, Key: r, Limit: orderLimit(), Cost: 2},
		ratelimit.Op{Kind: ratelimit.OpAdd, Key: c, Limit: dupLimit(), Member: "s1"},
	)
	e.clock.Advance(time.Minute)
	got := e.get(r, c, "order-creation:absent")
	if want := e.t0 + (360 * time.Second).Microseconds(); got[r].TAT != want {
		t.Errorf("Get(%s).TAT = %d, want %d", r, got[r].TAT, want)
	}
	if ts, ok := got[c].Members["s1"]; !ok || ts != e.t0 {
		t.Errorf("Get(%s).Members = %v, want s1 at %d", c, got[c].Members, e.t0)
	}
	if _, ok := got["order-creation:absent"]; ok || len(got) != 2 {
		t.Errorf("Get returned %d buckets %v, want exactly the 2 stored", len(got), got)
	}

	for _, k := range []string{r, c} {
		if err := e.src.Reset(t.Context(), k); err != nil {
			t.Fatalf("Reset(%s): %v", k, err)
		}
	}
	if got := e.get(r, c); len(got) != 0 {
		t.Errorf("Get after Reset = %v, want nothing", got)
	}
	res := e.apply(ratelimit.Op{Kind: ratelimit.OpSpend, Key: r, Limit: orderLimit(), Cost: 5})
	if !res.Committed || res.Results[0].Remaining != 0 {
		t.Errorf("spend of the whole burst after Reset = %+v, want allowed with 0 left", res.Results[0])
	}
}
