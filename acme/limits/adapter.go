// SPDX-License-Identifier: Apache-2.0

package limits

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ratelimit"
)

// BackendPolicy says what happens to a request when the limiter's backend
// cannot decide in time.
type BackendPolicy string

// The on-backend-error policies (ratelimit.OnBackendDegrade, …).
const (
	BackendDegrade BackendPolicy = ratelimit.OnBackendDegrade
	BackendAllow   BackendPolicy = ratelimit.OnBackendAllow
	BackendDeny    BackendPolicy = ratelimit.OnBackendDeny
)

// Config is how Adapter applies the limiter.
type Config struct {
	// OnBackendError decides requests the backend could not
	// (degrade|deny|allow).
	OnBackendError BackendPolicy
	// BackendTimeout bounds one limiter decision, a hard deadline: the
	// adapter stops waiting for the backend then, whatever the backend's
	// client does.
	BackendTimeout time.Duration
	// Fallback is the in-process limiter of on-backend-error: degrade,
	// at the same limits over a memory source that outlives reloads.
	// Without it, degrade acts as deny.
	Fallback *ratelimit.Limiter
	// FallbackSeed, when set, fills the fallback's exact counts from the
	// store; it runs at the start of each degraded episode (degraded.go).
	FallbackSeed func(ctx context.Context) error
	// DegradedReadyAfter is how long a degraded episode may last before
	// Degraded reports it too long (readiness then fails).
	DegradedReadyAfter time.Duration
	// Whitelist bypasses the IP-keyed limits (account-creation here; the
	// global layer lives in web) for these ranges.
	Whitelist []netip.Prefix
	// HelpURL is sent as Link rel="help" on every 429.
	HelpURL string
}

// Adapter is the acme.Limits of a server with rate limiting: it turns the
// use cases' hooks into the requests of ratelimit/actions.go and denials
// into rateLimited problems.
type Adapter struct {
	state    atomic.Pointer[state]
	observer atomic.Pointer[acme.Observer]
	log      *slog.Logger
	// BackendErrors counts decisions the backend failed to make.
	backendErrors atomic.Uint64
	// eabLabels finds the EAB label whose overrides an account's own
	// limits take (SetEABKeys); nil: none.
	eabLabels atomic.Pointer[eabLabels]
	// degraded is the state of on-backend-error: degrade (degraded.go).
	degraded degradedState
}

var _ acme.Limits = (*Adapter)(nil)

// state is what a reload swaps.
type state struct {
	lim *ratelimit.Limiter
	cfg Config
	// recorder is cfg.Fallback's Recorder, which mirrors what the backend
	// admitted (nil without a fallback).
	recorder *ratelimit.Limiter
}

// New returns the Adapter applying lim as cfg says. log nil discards.
func New(cfg Config, lim *ratelimit.Limiter, log *slog.Logger) *Adapter {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Adapter{log: log}
	r.Update(cfg, lim)
	return r
}

// Update swaps the limiter and its settings (live reload). Buckets live in
// the limiter's Source, so what was spent stays spent.
func (r *Adapter) Update(cfg Config, lim *ratelimit.Limiter) {
	if cfg.BackendTimeout <= 0 {
		cfg.BackendTimeout = 500 * time.Millisecond
	}
	if cfg.OnBackendError == "" {
		cfg.OnBackendError = BackendDegrade
	}
	st := &state{lim: lim, cfg: cfg}
	if cfg.Fallback != nil {
		st.recorder = cfg.Fallback.Recorder()
	}
	r.state.Store(st)
}

// SetObserver installs the observer of every limiter call; nil means
// acme.NopObserver. It may be called at any time.
func (r *Adapter) SetObserver(o acme.Observer) {
	if o == nil {
		o = acme.NopObserver{}
	}
	r.observer.Store(&o)
}

// obs returns the current observer.
func (r *Adapter) obs() acme.Observer {
	if o := r.observer.Load(); o != nil {
		return *o
	}
	return acme.NopObserver{}
}

// noRefund is the refund of a call that spent nothing.
func noRefund() {}

// BackendErrors is the number of decisions the backend failed to make.
func (r *Adapter) BackendErrors() uint64 { return r.backendErrors.Load() }

