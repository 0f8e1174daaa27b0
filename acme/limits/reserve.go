// SPDX-License-Identifier: Apache-2.0

package limits

import (
	"context"
	"time"

	"github.com/weir-pki/weir/ratelimit"
)

// Under on-backend-error: degrade, every spend first reserves its rate
// requests on the in-process fallback, before it asks the backend. The
// fallback's rate buckets are then the replica's own count of what it
// admitted, by the backend and by the fallback together:
//
//   - the backend cannot decide: the reservation is the decision (degrade);
//   - the backend refuses: the reservation is released;
//   - the backend admits and the reservation holds: both are kept;
//   - the backend admits but the reservation was refused: the replica has
//     already admitted a limit's worth. If it admitted some of that in
//     process (a degraded decision within the bucket's refill time), the
//     backend does not know about those, and the request is refused with
//     the fallback's decision and Retry-After; the backend's spend is
//     refunded. Otherwise the fallback only lags the backend (a reset
//     served by another replica) and the backend is right: the request is
//     admitted and recorded in the fallback beyond its capacity (Recorder).
//
// So a replica never admits more than a limit, whichever of the two
// decided and however their answers raced, and N replicas at most N times
// it. A backend that answers again after a pause decides the requests
// queued in it while the fallback has already decided the same ones on
// their timeout: deciding them apart let each admit its own limit (28
// orders for a bound of 20, TestOrderLimitWithRedisPaused under load).
//
// Exact counts (pending-authorizations, duplicate-certificate) are not
// reserved: the fallback's copy of them is filled from the store only when
// an episode starts, so it decides them only then (degrade); otherwise it
// records what the backend admitted.

// reservation is one spend's hold on the fallback.
type reservation struct {
	fb     *ratelimit.Limiter
	d      ratelimit.Decision // the fallback's decision of the rate requests
	spent  *ratelimit.Spent   // nil when d refused
	counts []ratelimit.Request
}

// reserve spends the rate requests of reqs on the fallback; nil when
// there is no fallback to reserve on (or reqs are malformed: the backend
// says so).
func (r *Adapter) reserve(ctx context.Context, st *state, reqs []ratelimit.Request) *reservation {
	fb := st.cfg.Fallback
	if fb == nil || st.cfg.OnBackendError != BackendDegrade {
		return nil
	}
	rate, counts := splitKinds(st.lim.Enforced(reqs))
	d, spent, err := fb.Spend(context.WithoutCancel(ctx), rate...)
	if err != nil {
		return nil
	}
	return &reservation{fb: fb, d: d, spent: spent, counts: counts}
}

// release gives the reservation back (the request was not admitted).
func (res *reservation) release(ctx context.Context) {
	if res != nil && res.spent != nil {
		_ = res.fb.Refund(context.WithoutCancel(ctx), res.spent) // in process: fails only on a malformed request
	}
}

// held reports whether the reservation holds the request's rate tokens.
func (res *reservation) held() bool { return res != nil && res.d.Allowed }

// overrules reports whether the reservation's refusal stands against the
// backend's admission: the replica admitted in process within the refill
// time of a refusing bucket.
func (r *Adapter) overrules(res *reservation, now time.Time) bool {
	if res == nil || res.d.Allowed {
		return false
	}
	last := r.degraded.lastAdmit.Load()
	if last == 0 {
		return false
	}
	since := now.Sub(time.Unix(0, last))
	for _, b := range res.d.Denied {
		if since < refillTime(b.Policy) {
			return true
		}
	}
	return false
}

// refillTime is how long an empty rate bucket of l takes to fill.
func refillTime(l ratelimit.Limit) time.Duration {
	return max(l.Period, time.Duration(l.Burst*l.Emission())*time.Microsecond)
}

// keep records in the fallback what the backend admitted and returns the
// fallback's refund: the reservation and the exact counts recorded beside
// it, or, without a reservation, everything recorded (Recorder).
func (r *Adapter) keep(ctx context.Context, st *state, res *reservation, reqs []ratelimit.Request) func() {
	if res.held() {
		counts := r.mirror(ctx, st, res.counts)
		return func() {
			res.release(ctx)
			if counts != nil {
				counts()
			}
		}
	}
	return r.mirror(ctx, st, reqs)
}

// splitKinds returns the rate and the exact-count requests of reqs
// (reqs itself when all are rates).
func splitKinds(reqs []ratelimit.Request) (rate, counts []ratelimit.Request) {
	n := 0
	for _, rq := range reqs {
		if rq.Name.Kind() == ratelimit.KindCount {
			n++
		}
	}
	if n == 0 {
		return reqs, nil
	}
	rate = make([]ratelimit.Request, 0, len(reqs)-n)
	counts = make([]ratelimit.Request, 0, n)
	for _, rq := range reqs {
		if rq.Name.Kind() == ratelimit.KindCount {
			counts = append(counts, rq)
		} else {
			rate = append(rate, rq)
		}
	}
	return rate, counts
}
