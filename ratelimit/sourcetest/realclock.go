// SPDX-License-Identifier: Apache-2.0

package sourcetest

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/weir-pki/weir/ratelimit"
)

// The two tests here hammer one 100/s, burst 10 bucket (emission interval
// T = 10 ms) from many goroutines through two replicas sharing the source.
//
// GCRA admits a request at a iff every run of admissions a_j … a, in the
// order the source decided them and a included, holds at most
// 10 + (a − a_j)/T of them; it denies one at d iff some run of admissions
// a_j … a_n decided before it holds more than 9 + (d − a_j)/T. Both are
// facts about the decisions and the times the source put on them
// (Decision.At, read under the source's lock), whatever the scheduler did,
// so checkGCRA checks both for every decision, on the real clock too.
//
// How many are admitted in a window is not such a fact: when every client
// is descheduled for longer than T (a loaded machine), the tokens of that
// gap are never spent. That count is checked on synctest's fake clock,
// where the clients keep asking by construction.
const (
	hammerBurst    = 10
	hammerInterval = 10 * time.Millisecond
	hammerWindow   = 2 * time.Second
)

// decision is one Spend's outcome, in microseconds of the source's clock.
type decision struct {
	at      int64
	allowed bool
}

// testRealClock hammers the bucket from 50 goroutines for 2.3 s on the
// real clock (time.Now; Redis TIME for Redis) and checks every decision
// with checkGCRA.
func testRealClock(t *testing.T, newSource newSourceFunc) {
	if testing.Short() {
		t.Skip("runs for 2 s of real time")
	}
	src := newSource(t, time.Now)
	ds := hammer(t, src, time.Now, "acct-real-clock", 50, time.Now().Add(hammerWindow+300*time.Millisecond), 0)
	admitted := checkGCRA(t, ds)
	t.Logf("%d decisions, %d admitted, %d of them in [t0, t0+2s] (210 if the clients were never all descheduled for over 10 ms)",
		len(ds), len(admitted), inWindow(admitted))
}

// testSteadyDemand hammers the bucket on synctest's fake clock: 16
// goroutines each spend, then sleep 5 ms, until 2.05 s have passed. Every
// 10 ms a token appears while clients are asking for it, so exactly
// 10 + 200 are admitted in [t0, t0+2s], however slowly the machine runs.
// The source reads time.Now through a closure, not time.Now itself, so a
// source that would use its backend's clock for time.Now (Redis TIME)
// takes the bubble's.
func testSteadyDemand(t *testing.T, newSource newSourceFunc) {
	synctest.Test(t, func(t *testing.T) {
		src := newSource(t, func() time.Time { return time.Now() })
		start := time.Now()
		ds := hammer(t, src, time.Now, "acct-steady-demand", 16, start.Add(hammerWindow+50*time.Millisecond), 5*time.Millisecond)
		admitted := checkGCRA(t, ds)
		if admitted[0] != start.UnixMicro() {
			t.Errorf("first admission at %v, want the start %v", time.UnixMicro(admitted[0]).UTC(), start.UTC())
		}
		if got, want := inWindow(admitted), hammerBurst+int(hammerWindow/hammerInterval); got != want {
			t.Errorf("%d admitted in [t0, t0+2s] with clients asking every 5 ms, want %d", got, want)
		}
	})
}

// hammer spends one token of key from workers goroutines, alternating
// between two replicas on src, until now reaches until (each worker
// spends at least once), sleeping pause between spends, and returns every
// decision.
func hammer(t *testing.T, src ratelimit.Source, now func() time.Time, key string, workers int, until time.Time, pause time.Duration) []decision {
	t.Helper()
	cfg := ratelimit.DefaultPolicy()
	cfg.Limits[ratelimit.OrderCreation] = ratelimit.Limit{Count: 100, Period: time.Second, Burst: hammerBurst}
	lims := replicas(t, cfg, src, now)
	req := ratelimit.Request{Name: ratelimit.OrderCreation, Key: key}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		all    []decision
		failed atomic.Pointer[error]
		gate   = make(chan struct{})
	)
	for w := range workers {
		wg.Go(func() {
			<-gate
			var mine []decision
			for {
				d, _, err := lims[w%2].Spend(t.Context(), req)
				if err != nil {
					failed.Store(&err)
					return
				}
				mine = append(mine, decision{at: d.At.UnixMicro(), allowed: d.Allowed})
				if !now().Before(until) {
					break
				}
				if pause > 0 {
					time.Sleep(pause)
				}
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		})
	}
	close(gate)
	wg.Wait()
	if err := failed.Load(); err != nil {
		t.Fatalf("Spend: %v", *err)
	}
	return all
}

// checkGCRA checks every decision of ds, made on one fresh bucket, against
// the two facts above, and returns the admission times, sorted.
//
// With the admissions sorted, A[0..k], a run A[i..k] breaks the first fact
// iff (k−i+1−10)·T > A[k]−A[i], that is iff g(i) > A[k] − (k+1−10)·T where
// g(i) = A[i] − i·T; so comparing with the running maximum of g checks
// every run. A denial at d is justified iff some run A[i..e], e the last
// admission at or before d, has (e−i+2−10)·T > d − A[i], again through
// the maximum of g up to e. Admissions at the very instant of a denial
// may have been decided after it; counting them only makes that check
// more lenient.
func checkGCRA(t *testing.T, ds []decision) []int64 {
	t.Helper()
	var admitted, denied []int64
	for _, d := range ds {
		if d.allowed {
			admitted = append(admitted, d.at)
		} else {
			denied = append(denied, d.at)
		}
	}
	if len(admitted) == 0 {
		t.Fatalf("%d decisions, none admitted", len(ds))
	}
	slices.Sort(admitted)
	slices.Sort(denied)
	const b, T = int64(hammerBurst), int64(hammerInterval / time.Microsecond)
	maxG := make([]int64, len(admitted)) // maxG[k] = max of g(0..k)
	for k, a := range admitted {
		maxG[k] = a - int64(k)*T
		if k > 0 {
			maxG[k] = max(maxG[k], maxG[k-1])
		}
		if maxG[k] > a-(int64(k)+1-b)*T {
			t.Fatalf("admission %d at t0+%v: a run ending there holds more than 10 + elapsed/10ms admissions",
				k+1, time.Duration(a-admitted[0])*time.Microsecond)
		}
	}
	e := -1 // the last admission at or before the denial
	for _, d := range denied {
		for e+1 < len(admitted) && admitted[e+1] <= d {
			e++
		}
		if e < 0 || maxG[e] <= d-(int64(e)+2-b)*T {
			t.Fatalf("denial at t0+%v with %d admitted so far: no run of admissions before it used up the bucket, so a token was left",
				time.Duration(d-admitted[0])*time.Microsecond, e+1)
		}
	}
	return admitted
}

// inWindow returns how many of the sorted admissions fall in
// [t0, t0 + 2 s], t0 the first.
func inWindow(admitted []int64) int {
	end := admitted[0] + hammerWindow.Microseconds()
	n, _ := slices.BinarySearch(admitted, end+1)
	return n
}