// whitelisted reports whether ip bypasses the IP-keyed limits.
func (r *Adapter) whitelisted(ip netip.Addr) bool {
	for _, p := range r.state.Load().cfg.Whitelist {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// The actions of the LimiterEvents that Adapter reports, besides the
// hooks' own ("new-account", "new-order", "finalize", "authz-finished",
// "revoked"): a failed refund.
const actionRefund = "refund"

// How an ignored or fatal backend error was resolved, for the request's
// log line.
const (
	resolvedAllow   = "ignored: on-backend-error is allow"
	resolvedDeny    = "refused with 503: on-backend-error is deny"
	resolvedDegrade = "decided in process: on-backend-error is degrade"
	resolvedNone    = "ignored: bookkeeping only, nothing was being decided"
)

// report hands one limiter call to the observer and summarises it on the
// request's log line (acme.RequestEvent). how says what became of ev.Err. Only
// the requests the limiter enforces are reported; a call that asked about
// none of them decided nothing and is not reported.
func (r *Adapter) report(ctx context.Context, st *state, ev acme.LimiterEvent, how string) {
	if ev.Requests = st.lim.Enforced(ev.Requests); len(ev.Requests) == 0 {
		return
	}
	r.obs().Limiter(ev)
	re := acme.RequestEventFrom(ctx)
	if re == nil {
		return
	}
	switch {
	case ev.Err != nil:
		re.Limiter = joinNote(re.Limiter, "error")
		re.LimiterError = joinNote(re.LimiterError, fmt.Sprintf("%s: %v (%s)", ev.Action, ev.Err, how))
	case ev.Decision.Limit.Valid():
		re.Limiter = joinNote(re.Limiter, DecisionSummary(ev.Decision))
	}
}

// DecisionSummary is a limiter decision in a few words, for a log line:
// "allowed order-creation:12 remaining=4" (the bucket with the least
// left) or "denied order-creation:12 retry-after=3m0s" (the strictest
// denial, its wait rounded up to the second as Retry-After is).
func DecisionSummary(d ratelimit.Decision) string {
	bucket := ratelimit.BucketKey(d.Limit, d.Key)
	if d.Allowed {
		return "allowed " + bucket + " remaining=" + strconv.FormatInt(d.Remaining, 10)
	}
	s := "denied " + bucket
	if d.Never {
		s += " never (the request is larger than the burst)"
	} else {
		s += " retry-after=" + (time.Duration(ratelimit.CeilSeconds(d.RetryAfter)) * time.Second).String()
	}
	if n := len(d.Denied); n > 1 {
		s += " (+" + strconv.Itoa(n-1) + " more denied)"
	}
	return s
}

// joinNote appends note to s, "; "-separated: one request may call the
// limiter more than once.
func joinNote(s, note string) string {
	if s == "" {
		return note
	}
	return s + "; " + note
}

// spend spends reqs within the backend timeout and applies the backend
// policy to failures. sub names what the spend pays for, so that a
// denial can name its identifiers.
func (r *Adapter) spend(ctx context.Context, action string, sub spendSubject, reqs ...ratelimit.Request) (func(), error) {
	st := r.state.Load()
	start := time.Now()
	res := r.reserve(ctx, st, reqs)
	d, spent, err := spendWithin(ctx, st.cfg.BackendTimeout, st.lim, reqs)
	lat := time.Since(start)
	if err != nil {
		ev := acme.LimiterEvent{Action: action, Requests: reqs, Err: err, Latency: lat}
		if res != nil && !errors.Is(err, ratelimit.ErrUnwritable) {
			return r.degrade(ctx, st, ev, sub, start, res)
		}
		res.release(ctx)
		if errors.Is(err, ratelimit.ErrUnwritable) {
			return r.cannotWrite(ctx, st, ev)
		}
		return r.backendFailed(ctx, st, ev)
	}
	r.degraded.decided()
	if !d.Allowed {
		res.release(ctx)
	} else if r.overrules(res, start) {
		refundOf(ctx, r, st, st.lim, reqs, spent)()
		d, lat = res.d, time.Since(start)
	}
	r.report(ctx, st, acme.LimiterEvent{Action: action, Requests: reqs, Decision: d, Latency: lat}, "")
	noteQuota(ctx, action, d)
	if !d.Allowed {
		return nil, rateLimitedProblem(d, st.cfg.HelpURL, sub)
	}
	refund := refundOf(ctx, r, st, st.lim, reqs, spent)
	if kept := r.keep(ctx, st, res, reqs); kept != nil {
		return func() { refund(); kept() }, nil
	}
	return refund, nil
}

// refundOf is the refund of what lim spent for reqs.
func refundOf(ctx context.Context, r *Adapter, st *state, lim *ratelimit.Limiter, reqs []ratelimit.Request, spent *ratelimit.Spent) func() {
	return func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), st.cfg.BackendTimeout)
		defer cancel()
		start := time.Now()
		if err := lim.Refund(rctx, spent); err != nil {
			r.backendErrors.Add(1)
			r.report(ctx, st, acme.LimiterEvent{Action: actionRefund, Requests: reqs, Err: err, Ignored: true, Latency: time.Since(start)}, resolvedNone)
			r.log.Warn("rate limiter refund failed", "err", err)
		}
	}
}

