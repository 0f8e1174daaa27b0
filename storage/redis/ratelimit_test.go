// SPDX-License-Identifier: Apache-2.0

package redis_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/ratelimit/sourcetest"
)

// TestRateLimitSourceContract runs the shared Source suite: every scripted
// step on the fake clock (through Options.Clock), batches, invalid ops,
// Get and Reset, the two-replica races, the real-clock test on Redis TIME,
// and the steady-demand test on a synctest bubble's clock (through
// Options.Clock).
func TestRateLimitSourceContract(t *testing.T) {
	c := testClient(t)
	sourcetest.Run(t, func(t *testing.T, now func() time.Time) ratelimit.Source {
		if isTimeNow(now) {
			return newSource(t, c, nil)
		}
		return newSource(t, c, now)
	})
}

// TestReplicasDecideOnRedisClock runs two replicas — two sources and two
// Limiters whose own clocks are 5 s apart — on one bucket. Every decision
// is dated by Redis TIME inside the script, so the replicas agree: the
// same remaining tokens and reset instant, and denials that name the same
// retry instant to the microsecond, whichever replica decides.
func TestReplicasDecideOnRedisClock(t *testing.T) {
	c := testClient(t)
	prefix := testPrefix(t, c)
	cfg := ratelimit.DefaultPolicy()
	cfg.Limits[ratelimit.OrderCreation] = ratelimit.Limit{Count: 1, Period: time.Hour, Burst: 3}
	skew := 5 * time.Second
	nows := [2]func() time.Time{time.Now, func() time.Time { return time.Now().Add(skew) }}
	var lims [2]*ratelimit.Limiter
	for i := range lims {
		l, err := ratelimit.New(cfg, newSourceAt(t, c, prefix, nil), nows[i])
		if err != nil {
			t.Fatal(err)
		}
		lims[i] = l
	}
	req := ratelimit.Request{Name: ratelimit.OrderCreation, Key: "acct-1"}
	var ds []ratelimit.Decision
	for i := range 6 {
		before := time.Now()
		d, _, err := lims[i%2].Spend(t.Context(), req)
		if err != nil {
			t.Fatalf("spend %d: %v", i, err)
		}
		if d.At.Before(before.Add(-time.Second)) || d.At.After(time.Now().Add(time.Second)) {
			t.Errorf("spend %d by replica %d: At = %v, want Redis's clock (~%v), not the replica's", i, i%2, d.At, before)
		}
		if want := i < 3; d.Allowed != want || d.Remaining != max(2-int64(i), 0) {
			t.Errorf("spend %d by replica %d: allowed %v remaining %d, want %v %d", i, i%2, d.Allowed, d.Remaining, want, max(2-i, 0))
		}
		ds = append(ds, d)
	}
	// The three denials, from both replicas, name one retry instant and
	// one reset instant.
	retryAt := ds[3].At.Add(ds[3].RetryAfter)
	for _, d := range ds[4:] {
		if got := d.At.Add(d.RetryAfter); !got.Equal(retryAt) {
			t.Errorf("retry instants differ between replicas: %v and %v", got, retryAt)
		}
		if !d.ResetAt.Equal(ds[3].ResetAt) || d.Remaining != 0 {
			t.Errorf("denials differ: %+v and %+v", d, ds[3])
		}
	}
	if want := ds[0].At.Add(time.Hour); !retryAt.Equal(want) {
		t.Errorf("retry instant %v, want one emission interval after the first spend, %v", retryAt, want)
	}
	for i, l := range lims {
		d, err := l.Check(t.Context(), req)
		if err != nil || d.Allowed || d.Remaining != 0 || !d.ResetAt.Equal(ds[3].ResetAt) || !d.At.Add(d.RetryAfter).Equal(retryAt) {
			t.Errorf("replica %d: Check = %+v, %v; want denied until %v, reset at %v", i, d, err, retryAt, ds[3].ResetAt)
		}
	}
}

