// SPDX-License-Identifier: Apache-2.0

package web

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/jws"
	"github.com/weir-pki/weir/acme/limits"
	"github.com/weir-pki/weir/ratelimit"
)

// Quota transparency (docs/rate-limits.md): every response to a
// kid-signed request carries the RateLimit-Policy and RateLimit fields of
// draft-ietf-httpapi-ratelimit-headers-11 for the account-level bucket it
// touched, every 429 those of the bucket that refused it, and the quota
// resource lists the account's buckets.

// pathQuota is the quota resource, advertised as meta.quota.
const pathQuota = "/acme/quota"

// The RateLimit fields of a request that spent none of the account's
// buckets show its order-creation bucket, read without spending and kept
// per account for quotaCacheTTL, so that polling clients cost no backend
// round trip per request.
const (
	quotaCacheTTL = time.Second
	// quotaCacheMax bounds the cache; when full, expired entries go, and
	// if none has expired, all of them.
	quotaCacheMax = 10000
)

// quotaState is the Server's part of quota transparency: the limiter and
// the per-account cache of order-creation reads.
type quotaState struct {
	limits atomic.Pointer[limits.Adapter]
	mu     sync.Mutex
	cache  map[acme.AccountID]cachedQuota
}

// cachedQuota is one read of an account's order-creation bucket; ok is
// false when order-creation is disabled.
type cachedQuota struct {
	q    limits.Quota
	ok   bool
	read time.Time
}

// SetRateLimits installs the limiter whose buckets the RateLimit fields
// and the quota resource show; nil turns both off. It may be called at
// any time. A reload updates the Adapter in place, so one call at start
// is enough.
func (s *Server) SetRateLimits(l *limits.Adapter) {
	s.quota.limits.Store(l)
	s.quota.mu.Lock()
	s.quota.cache = nil
	s.quota.mu.Unlock()
}

// quotaURL is the directory's meta.quota; "" without a limiter.
func (s *Server) quotaURL() string {
	if s.quota.limits.Load() == nil {
		return ""
	}
	return s.urls.path(pathQuota)
}

// beforeHeader runs once per response, just before its status line: the
// response to a kid-signed request, and every refusal by a limit, get
// the RateLimit fields. Handlers write their responses themselves, so
// this is the last moment the limiter's decision can still become header
// fields.
func (rec *statusRecorder) beforeHeader() {
	if rec.wrote {
		return
	}
	rec.wrote = true
	if rec.srv != nil && rec.req != nil {
		rec.srv.setRateLimitFields(rec.req.Context(), rec)
	}
}

// setRateLimitFields sets RateLimit-Policy and RateLimit on rec's
// response: the bucket the request's limiter decision noted (for a
// request without an account, only a refusal: the global layer's or
// account-creation's), else a kid-signed request's order-creation bucket
// from the cache.
func (s *Server) setRateLimitFields(ctx context.Context, rec *statusRecorder) {
	d := rec.ev.Quota
	noted := d.Limit.Valid() && (rec.acct != nil || !d.Allowed)
	if !noted && rec.acct == nil {
		return
	}
	lim := s.quota.limits.Load()
	if lim == nil {
		return
	}
	var (
		q       limits.Quota
		elapsed time.Duration
	)
	if noted {
		// This request spent from (or was refused by) the bucket: a
		// cached read of the account's is stale now, and an allowed new
		// order's order-creation bucket, as it left it, is the read to
		// keep.
		q = limits.QuotaFromDecision(d)
		if rec.acct != nil {
			s.noteSpent(rec.acct.ID, rec.ev.OrderCreation)
		}
	} else {
		c, ok := s.cachedQuota(ctx, lim, rec.acct)
		if !ok {
			return
		}
		q, elapsed = c.q, max(s.now().Sub(c.read), 0)
	}
	policy, limit := rateLimitFields(q, elapsed)
	h := rec.Header()
	h.Set("RateLimit-Policy", policy)
	h.Set("RateLimit", limit)
}

// cachedQuota returns the account's order-creation bucket, read at most
// quotaCacheTTL ago; false when it cannot be shown.
func (s *Server) cachedQuota(ctx context.Context, lim *limits.Adapter, acct *acme.Account) (cachedQuota, bool) {
	now := s.now()
	account := acct.ID
	s.quota.mu.Lock()
	c, hit := s.quota.cache[account]
	s.quota.mu.Unlock()
	if hit && now.Sub(c.read) < quotaCacheTTL && !c.read.After(now) {
		return c, c.ok
	}
	q, ok, err := lim.AccountQuota(ctx, acct)
	if err != nil {
		s.log.Debug("reading the order-creation bucket for the RateLimit fields", "account", account, "err", err)
		return cachedQuota{}, false
	}
	c = cachedQuota{q: q, ok: ok, read: now}
	s.quota.mu.Lock()
	s.keepQuota(account, c)
	s.quota.mu.Unlock()
	return c, ok
}

// noteSpent replaces the account's cached read after a spend: with oc,
// its order-creation bucket as the spend left it, when the spend had one
// (an allowed new order not exempt from it); otherwise it drops it.
func (s *Server) noteSpent(account acme.AccountID, oc ratelimit.Decision) {
	s.quota.mu.Lock()
	defer s.quota.mu.Unlock()
	if oc.Limit != ratelimit.OrderCreation || !oc.Allowed {
		delete(s.quota.cache, account)
		return
	}
	s.keepQuota(account, cachedQuota{q: limits.QuotaFromDecision(oc), ok: true, read: s.now()})
}

