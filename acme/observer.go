// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"time"

	"github.com/weir-pki/weir/ratelimit"
)

// Observer receives what the server does, for metrics and the
// administrators' dashboard. Its methods are called on request paths, so
// they must be fast and safe for concurrent use; they must not block.
type Observer interface {
	// Request is one finished ACME HTTP request; problem is "" on success.
	Request(endpoint string, status int, problem ProblemType, d time.Duration)
	// Limiter is one limiter decision (or failure to decide).
	Limiter(ev LimiterEvent)
	// Validation is one finished challenge validation.
	Validation(typ ChallengeType, ok bool, d time.Duration)
	// Issued is one certificate issued; orderAge is the time from the
	// order's creation to its certificate.
	Issued(cert *Certificate, orderAge time.Duration)
	// Revoked is one certificate revoked, with its RFC 5280 reason code.
	Revoked(cert *Certificate, reason int)
}

// LimiterEvent is one call to the limiter.
type LimiterEvent struct {
	// Action is what asked: "global", "new-account", "new-order",
	// "finalize", "authz-finished", "revoked".
	Action string
	// Requests are the buckets asked about.
	Requests []ratelimit.Request
	// Decision is the limiter's answer; zero when Err is set.
	Decision ratelimit.Decision
	// Err is a backend failure: nothing was decided.
	Err error
	// Ignored reports that Err was ignored (on-backend-error: allow).
	Ignored bool
	// Degraded reports that Err was resolved by the in-process fallback
	// limiter (on-backend-error: degrade); Decision is then its answer.
	Degraded bool
	// Latency is the time the backend took.
	Latency time.Duration
}

// NopObserver observes nothing.
type NopObserver struct{}

// Request implements Observer.
func (NopObserver) Request(string, int, ProblemType, time.Duration) {}

// Limiter implements Observer.
func (NopObserver) Limiter(LimiterEvent) {}

// Validation implements Observer.
func (NopObserver) Validation(ChallengeType, bool, time.Duration) {}

// Issued implements Observer.
func (NopObserver) Issued(*Certificate, time.Duration) {}

// Revoked implements Observer.
func (NopObserver) Revoked(*Certificate, int) {}

// RequestEvent collects what the use cases did during one HTTP request,
// for that request's one log line. web creates it and puts it in the
// request's context (it is per-request data, like a request ID, not a
// dependency); the use cases fill it in. A nil *RequestEvent ignores writes.
type RequestEvent struct {
	// Limiter summarises the limiter's decision, e.g.
	// "allowed order-creation:12 remaining=4".
	Limiter string
	// LimiterError is a backend error the policy ignored or turned into a 503.
	LimiterError string
	// Quota is the part of the request's limiter decision that the
	// RateLimit and RateLimit-Policy response fields describe
	// (docs/rate-limits.md): a bucket of the spend, as the spend left it.
	// Its zero value (Limit 0) means none, and web then reads the
	// account's order-creation bucket instead.
	Quota ratelimit.Decision
	// OrderCreation is the account's order-creation bucket as an allowed
	// new-order left it (Limit 0: none was spent): web keeps it as a
	// fresh read of the bucket, so that the RateLimit fields of the
	// requests that follow need no read of their own.
	OrderCreation ratelimit.Decision
}

type requestEventKey struct{}

// WithRequestEvent returns ctx carrying ev.
func WithRequestEvent(ctx context.Context, ev *RequestEvent) context.Context {
	return context.WithValue(ctx, requestEventKey{}, ev)
}

// RequestEventFrom returns the RequestEvent of ctx, or nil.
func RequestEventFrom(ctx context.Context) *RequestEvent {
	ev, _ := ctx.Value(requestEventKey{}).(*RequestEvent)
	return ev
}

// StoreObserver receives the commits of a store that reports them (a
// CommitReporter), for metrics. The store's writer calls StoreCommit after
// each COMMIT and before it answers the writes' callers, so it must be
// fast and must not block.
type StoreObserver interface {
	// StoreCommit is one write transaction committed: it held writes
	// writes (more than one where the store groups concurrent writes
	// into one transaction), and its COMMIT took d.
	StoreCommit(writes int, d time.Duration)
}

// CommitReporter is a store that reports its commits: the SQLite store,
// whose single writer commits every write, grouped.
type CommitReporter interface {
	// ReportCommits sends every later commit to o (nil stops the reports).
	ReportCommits(o StoreObserver)
}

// StatsReporter is a store that reports its writer queue and connection
// pool, read at every metrics scrape.
type StatsReporter interface {
	StoreStats() StoreStats
}

// StoreStats is the state of a store's writer and connection pool at one
// moment. The counters run from the store's Open.
type StoreStats struct {
	// QueuedWrites is how many writes wait for the store's writer now
	// (SQLite); 0 for a store without one.
	QueuedWrites int
	// Conns is how many connections the pool has open (for SQLite, its
	// readers), ConnsInUse how many of them run a query now, MaxConns
	// the most it opens.
	Conns, ConnsInUse, MaxConns int
	// ConnWaits counts the queries that found every connection busy and
	// waited for one, ConnWait is how long they waited in all.
	ConnWaits uint64
	ConnWait  time.Duration
}