// backendFailed applies on-backend-error to the failed call ev; the
// decision is logged, counted and observed either way.
func (r *Adapter) backendFailed(ctx context.Context, st *state, ev acme.LimiterEvent) (func(), error) {
	r.backendErrors.Add(1)
	err := ev.Err
	ev.Ignored = st.cfg.OnBackendError != BackendDeny
	how := resolvedAllow
	if !ev.Ignored {
		how = resolvedDeny
	}
	r.report(ctx, st, ev, how)
	r.log.LogAttrs(ctx, slog.LevelWarn, "rate limiter backend error", slog.String("action", ev.Action), slog.String("policy", string(st.cfg.OnBackendError)), slog.String("err", err.Error()))
	if !ev.Ignored {
		p := acme.NewProblem(acme.ProbServerInternal, "the rate limiter is unavailable; retry shortly")
		p.Status = http.StatusServiceUnavailable
		p.RetryAfter = 5 * time.Second
		p.Cause = err
		return nil, p
	}
	return noRefund, nil
}

// NewAccount implements Limits: ratelimit.NewAccountRequests, unless the
// address is whitelisted.
func (r *Adapter) NewAccount(ctx context.Context, ip netip.Addr) (func(), error) {
	if !ip.IsValid() || r.whitelisted(ip) {
		return noRefund, nil
	}
	return r.spend(ctx, "new-account", spendSubject{}, ratelimit.NewAccountRequests(ip)...)
}

// NewOrder implements Limits: ratelimit.NewOrderRequests, with the
// account's EAB group override.
func (r *Adapter) NewOrder(ctx context.Context, acct *acme.Account, o *acme.Order, fresh []*acme.Authorization) (func(), error) {
	return r.spend(ctx, "new-order", spendSubject{acct.ID, o.Identifiers}, newOrderRequests(r.limitsOrder(ctx, acct, o), fresh)...)
}

// Finalize implements Limits: ratelimit.FinalizeRequests.
func (r *Adapter) Finalize(ctx context.Context, acct *acme.Account, o *acme.Order) (func(), error) {
	return r.spend(ctx, "finalize", spendSubject{acct.ID, o.Identifiers}, ratelimit.FinalizeRequests(limitsOrder(acct, o, ""))...)
}

// AuthzFinished implements Limits: ratelimit.AuthzFinishedRequests, the
// failure spent only once the slot is freed.
func (r *Adapter) AuthzFinished(ctx context.Context, a *acme.Authorization) {
	const action = "authz-finished"
	st := r.state.Load()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), st.cfg.BackendTimeout)
	defer cancel()
	free, failed := ratelimit.AuthzFinishedRequests(string(a.AccountID), string(a.ID), a.Name(), a.Status == acme.StatusInvalid)
	err := r.remove(ctx, st, action, free)
	if len(failed) > 0 && err == nil {
		// Recording a failure, not asking: a denial here refuses nobody.
		start := time.Now()
		var d ratelimit.Decision
		d, _, err = st.lim.Spend(ctx, failed...)
		ev := acme.LimiterEvent{Action: action, Requests: failed, Decision: d, Err: err, Ignored: err != nil, Latency: time.Since(start)}
		if err != nil {
			ev.Decision = ratelimit.Decision{}
		}
		r.report(ctx, st, ev, resolvedNone)
	}
	if err != nil {
		r.backendErrors.Add(1)
		r.log.Warn("rate limiter backend error recording an authorization", "authz", a.ID, "err", err)
	}
	r.fallbackRecord(ctx, st, free, failed, err != nil)
}

// Revoked implements Limits: ratelimit.RevokedRequest.
func (r *Adapter) Revoked(ctx context.Context, cert *acme.Certificate) {
	st := r.state.Load()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), st.cfg.BackendTimeout)
	defer cancel()
	rq := ratelimit.RevokedRequest(string(cert.AccountID), cert.Names, string(cert.OrderID))
	err := r.remove(ctx, st, "revoked", rq)
	r.fallbackRecord(ctx, st, rq, nil, false)
	if err != nil && !errors.Is(err, context.Canceled) {
		r.backendErrors.Add(1)
		r.log.Warn("rate limiter backend error freeing a duplicate-certificate slot", "serial", cert.Serial, "err", err)
	}
}

// remove deletes members and reports the call. A remove decides nothing,
// so its event carries an allowed Decision naming no limit, and a failure
// is ignored.
func (r *Adapter) remove(ctx context.Context, st *state, action string, reqs ...ratelimit.Request) error {
	start := time.Now()
	err := st.lim.Remove(ctx, reqs...)
	ev := acme.LimiterEvent{Action: action, Requests: reqs, Decision: ratelimit.Decision{Allowed: true}, Latency: time.Since(start)}
	if err != nil {
		ev.Decision, ev.Err, ev.Ignored = ratelimit.Decision{}, err, true
	}
	r.report(ctx, st, ev, resolvedNone)
	return err
}