// TestRealClockRaces races N simultaneous requests through two replicas
// (two sources, two Limiters, Redis TIME) at buckets with exactly 10 left:
// exactly min(N, 10) pass in every one of 20 trials. The rate refills one
// token per 6 minutes, so real time passing during a race adds none.
func TestRealClockRaces(t *testing.T) {
	c := testClient(t)
	prefix := testPrefix(t, c)
	cfg := ratelimit.DefaultPolicy()
	cfg.Limits[ratelimit.OrderCreation] = ratelimit.Limit{Count: 10, Period: time.Hour, Burst: 20}
	cfg.Limits[ratelimit.DuplicateCertificate] = ratelimit.Limit{Max: 10, Window: time.Hour}
	var lims [2]*ratelimit.Limiter
	for i := range lims {
		l, err := ratelimit.New(cfg, newSourceAt(t, c, prefix, nil), nil)
		if err != nil {
			t.Fatal(err)
		}
		lims[i] = l
	}
	tests := []struct {
		name  string
		setup []ratelimit.Request
		req   func(key string, i int) ratelimit.Request
	}{
		{
			name:  "rate",
			setup: []ratelimit.Request{{Name: ratelimit.OrderCreation, Cost: 10}},
			req: func(key string, _ int) ratelimit.Request {
				return ratelimit.Request{Name: ratelimit.OrderCreation, Key: key}
			},
		},
		{
			name: "duplicate-certificate",
			req: func(key string, i int) ratelimit.Request {
				return ratelimit.Request{Name: ratelimit.DuplicateCertificate, Key: key, Member: fmt.Sprint("serial-", i)}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, n := range []int{10, 50, 200} {
				for trial := range 20 {
					key := fmt.Sprintf("acct-%d-%d", n, trial)
					for _, r := range tt.setup {
						r.Key = key
						if d, _, err := lims[0].Spend(t.Context(), r); err != nil || !d.Allowed {
							t.Fatalf("setup: %+v, %v", d, err)
						}
					}
					got := sourcetest.Race(t, n, func(i int) (ratelimit.Decision, error) {
						d, _, err := lims[i%2].Spend(t.Context(), tt.req(key, i))
						return d, err
					})
					if want := min(n, 10); got != want {
						t.Errorf("N=%d trial %d: %d admitted, want %d", n, trial+1, got, want)
					}
				}
			}
		})
	}
}

// cmdLog is a go-redis hook that records the name of every command sent,
// and can make the next EVALSHA fail with NOSCRIPT as a server that lost
// its script cache would.
type cmdLog struct {
	mu       sync.Mutex
	names    []string
	noScript bool
}

func (h *cmdLog) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.names
	h.names = nil
	return out
}

func (h *cmdLog) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (h *cmdLog) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		h.mu.Lock()
		h.names = append(h.names, cmd.Name())
		fail := h.noScript && cmd.Name() == "evalsha"
		h.noScript = h.noScript && !fail
		h.mu.Unlock()
		if fail {
			err := errors.New("NOSCRIPT No matching script. Please use EVAL.")
			cmd.SetErr(err)
			return err
		}
		return next(ctx, cmd)
	}
}

func (h *cmdLog) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		h.mu.Lock()
		for _, c := range cmds {
			h.names = append(h.names, c.Name())
		}
		h.mu.Unlock()
		return next(ctx, cmds)
	}
}

// TestOneRoundTrip counts the commands sent: once the scripts are loaded,
// a whole new-order Spend (9 buckets), a denied one, a Get and a Reset are
// one command each. A server without the script costs one extra round
// trip (EVALSHA refused, then EVAL), once.
func TestOneRoundTrip(t *testing.T) {
	c := testClient(t)
	src := newSource(t, c, nil)
	log := &cmdLog{}
	c.AddHook(log)
	lim, err := ratelimit.New(ratelimit.DefaultPolicy(), src, nil)
	if err != nil {
		t.Fatal(err)
	}
	expect := func(what string, want ...string) {
		t.Helper()
		if got := log.take(); !slices.Equal(got, want) {
			t.Errorf("%s sent %q, want %q", what, got, want)
		}
	}
	exp := time.Now().Add(time.Hour)
	for i := range 2 {
		d, _, err := lim.Spend(t.Context(), orderBatch("acct-1", exp, fmt.Sprint(i))...)
		if err != nil || !d.Allowed {
			t.Fatalf("new-order %d: %+v, %v", i, d, err)
		}
		expect(fmt.Sprintf("new-order Spend %d", i), "evalsha")
	}
	for range 3 { // exhaust order-creation's burst of 5
		lim.Spend(t.Context(), ratelimit.Request{Name: ratelimit.OrderCreation, Key: "acct-1"})
	}
	log.take()
	if d, _, err := lim.Spend(t.Context(), orderBatch("acct-1", exp, "denied")...); err != nil || d.Allowed {
		t.Fatalf("new-order past the burst: %+v, %v; want denied", d, err)
	}
	expect("a denied new-order Spend", "evalsha")
	if _, err := src.Get(t.Context(), []string{"order-creation:acct-1", "pending-authorizations:acct-1"}); err != nil {
		t.Fatal(err)
	}
	expect("Get", "evalsha")
	if err := src.Reset(t.Context(), "order-creation:acct-1"); err != nil {
		t.Fatal(err)
	}
	expect("Reset", "del")

	log.mu.Lock()
	log.noScript = true
	log.mu.Unlock()
	if d, _, err := lim.Spend(t.Context(), orderBatch("acct-2", exp, "x")...); err != nil || !d.Allowed {
		t.Fatalf("new-order after NOSCRIPT: %+v, %v", d, err)
	}
	expect("a Spend answered NOSCRIPT", "evalsha", "eval")
	if _, _, err := lim.Spend(t.Context(), orderBatch("acct-3", exp, "y")...); err != nil {
		t.Fatal(err)
	}
	expect("the Spend after", "evalsha")
}

