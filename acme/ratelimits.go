package acme

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
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
	state atomic.Pointer[rateLimitsState]
	log   *slog.Logger
	// BackendErrors counts decisions the backend failed to make.
	backendErrors atomic.Uint64
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
		cfg.BackendTimeout = 50 * time.Millisecond
	}
	if cfg.OnBackendError == "" {
		cfg.OnBackendError = BackendAllow
	}
	r.state.Store(&rateLimitsState{lim: lim, cfg: cfg})
}

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

// spend spends reqs within the backend timeout and applies the backend
// policy to failures.
func (r *RateLimits) spend(ctx context.Context, reqs ...ratelimit.Request) (func(), error) {
	st := r.state.Load()
	dctx, cancel := context.WithTimeout(ctx, st.cfg.BackendTimeout)
	d, spent, err := st.lim.Spend(dctx, reqs...)
	cancel()
	if err != nil {
		return r.backendFailed(ctx, st, err)
	}
	if !d.Allowed {
		return nil, rateLimitedProblem(d, st.cfg.HelpURL)
	}
	return func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), st.cfg.BackendTimeout)
		defer cancel()
		if err := st.lim.Refund(rctx, spent); err != nil {
			r.backendErrors.Add(1)
			r.log.Warn("rate limiter refund failed", "err", err)
		}
	}, nil
}

// backendFailed applies on-backend-error; the decision is logged and
// counted either way.
func (r *RateLimits) backendFailed(ctx context.Context, st *rateLimitsState, err error) (func(), error) {
	r.backendErrors.Add(1)
	r.log.LogAttrs(ctx, slog.LevelWarn, "rate limiter backend error", slog.String("policy", string(st.cfg.OnBackendError)), slog.String("err", err.Error()))
	if st.cfg.OnBackendError == BackendDeny {
		p := NewProblem(ProbServerInternal, "the rate limiter is unavailable; retry shortly")
		p.Status = http.StatusServiceUnavailable
		p.RetryAfter = 5 * time.Second
		p.Cause = err
		return nil, p
	}
	return noRefund, nil
}

// rateLimitedProblem renders a denial: the strictest bucket names the
// limit, key and time it frees up; several denied buckets become
// subproblems.
func rateLimitedProblem(d ratelimit.Decision, helpURL string) *Problem {
	p := RateLimited(d.RetryAfter, helpURL, "%s", d.Detail())
	if len(d.Denied) > 1 {
		for _, sub := range d.Denied {
			p.Subproblems = append(p.Subproblems, RateLimited(sub.RetryAfter, "", "%s", sub.Detail()))
		}
	}
	return p
}

// NewAccount implements Limits: account-creation per client IP.
func (r *RateLimits) NewAccount(ctx context.Context, ip netip.Addr) (func(), error) {
	if !ip.IsValid() || r.Whitelisted(ip) {
		return noRefund, nil
	}
	return r.spend(ctx, ratelimit.Request{Name: ratelimit.AccountCreation, Key: ratelimit.IPKey(ip)})
}

// registeredDomains returns the distinct eTLD+1 keys of the DNS
// identifiers.
func registeredDomains(ids []Identifier) []string {
	var out []string
	seen := map[string]bool{}
	for _, id := range ids {
		if id.Type != IdentifierDNS {
			continue
		}
		k, err := ratelimit.RegisteredDomainKey(id.Value)
		if err != nil || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, k)
	}
	return out
}

// NewOrder implements Limits: order-creation and the SAN budget are spent;
// duplicate-certificate, failed-validation and registered-domain are
// checked (they are spent at finalize and on failure); each new
// authorization takes a pending-authorizations slot until it leaves
// pending or expires. An ARI renewal (o.Replaces) is exempt from
// order-creation and duplicate-certificate.
func (r *RateLimits) NewOrder(ctx context.Context, acct *Account, o *Order, fresh []*Authorization) (func(), error) {
	names := IdentifierValues(o.Identifiers)
	var reqs []ratelimit.Request
	if o.Replaces == "" {
		reqs = append(reqs,
			ratelimit.Request{Name: ratelimit.OrderCreation, Key: acct.ID},
			ratelimit.Request{Name: ratelimit.SANBudget, Key: acct.ID, Cost: int64(len(names))},
			ratelimit.Request{Name: ratelimit.DuplicateCertificate, Key: ratelimit.FQDNSetKey(acct.ID, names), CheckOnly: true},
		)
	}
	for _, n := range names {
		reqs = append(reqs, ratelimit.Request{Name: ratelimit.FailedValidation, Key: ratelimit.FailedValidationKey(acct.ID, n), CheckOnly: true})
	}
	for _, d := range registeredDomains(o.Identifiers) {
		reqs = append(reqs, ratelimit.Request{Name: ratelimit.RegisteredDomain, Key: d, CheckOnly: true})
	}
	for _, a := range fresh {
		reqs = append(reqs, ratelimit.Request{Name: ratelimit.PendingAuthorizations, Key: acct.ID, Member: a.ID, MemberTime: a.Expires})
	}
	return r.spend(ctx, reqs...)
}

// Finalize implements Limits: the duplicate-certificate slot and the
// registered-domain budget are spent atomically here, so concurrent orders
// for one name set cannot all issue.
func (r *RateLimits) Finalize(ctx context.Context, acct *Account, o *Order) (func(), error) {
	var reqs []ratelimit.Request
	if o.Replaces == "" {
		reqs = append(reqs, ratelimit.Request{Name: ratelimit.DuplicateCertificate,
			Key: ratelimit.FQDNSetKey(acct.ID, IdentifierValues(o.Identifiers)), Member: o.ID})
	}
	for _, d := range registeredDomains(o.Identifiers) {
		reqs = append(reqs, ratelimit.Request{Name: ratelimit.RegisteredDomain, Key: d})
	}
	return r.spend(ctx, reqs...)
}

// AuthzFinished implements Limits: the authorization frees its
// pending-authorizations slot, and a failed one spends failed-validation
// for (account, hostname), "*.x" apart from "x".
func (r *RateLimits) AuthzFinished(ctx context.Context, a *Authorization) {
	st := r.state.Load()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), st.cfg.BackendTimeout)
	defer cancel()
	err := st.lim.Remove(ctx, ratelimit.Request{Name: ratelimit.PendingAuthorizations, Key: a.AccountID, Member: a.ID})
	if a.Status == StatusInvalid && err == nil {
		_, _, err = st.lim.Spend(ctx, ratelimit.Request{Name: ratelimit.FailedValidation, Key: ratelimit.FailedValidationKey(a.AccountID, displayName(a))})
	}
	if err != nil {
		r.backendErrors.Add(1)
		r.log.Warn("rate limiter backend error recording an authorization", "authz", a.ID, "err", err)
	}
}

// Revoked implements Limits: a revoked certificate frees its
// duplicate-certificate slot.
func (r *RateLimits) Revoked(ctx context.Context, cert *Certificate) {
	st := r.state.Load()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), st.cfg.BackendTimeout)
	defer cancel()
	err := st.lim.Remove(ctx, ratelimit.Request{Name: ratelimit.DuplicateCertificate,
		Key: ratelimit.FQDNSetKey(cert.AccountID, cert.Names), Member: cert.OrderID})
	if err != nil && !errors.Is(err, context.Canceled) {
		r.backendErrors.Add(1)
		r.log.Warn("rate limiter backend error freeing a duplicate-certificate slot", "serial", cert.Serial, "err", err)
	}
}
