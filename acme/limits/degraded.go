// SPDX-License-Identifier: Apache-2.0

package limits

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ratelimit"
)

// on-backend-error: degrade. When the backend fails or misses
// backend-timeout, the request is decided by the in-process fallback
// limiter (Config.Fallback) at the configured limits, where every request
// reserved its rate tokens before the backend was asked (reserve.go), so
// each replica admits at most a limit on its own: N replicas at most N
// times a limit, never unlimited. The exact counts (duplicate-certificate,
// pending-authorizations) are filled from the store at the start of each
// episode (Config.FallbackSeed), but not again within reseedAfter of the
// last seed: a backend that flaps under load (each flap ends an episode
// and starts one) reuses the counts of that seed, which lack at most the
// spends of the last reseedAfter, instead of reading the store at every
// flap; a request that needs them waits for that
// within what is left of its backend-timeout, and is refused with 503
// (Retry-After) if they are not there by then. Every degraded decision is counted (DegradedDecisions,
// the observer's LimiterEvent.Degraded) and logged, at most one line per
// degradedLogEvery with the count since the last. The first decision the
// backend makes again ends the episode.

// degradedLogEvery spaces the log lines of degraded decisions.
const degradedLogEvery = 10 * time.Second

// degradedState is the adapter's degraded episode.
type degradedState struct {
	since     atomic.Int64 // Unix nanoseconds the episode began; 0 when none
	decisions atomic.Uint64
	// lastAdmit is when the fallback last admitted a request the backend
	// could not decide (Unix nanoseconds; 0 never): reserve.go.
	lastAdmit atomic.Int64
	unlogged  atomic.Uint64
	lastLog   atomic.Int64
	// seeded is closed once the episode's FallbackSeed has ended.
	seeded atomic.Pointer[chan struct{}]
	// lastSeed is when the last FallbackSeed started (Unix nanoseconds;
	// 0 never).
	lastSeed atomic.Int64
}

// reseedAfter is how long the counts of a FallbackSeed serve the episodes
// that start after it. The fleet drill found the cost of less: 5,000
// clients' renewals overloaded a 2-core weir, its SQLite limiter missed
// backend-timeout by turns, and a seed at each flap (a read of every
// certificate of the longest window) took a third of its CPU.
const reseedAfter = time.Minute

// seedTimeout bounds one FallbackSeed.
const seedTimeout = 30 * time.Second

// decided notes that the backend decided: the episode, if any, ends.
func (d *degradedState) decided() { d.since.Store(0) }

// failed notes that the backend could not decide, starting an episode
// (and the seed of the fallback's exact counts, when seed is set).
func (d *degradedState) failed(now time.Time, seed func(context.Context) error) {
	if !d.since.CompareAndSwap(0, now.UnixNano()) {
		return
	}
	if last := d.lastSeed.Load(); seed != nil && last != 0 && now.Sub(time.Unix(0, last)) < reseedAfter && d.seeded.Load() != nil {
		return // the last seed's counts (or the seed still running) serve
	}
	d.lastSeed.Store(now.UnixNano())
	done := make(chan struct{})
	d.seeded.Store(&done)
	if seed == nil {
		close(done)
		return
	}
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(context.Background(), seedTimeout)
		defer cancel()
		_ = seed(ctx) // a store that cannot be read leaves the counts the fallback has
	}()
}

// waitSeed waits until the episode's seed has ended or deadline passes,
// and reports whether it has ended.
func (d *degradedState) waitSeed(deadline time.Time) bool {
	p := d.seeded.Load()
	if p == nil {
		return true
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-*p:
		return true
	case <-t.C:
		return false
	}
}

