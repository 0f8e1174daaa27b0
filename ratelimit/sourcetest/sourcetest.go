// SPDX-License-Identifier: Apache-2.0

// Package sourcetest is the behaviour suite every ratelimit.Source must pass:
// the memory source runs it in ratelimit's own tests, and the SQLite and
// Redis backends run exactly the same tests against real storage.
//
// The suite checks the contract op by op with worked numbers (GCRA and
// exact counts, retry times to the microsecond), the atomicity of a batch
// (one denial writes nothing), read-only Get and Reset, and concurrency:
// two Limiters sharing one Source, as two replicas share one backend, must
// admit exactly the limit under simultaneous requests.
package sourcetest

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-pki/weir/ratelimit"
)

// newSourceFunc is the factory Run takes.
type newSourceFunc = func(t *testing.T, now func() time.Time) ratelimit.Source

// Run runs the whole suite against the sources newSource returns. Each
// subtest asks for its own, empty Source, which must read its clock from
// now: a fake clock for most of the suite, time.Now for the real-clock
// test, and a closure reading time.Now inside a synctest bubble for the
// steady-demand test, so the source must be usable from a bubble. A
// backend whose clock lives elsewhere (Redis TIME) needs a test-only way to
// take now instead.
func Run(t *testing.T, newSource func(t *testing.T, now func() time.Time) ratelimit.Source) {
	t.Run("Rate", func(t *testing.T) { testRate(t, newSource) })
	t.Run("DuplicateCertificate", func(t *testing.T) { testDuplicateCertificate(t, newSource) })
	t.Run("PendingAuthorizations", func(t *testing.T) { testPendingAuthorizations(t, newSource) })
	t.Run("Batch", func(t *testing.T) { testBatch(t, newSource) })
	t.Run("InvalidOps", func(t *testing.T) { testInvalidOps(t, newSource) })
	t.Run("GetReset", func(t *testing.T) { testGetReset(t, newSource) })
	t.Run("Concurrency", func(t *testing.T) { testConcurrency(t, newSource) })
	t.Run("RealClock", func(t *testing.T) { testRealClock(t, newSource) })
	t.Run("SteadyDemand", func(t *testing.T) { testSteadyDemand(t, newSource) })
}

// Clock is a fake clock that is safe for concurrent use. Its zero value
// reads the Unix epoch; use NewClock.
type Clock struct {
	us atomic.Int64
}

// NewClock returns a Clock reading start.
func NewClock(start time.Time) *Clock {
	c := &Clock{}
	c.us.Store(start.UnixMicro())
	return c
}

// Now returns the clock's time; pass c.Now as a now func.
func (c *Clock) Now() time.Time { return time.UnixMicro(c.us.Load()) }

// Advance moves the clock forward by d (microsecond resolution).
func (c *Clock) Advance(d time.Duration) { c.us.Add(d.Microseconds()) }

// start is the fake clock's start: a round instant, so retry times in
// failure messages are easy to read.
func start() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }

// env is one subtest's source and clock.
type env struct {
	t     *testing.T
	src   ratelimit.Source
	clock *Clock
	t0    int64
}

func newEnv(t *testing.T, newSource newSourceFunc) *env {
	t.Helper()
	c := NewClock(start())
	return &env{t: t, src: newSource(t, c.Now), clock: c, t0: c.Now().UnixMicro()}
}

// apply applies ops as one batch and checks the shape of the result and
// that the source decided at the fake clock's now.
func (e *env) apply(ops ...ratelimit.Op) *ratelimit.BatchResult {
	e.t.Helper()
	res, err := e.src.Apply(e.t.Context(), &ratelimit.Batch{Ops: ops})
	if err != nil {
		e.t.Fatalf("Apply: %v", err)
	}
	if got, want := len(res.Results), len(ops); got != want {
		e.t.Fatalf("Apply returned %d results for %d ops", got, want)
	}
	if got, want := res.Now, e.clock.Now().UnixMicro(); got != want {
		e.t.Fatalf("BatchResult.Now = %d, want the source clock %d", got, want)
	}
	return res
}

// get reads keys and checks the snapshot's clock.
func (e *env) get(keys ...string) map[string]ratelimit.Bucket {
	e.t.Helper()
	snap, err := e.src.Get(e.t.Context(), keys)
	if err != nil {
		e.t.Fatalf("Get: %v", err)
	}
	if got, want := snap.Now, e.clock.Now().UnixMicro(); got != want {
		e.t.Fatalf("Snapshot.Now = %d, want the source clock %d", got, want)
	}
	return snap.Buckets
}

// want is the expected result of one op; tat is relative to the env's t0.
type want struct {
	allowed, applied, never bool
	remaining               int64
	retry                   time.Duration
	tat                     time.Duration
}

// step is one line of a scripted test: advance the clock, apply op alone.
type step struct {
	name    string
	advance time.Duration
	op      ratelimit.Op
	want    want
}

// runSteps applies each step as its own batch and compares every field.
func (e *env) runSteps(steps []step) {
	e.t.Helper()
	for i, s := range steps {
		e.clock.Advance(s.advance)
		res := e.apply(s.op)
		e.checkResult(i, s.name, res.Results[0], s.want)
		if got, want := res.Committed, s.want.allowed; got != want {
			e.t.Errorf("step %d (%s): Committed = %v, want %v", i, s.name, got, want)
		}
	}
}

// checkResult compares one op result with w.
func (e *env) checkResult(i int, name string, got ratelimit.OpResult, w want) {
	e.t.Helper()
	wantTAT := e.t0 + w.tat.Microseconds()
	wantRes := ratelimit.OpResult{
		Allowed: w.allowed, Applied: w.applied, Never: w.never,
		Remaining: w.remaining, RetryAfter: w.retry.Microseconds(), TAT: wantTAT,
	}
	if got != wantRes {
		e.t.Errorf("step %d (%s):\n got %+v\nwant %+v (TAT as t0%+d µs)", i, name, got, wantRes, w.tat.Microseconds())
	}
}
