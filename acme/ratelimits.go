package acme

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

	"github.com/weir-pki/weir/ratelimit"
)

// BackendPolicy says what happens to a request when the limiter's backend
// cannot decide in time.
type BackendPolicy string

// The on-backend-error policies.
const (
	BackendAllow BackendPolicy = "allow"
	BackendDeny  BackendPolicy = "deny"
)

// RateLimitsConfig is how RateLimits applies the limiter.
type RateLimitsConfig struct {
	// OnBackendError decides requests the backend could not (allow|deny).
	OnBackendError BackendPolicy
	// BackendTimeout bounds one limiter decision.
	BackendTimeout time.Duration
	// Whitelist bypasses the IP-keyed limits (account-creation here; the
	// global layer lives in web) for these ranges.
	Whitelist []netip.Prefix
	// HelpURL is sent as Link rel="help" on every 429.
	HelpURL string
}

// RateLimits is the Limits of a server with rate limiting: it turns the
// use cases' hooks into ratelimit requests (docs/rate-limits.md gives every
// key) and denials into rateLimited problems.
type RateLimits struct {
	state    atomic.Pointer[rateLimitsState]
	observer atomic.Pointer[observerBox]
	log      *slog.Logger
	// BackendErrors counts decisions the backend failed to make.
	backendErrors atomic.Uint64
	// eabLabels finds the EAB label whose overrides an account's own
	// limits take (SetEABLabels); nil: none.
	eabLabels atomic.Pointer[EABLabels]
}

type rateLimitsState struct {
	lim *ratelimit.Limiter
	cfg RateLimitsConfig
}

// NewRateLimits wraps lim. log nil discards.
func NewRateLimits(lim *ratelimit.Limiter, cfg RateLimitsConfig, log *slog.Logger) *RateLimits {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &RateLimits{log: log}
	r.Update(lim, cfg)
	return r
}

// Update swaps the limiter and its settings (live reload). Buckets live in
// the limiter's Source, so what was spent stays spent.
func (r *RateLimits) Update(lim *ratelimit.Limiter, cfg RateLimitsConfig) {
	if cfg.BackendTimeout <= 0 {
		cfg.BackendTimeout = 500 * time.Millisecond
	}
	if cfg.OnBackendError == "" {
		cfg.OnBackendError = BackendAllow
	}
	r.state.Store(&rateLimitsState{lim: lim, cfg: cfg})
}

// SetObserver installs the observer of every limiter call; nil means
// NopObserver. It may be called at any time.
func (r *RateLimits) SetObserver(o Observer) { r.observer.Store(newObserverBox(o)) }

// Limiter returns the current limiter (for admin tools).
func (r *RateLimits) Limiter() *ratelimit.Limiter { return r.state.Load().lim }

// BackendErrors is the number of decisions the backend failed to make.
func (r *RateLimits) BackendErrors() uint64 { return r.backendErrors.Load() }

// Whitelisted reports whether ip bypasses the IP-keyed limits.
func (r *RateLimits) Whitelisted(ip netip.Addr) bool {
	for _, p := range r.state.Load().cfg.Whitelist {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// The actions of the LimiterEvents that RateLimits reports, besides the
// hooks' own ("new-account", "new-order", "finalize", "authz-finished",
// "revoked"): a failed refund.
const actionRefund = "refund"

// How an ignored or fatal backend error was resolved, for the request's
// log line.
const (
	resolvedAllow = "ignored: on-backend-error is allow"
	resolvedDeny  = "refused with 503: on-backend-error is deny"
	resolvedNone  = "ignored: bookkeeping only, nothing was being decided"
)

// report hands one limiter call to the observer and summarises it on the
// request's log line (RequestEvent). how says what became of ev.Err. Only
// the requests the limiter enforces are reported; a call that asked about
// none of them decided nothing and is not reported.
func (r *RateLimits) report(ctx context.Context, st *rateLimitsState, ev LimiterEvent, how string) {
	if ev.Requests = st.lim.Enforced(ev.Requests); len(ev.Requests) == 0 {
		return
	}
	r.observer.Load().get().Limiter(ev)
	re := RequestEventFrom(ctx)
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
		s += " retry-after=" + ceilSecond(d.RetryAfter).String()
	}
	if n := len(d.Denied); n > 1 {
		s += " (+" + strconv.Itoa(n-1) + " more denied)"
	}
	return s
}

// ceilSecond rounds d up to whole seconds, as Retry-After is.
func ceilSecond(d time.Duration) time.Duration {
	if r := d % time.Second; r != 0 {
		d += time.Second - r
	}
	return d
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
func (r *RateLimits) spend(ctx context.Context, action string, sub spendSubject, reqs ...ratelimit.Request) (func(), error) {
	st := r.state.Load()
	dctx, cancel := context.WithTimeout(ctx, st.cfg.BackendTimeout)
	start := time.Now()
	d, spent, err := st.lim.Spend(dctx, reqs...)
	lat := time.Since(start)
	cancel()
	if err != nil {
		return r.backendFailed(ctx, st, LimiterEvent{Action: action, Requests: reqs, Err: err, Latency: lat})
	}
	r.report(ctx, st, LimiterEvent{Action: action, Requests: reqs, Decision: d, Latency: lat}, "")
	noteQuota(ctx, action, d)
	if !d.Allowed {
		return nil, rateLimitedProblem(d, st.cfg.HelpURL, sub)
	}
	return func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), st.cfg.BackendTimeout)
		defer cancel()
		start := time.Now()
		if err := st.lim.Refund(rctx, spent); err != nil {
			r.backendErrors.Add(1)
			r.report(ctx, st, LimiterEvent{Action: actionRefund, Requests: reqs, Err: err, Ignored: true, Latency: time.Since(start)}, resolvedNone)
			r.log.Warn("rate limiter refund failed", "err", err)
		}
	}, nil
}