// keepQuota caches c as the account's read, making room within
// quotaCacheMax: expired entries go, and if none has expired, all of
// them. s.quota.mu must be held.
func (s *Server) keepQuota(account acme.AccountID, c cachedQuota) {
	if s.quota.cache == nil {
		s.quota.cache = make(map[acme.AccountID]cachedQuota)
	}
	if len(s.quota.cache) >= quotaCacheMax {
		for k, e := range s.quota.cache {
			if c.read.Sub(e.read) >= quotaCacheTTL {
				delete(s.quota.cache, k)
			}
		}
		if len(s.quota.cache) >= quotaCacheMax {
			clear(s.quota.cache)
		}
	}
	s.quota.cache[account] = c
}

// rateLimitFields formats q as the values of the RateLimit-Policy and
// RateLimit fields (draft-ietf-httpapi-ratelimit-headers-11 §3, §4;
// Structured Field Lists of one Item, RFC 9651), q having been read
// elapsed ago:
//
//	RateLimit-Policy: "order-creation";q=5;w=900
//	RateLimit: "order-creation";r=3;t=360
//
// q is the burst (or an exact count's maximum), w the seconds an empty
// bucket takes to refill (burst × emission interval; an exact count's
// window; absent when it has none), r what is left, and t the effective
// window in whole seconds rounded up: until the bucket is whole again
// when r > 0, until one more request fits when r = 0. On a denial t is
// the Retry-After value exactly.
func rateLimitFields(q limits.Quota, elapsed time.Duration) (policy, limit string) {
	name := sfString(q.Limit.String())
	var b strings.Builder
	b.WriteString(name)
	b.WriteString(";q=")
	b.WriteString(strconv.FormatInt(max(q.Capacity, 0), 10))
	if w := q.WindowSeconds(); w > 0 {
		b.WriteString(";w=")
		b.WriteString(strconv.FormatInt(w, 10))
	}
	policy = b.String()
	b.Reset()
	var t string
	if q.Denied {
		t = retryAfter(q.Reset)
	} else {
		t = strconv.FormatInt(max(ratelimit.CeilSeconds(q.Reset-elapsed), 0), 10)
	}
	b.WriteString(name)
	b.WriteString(";r=")
	b.WriteString(strconv.FormatInt(max(q.Remaining, 0), 10))
	b.WriteString(";t=")
	b.WriteString(t)
	return policy, b.String()
}

// sfString serialises s as a Structured Field String (RFC 9651 §4.1.6);
// s is printable ASCII (a limit name).
func sfString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e {
			continue
		}
		if c == '"' || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	b.WriteByte('"')
	return b.String()
}

// quotaView is the quota resource: the caller's buckets as
// "weir ratelimit status --account" shows them.
type quotaView struct {
	// Account is the account's URL.
	Account string            `json:"account"`
	Buckets []quotaBucketView `json:"buckets"`
}

// quotaBucketView is one bucket of the quota resource.
type quotaBucketView struct {
	// Bucket is the bucket key, "limit:key".
	Bucket  string `json:"bucket"`
	Limit   string `json:"limit"`
	Key     string `json:"key"`
	Enabled bool   `json:"enabled"`
	// Capacity is the burst (rate) or the maximum (exact count);
	// Remaining is what is left of it now.
	Capacity  int64 `json:"capacity"`
	Remaining int64 `json:"remaining"`
	// Window, Count and Period describe the limit as a rateLimited
	// problem and RateLimit-Policy do (limits.Quota): Capacity per Window
	// seconds, at the rate of Count per Period seconds (rate limits).
	Window int64 `json:"window,omitempty"`
	Count  int64 `json:"count,omitempty"`
	Period int64 `json:"period,omitempty"`
	// NextAt is when one more request fits, if none does now; FullAt
	// when the bucket is whole again; At when it was read.
	NextAt string `json:"nextAt,omitempty"`
	FullAt string `json:"fullAt,omitempty"`
	At     string `json:"at,omitempty"`
}

// quotaResource serves the quota resource (POST-as-GET, RFC 8555 §6.3):
// the buckets of the signing account, read without spending.
func (s *Server) quotaResource(w http.ResponseWriter, r *http.Request, req *jws.Request) error {
	if err := requireAccountFetch(req); err != nil {
		return err
	}
	lim := s.quota.limits.Load()
	if lim == nil {
		return acme.NotFound("this server does not rate limit")
	}
	reqs, err := s.svc.AccountBuckets(r.Context(), req.Account.ID)
	if err != nil {
		return err
	}
	sts, err := lim.Status(r.Context(), reqs...)
	if err != nil {
		return acme.Internal(err)
	}
	v := quotaView{Account: s.urls.account(req.Account.ID), Buckets: make([]quotaBucketView, 0, len(sts))}
	for _, st := range sts {
		v.Buckets = append(v.Buckets, quotaBucket(st))
	}
	return writeJSON(w, http.StatusOK, v)
}

// quotaBucket is the view of one bucket.
func quotaBucket(st ratelimit.BucketStatus) quotaBucketView {
	v := quotaBucketView{Bucket: ratelimit.BucketKey(st.Name, st.Key), Limit: st.Name.String(), Key: st.Key, Enabled: st.Enabled}
	if !st.Enabled {
		return v
	}
	q := limits.PolicyOf(st.Limit)
	v.Capacity, v.Remaining = st.Capacity, st.Remaining
	v.Window, v.Count, v.Period = q.WindowSeconds(), q.Count, q.PeriodSeconds()
	v.NextAt, v.FullAt, v.At = timeString(st.NextAt), timeString(st.FullAt), timeString(st.At)
	return v
}