// DegradedSince is when the current degraded episode began: the first
// backend failure since the backend last decided (or answered NoteBackend).
// Zero when the backend is deciding.
func (r *Adapter) DegradedSince() time.Time {
	if n := r.degraded.since.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// Degraded reports how long the current degraded episode has lasted
// (0 when none) and whether that is longer than DegradedReadyAfter. It is
// always false under deny and allow, whose readiness is the backend's.
func (r *Adapter) Degraded(now time.Time) (time.Duration, bool) {
	since := r.DegradedSince()
	if since.IsZero() {
		return 0, false
	}
	d := now.Sub(since)
	after := r.state.Load().cfg.DegradedReadyAfter
	return d, r.Degrades() && after > 0 && d > after
}

// Degrades reports whether a backend failure is resolved by the
// in-process fallback (on-backend-error: degrade with a fallback).
func (r *Adapter) Degrades() bool {
	cfg := r.state.Load().cfg
	return cfg.OnBackendError == BackendDegrade && cfg.Fallback != nil
}

// DegradedDecisions is the number of requests decided by the fallback.
func (r *Adapter) DegradedDecisions() uint64 { return r.degraded.decisions.Load() }

// NoteBackend records the outcome of a readiness probe of the backend: an
// answer ends a degraded episode (so that a replica taken out of rotation,
// which gets no requests, comes back), a failure starts one. Only under
// degrade: deny and allow have no episodes.
func (r *Adapter) NoteBackend(err error) {
	if !r.Degrades() {
		return
	}
	if err == nil {
		r.degraded.decided()
		return
	}
	r.degraded.failed(time.Now(), r.state.Load().cfg.FallbackSeed)
}

// spendWithin spends reqs on lim, giving up at timeout whatever the
// backend's client does: the backend's answer is not awaited beyond it. A
// spend that commits after the deadline is refunded at once, so a late
// answer cannot spend twice.
func spendWithin(ctx context.Context, timeout time.Duration, lim *ratelimit.Limiter, reqs []ratelimit.Request) (ratelimit.Decision, *ratelimit.Spent, error) {
	type result struct {
		d     ratelimit.Decision
		spent *ratelimit.Spent
		err   error
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	done := make(chan result, 1)
	go func() {
		d, spent, err := lim.Spend(dctx, reqs...)
		done <- result{d, spent, err}
	}()
	select {
	case res := <-done:
		cancel()
		return res.d, res.spent, res.err
	case <-dctx.Done():
		err := dctx.Err()
		go func() {
			defer cancel()
			if res := <-done; res.err == nil && res.spent != nil {
				rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
				defer rcancel()
				_ = lim.Refund(rctx, res.spent) // best effort: a failure leaves the limit stricter, not looser
			}
		}()
		return ratelimit.Decision{}, nil, fmt.Errorf("ratelimit: no decision within backend-timeout %s: %w", timeout, err)
	}
}

// degrade decides the failed call ev with the fallback limiter, by the
// end of the backend-timeout of the step that began at start: its rate
// requests by the reservation res made before the backend was asked
// (reserve.go), its exact counts once the episode's seed has filled them.
func (r *Adapter) degrade(ctx context.Context, st *state, ev acme.LimiterEvent, sub spendSubject, start time.Time, res *reservation) (func(), error) {
	now, deadline := time.Now(), start.Add(st.cfg.BackendTimeout)
	if res.held() {
		r.degraded.lastAdmit.Store(now.UnixNano())
	}
	r.degraded.failed(now, st.cfg.FallbackSeed)
	if res.held() && len(res.counts) > 0 && !r.degraded.waitSeed(deadline) {
		res.release(ctx)
		ev.Err = fmt.Errorf("%w; the in-process fallback's exact counts are still being read from the store", ev.Err)
		ev.Latency = time.Since(start)
		return r.backendFailed(ctx, &state{lim: st.lim, cfg: Config{OnBackendError: BackendDeny}}, ev)
	}
	r.backendErrors.Add(1)
	d, spent := res.d, (*ratelimit.Spent)(nil)
	if res.held() && len(res.counts) > 0 {
		dc, sc, err := st.cfg.Fallback.Spend(context.WithoutCancel(ctx), res.counts...)
		if err != nil {
			// The in-process limiter failed too (malformed requests): refuse.
			res.release(ctx)
			ev.Err = fmt.Errorf("%w; the in-process fallback failed too: %w", ev.Err, err)
			return r.backendFailed(ctx, &state{lim: st.lim, cfg: Config{OnBackendError: BackendDeny}}, ev)
		}
		if d, spent = ratelimit.Join(d, dc), sc; !dc.Allowed {
			res.release(ctx)
		}
	}
	r.degraded.decisions.Add(1)
	r.logDegraded(ctx, ev, now)
	ev.Ignored, ev.Degraded, ev.Decision, ev.Latency = true, true, d, time.Since(start)
	r.report(ctx, st, ev, resolvedDegrade)
	noteQuota(ctx, ev.Action, d)
	if !d.Allowed {
		return nil, rateLimitedProblem(d, st.cfg.HelpURL, sub)
	}
	counts := refundOf(ctx, r, st, st.cfg.Fallback, res.counts, spent)
	return func() { res.release(ctx); counts() }, nil
}

// mirror records in the fallback what the backend has just admitted, so
// that a replica that degrades knows what it admitted before: its
// admissions, by the backend and by the fallback together, stay within a
// limit, and N replicas within N times it. It records through the
// fallback's Recorder, which never refuses: a degraded decision of another
// request may have taken the fallback's last token between this one's
// backend decision and its mirror (under load, with the backend pausing),
// and a mirror dropped then let the replica admit beyond the limit. It
// returns the mirror's refund, nil when nothing was recorded.
func (r *Adapter) mirror(ctx context.Context, st *state, reqs []ratelimit.Request) func() {
	if st.recorder == nil || st.cfg.OnBackendError != BackendDegrade || len(reqs) == 0 {
		return nil
	}
	fb := st.recorder
	d, spent, err := fb.Spend(context.WithoutCancel(ctx), reqs...)
	if err != nil || !d.Allowed {
		return nil
	}
	return func() { _ = fb.Refund(context.WithoutCancel(ctx), spent) }
}

// logDegraded logs degraded decisions, one line per degradedLogEvery.
func (r *Adapter) logDegraded(ctx context.Context, ev acme.LimiterEvent, now time.Time) {
	n := r.degraded.unlogged.Add(1)
	last := r.degraded.lastLog.Load()
	if now.UnixNano()-last < int64(degradedLogEvery) || !r.degraded.lastLog.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	r.degraded.unlogged.Add(-n)
	r.log.LogAttrs(ctx, slog.LevelWarn, "rate limiter degraded: the backend cannot decide, this replica decides in process at the configured limits",
		slog.Uint64("decisions_since_last_line", n), slog.String("action", ev.Action), slog.String("err", ev.Err.Error()),
		slog.Time("degraded_since", r.DegradedSince()))
}

// fallbackRecord keeps the fallback's count buckets in step: a removal
// (an authorization left pending, a certificate revoked) always applies
// to it, and a failed validation is recorded there when the backend could
// not record it.
func (r *Adapter) fallbackRecord(ctx context.Context, st *state, free ratelimit.Request, failed []ratelimit.Request, backendFailed bool) {
	fb := st.cfg.Fallback
	if fb == nil || st.cfg.OnBackendError != BackendDegrade {
		return
	}
	ctx = context.WithoutCancel(ctx)
	_ = fb.Remove(ctx, free) // in process: fails only on a malformed request
	if backendFailed && len(failed) > 0 {
		_, _, _ = fb.Spend(ctx, failed...)
	}
}