// backendFailed applies on-backend-error to the failed call ev; the
// decision is logged, counted and observed either way.
func (r *RateLimits) backendFailed(ctx context.Context, st *rateLimitsState, ev LimiterEvent) (func(), error) {
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
		p := NewProblem(ProbServerInternal, "the rate limiter is unavailable; retry shortly")
		p.Status = http.StatusServiceUnavailable
		p.RetryAfter = 5 * time.Second
		p.Cause = err
		return nil, p
	}
	return noRefund, nil
}

// NewAccount implements Limits: ratelimit.NewAccountRequests, unless the
// address is whitelisted.
func (r *RateLimits) NewAccount(ctx context.Context, ip netip.Addr) (func(), error) {
	if !ip.IsValid() || r.Whitelisted(ip) {
		return noRefund, nil
	}
	return r.spend(ctx, "new-account", spendSubject{}, ratelimit.NewAccountRequests(ip)...)
}

// NewOrder implements Limits: ratelimit.NewOrderRequests, with the
// account's EAB group override.
func (r *RateLimits) NewOrder(ctx context.Context, acct *Account, o *Order, fresh []*Authorization) (func(), error) {
	return r.spend(ctx, "new-order", spendSubject{acct.ID, o.Identifiers}, newOrderRequests(r.limitsOrder(ctx, acct, o), fresh)...)
}

// Finalize implements Limits: ratelimit.FinalizeRequests.
func (r *RateLimits) Finalize(ctx context.Context, acct *Account, o *Order) (func(), error) {
	return r.spend(ctx, "finalize", spendSubject{acct.ID, o.Identifiers}, ratelimit.FinalizeRequests(limitsOrder(acct, o, ""))...)
}

// AuthzFinished implements Limits: ratelimit.AuthzFinishedRequests, the
// failure spent only once the slot is freed.
func (r *RateLimits) AuthzFinished(ctx context.Context, a *Authorization) {
	const action = "authz-finished"
	st := r.state.Load()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), st.cfg.BackendTimeout)
	defer cancel()
	free, failed := ratelimit.AuthzFinishedRequests(a.AccountID, a.ID, displayName(a), a.Status == StatusInvalid)
	err := r.remove(ctx, st, action, free)
	if len(failed) > 0 && err == nil {
		// Recording a failure, not asking: a denial here refuses nobody.
		start := time.Now()
		var d ratelimit.Decision
		d, _, err = st.lim.Spend(ctx, failed...)
		ev := LimiterEvent{Action: action, Requests: failed, Decision: d, Err: err, Ignored: err != nil, Latency: time.Since(start)}
		if err != nil {
			ev.Decision = ratelimit.Decision{}
		}
		r.report(ctx, st, ev, resolvedNone)
	}
	if err != nil {
		r.backendErrors.Add(1)
		r.log.Warn("rate limiter backend error recording an authorization", "authz", a.ID, "err", err)
	}
}

// Revoked implements Limits: ratelimit.RevokedRequest.
func (r *RateLimits) Revoked(ctx context.Context, cert *Certificate) {
	st := r.state.Load()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), st.cfg.BackendTimeout)
	defer cancel()
	err := r.remove(ctx, st, "revoked", ratelimit.RevokedRequest(cert.AccountID, cert.Names, cert.OrderID))
	if err != nil && !errors.Is(err, context.Canceled) {
		r.backendErrors.Add(1)
		r.log.Warn("rate limiter backend error freeing a duplicate-certificate slot", "serial", cert.Serial, "err", err)
	}
}

// remove deletes members and reports the call. A remove decides nothing,
// so its event carries an allowed Decision naming no limit, and a failure
// is ignored.
func (r *RateLimits) remove(ctx context.Context, st *rateLimitsState, action string, reqs ...ratelimit.Request) error {
	start := time.Now()
	err := st.lim.Remove(ctx, reqs...)
	ev := LimiterEvent{Action: action, Requests: reqs, Decision: ratelimit.Decision{Allowed: true}, Latency: time.Since(start)}
	if err != nil {
		ev.Decision, ev.Err, ev.Ignored = ratelimit.Decision{}, err, true
	}
	r.report(ctx, st, ev, resolvedNone)
	return err
}