// TestExpiry checks that stored buckets carry an expiry at the instant
// their state stops mattering, on Redis's clock, and vanish after it: a
// rate bucket just after its TAT, a count bucket just after its last
// member leaves (issue time + window, or the member's own expiry).
func TestExpiry(t *testing.T) {
	c := testClient(t)
	src := newSource(t, c, nil)
	rate := ratelimit.Limit{Count: 1, Period: 300 * time.Millisecond, Burst: 2}
	dup := ratelimit.Limit{Max: 5, Window: 400 * time.Millisecond}
	pending := ratelimit.Limit{Max: 5}
	const r, d, p, refunded = "order-creation:a", "duplicate-certificate:a:ff", "pending-authorizations:a", "order-creation:refunded"
	res, err := src.Apply(t.Context(), &ratelimit.Batch{Ops: []ratelimit.Op{
		{Kind: ratelimit.OpSpend, Key: r, Limit: rate, Cost: 2},
		{Kind: ratelimit.OpAdd, Key: d, Limit: dup, Member: "s1"},
		{Kind: ratelimit.OpAdd, Key: p, Limit: pending, Member: "z1", MemberTime: time.Now().Add(200 * time.Millisecond).UnixMicro()},
		{Kind: ratelimit.OpAdd, Key: p, Limit: pending, Member: "z2", MemberTime: time.Now().Add(500 * time.Millisecond).UnixMicro()},
		{Kind: ratelimit.OpSpend, Key: refunded, Limit: rate, Cost: 1},
	}})
	if err != nil || !res.Committed {
		t.Fatalf("Apply = %+v, %v", res, err)
	}
	// The expiry is the first whole millisecond after the instant.
	// Each key's last op reports the instant its bucket is free.
	for key, op := range map[string]int{r: 0, d: 1, p: 3} {
		at, err := c.PExpireTime(t.Context(), src.Key(key)).Result()
		if err != nil {
			t.Fatal(err)
		}
		if want := res.Results[op].TAT/1000 + 1; at.Milliseconds() != want {
			t.Errorf("%s expires at %d ms, want %d (just after %d µs)", key, at.Milliseconds(), want, res.Results[op].TAT)
		}
	}
	if want := res.Now + 600_000; res.Results[0].TAT != want {
		t.Errorf("rate TAT = %d, want now + 600 ms = %d", res.Results[0].TAT, want)
	}
	// A refund that fills the bucket deletes it at once.
	if _, err := src.Apply(t.Context(), &ratelimit.Batch{Ops: []ratelimit.Op{{Kind: ratelimit.OpRefund, Key: refunded, Limit: rate, Cost: 1}}}); err != nil {
		t.Fatal(err)
	}
	if n := c.Exists(t.Context(), src.Key(refunded)).Val(); n != 0 {
		t.Errorf("a full bucket is still stored after its refund")
	}

	time.Sleep(time.Until(time.UnixMicro(res.Results[0].TAT).Add(50 * time.Millisecond)))
	if n := c.Exists(t.Context(), src.Key(r), src.Key(d), src.Key(p)).Val(); n != 0 {
		t.Errorf("%d of 3 keys still exist after their expiry", n)
	}
	snap, err := src.Get(t.Context(), []string{r, d, p})
	if err != nil || len(snap.Buckets) != 0 {
		t.Errorf("Get after expiry = %+v, %v; want nothing", snap, err)
	}
}
