// SPDX-License-Identifier: Apache-2.0

package ratelimit

import (
	"math"
	"net/netip"
	"time"
)

// What each ACME action asks of the limits: the one place that says which
// buckets an action spends, checks, adds to or frees, under which keys.
// acme/limits sends these requests to a Limiter at new-account, new-order,
// finalize, when an authorization leaves pending and on revocation, and
// lists the buckets an account or an address has for status and the quota
// resource. docs/rate-limits.md ("What spends, what refunds") says the same
// in prose. (Let's Encrypt Boulder's ratelimits/transaction.go is the
// model.)

// Order is an order as the limits see it.
type Order struct {
	// ID is the order's ID: the member its certificate adds to
	// duplicate-certificate at finalize.
	ID string
	// Account is the ID of the account that placed it.
	Account string
	// OverrideKey is the account's group override ([Request.OverrideKey],
	// "eab:LABEL" for an account bound with an EAB key); "" for none. It is
	// set on the requests of the account's own buckets.
	OverrideKey string
	// Names are the values of the order's canonical identifiers (a
	// wildcard keeps its "*."; an IP identifier's value is its address).
	Names []string
	// Renewal marks an ARI renewal (RFC 9773 replaces): exempt from
	// order-creation and duplicate-certificate.
	Renewal bool
	// Urgent marks a renewal that replaces a certificate in an incident:
	// exempt from every account-level limit too.
	Urgent bool
}

// Authz is a new authorization, which takes a pending-authorizations slot
// until it leaves pending or expires.
type Authz struct {
	ID      string
	Expires time.Time
}

// NewAccountRequests are the requests of new-account: account-creation
// for the client's address (the global layer is the [Edge]'s).
func NewAccountRequests(ip netip.Addr) []Request {
	return []Request{{Name: AccountCreation, Key: IPKey(ip)}}
}

// NewOrderRequests are the requests of new-order, one spend: order-creation
// and the SAN budget (a token per name) are spent; duplicate-certificate
// for the name set, failed-validation for each name and registered-domain
// for each registered domain are checked (they are spent at finalize and
// when a validation fails); each of fresh, the authorizations the order
// creates, takes a pending-authorizations slot. Those requests come last.
//
// An ARI renewal is exempt from order-creation and duplicate-certificate;
// it still pays the SAN budget, which the renewal planner keeps each
// account's windows within. An urgent one pays no account-level limit:
// incident mode reserves capacity for the wave.
func NewOrderRequests(o Order, fresh []Authz) []Request {
	var reqs []Request
	if !o.Renewal {
		reqs = append(reqs,
			Request{Name: OrderCreation, Key: o.Account, OverrideKey: o.OverrideKey},
			Request{Name: DuplicateCertificate, Key: FQDNSetKey(o.Account, o.Names), CheckOnly: true},
		)
	}
	urgent := o.Renewal && o.Urgent
	if !urgent {
		reqs = append(reqs, Request{Name: SANBudget, Key: o.Account, Cost: int64(len(o.Names)), OverrideKey: o.OverrideKey})
	}
	for _, n := range o.Names {
		reqs = append(reqs, Request{Name: FailedValidation, Key: FailedValidationKey(o.Account, n), CheckOnly: true})
	}
	for _, d := range registeredDomains(o.Names) {
		reqs = append(reqs, Request{Name: RegisteredDomain, Key: d, CheckOnly: true})
	}
	if urgent {
		return reqs
	}
	for _, a := range fresh {
		reqs = append(reqs, Request{Name: PendingAuthorizations, Key: o.Account, Member: a.ID, MemberTime: a.Expires, OverrideKey: o.OverrideKey})
	}
	return reqs
}

// FinalizeRequests are the requests of finalize, one spend: the order's
// duplicate-certificate slot (not for an ARI renewal) and the budget of
// each registered domain, spent atomically so that concurrent orders for
// one name set cannot all issue.
func FinalizeRequests(o Order) []Request {
	var reqs []Request
	if !o.Renewal {
		reqs = append(reqs, Request{Name: DuplicateCertificate, Key: FQDNSetKey(o.Account, o.Names), Member: o.ID})
	}
	for _, d := range registeredDomains(o.Names) {
		reqs = append(reqs, Request{Name: RegisteredDomain, Key: d})
	}
	return reqs
}

// AuthzFinishedRequests are the requests of an authorization of account
// for hostname ("*." kept) that left pending: free, to remove, frees its
// pending-authorizations slot; spend, when it failed, spends
// failed-validation for (account, hostname). They record what happened
// and refuse nobody.
func AuthzFinishedRequests(account, authzID, hostname string, failed bool) (free Request, spend []Request) {
	free = Request{Name: PendingAuthorizations, Key: account, Member: authzID}
	if failed {
		spend = []Request{{Name: FailedValidation, Key: FailedValidationKey(account, hostname)}}
	}
	return free, spend
}

// RevokedRequest is the request of a revocation, to remove: the
// certificate of order orderID for names frees its duplicate-certificate
// slot.
func RevokedRequest(account string, names []string, orderID string) Request {
	return Request{Name: DuplicateCertificate, Key: FQDNSetKey(account, names), Member: orderID}
}

// AccountBuckets names the buckets of an account, for status and the
// quota resource: its own (with overrideKey, see [Order.OverrideKey]),
// failed-validation for each of names, duplicate-certificate for each of
// sets, and registered-domain for each distinct registered domain of the
// names of sets and names. (An IP address is listed under its [IPKey] as
// [RegisteredDomainKey] keys it, though orders never spend one.)
func AccountBuckets(account, overrideKey string, names []string, sets [][]string) []Request {
	reqs := []Request{
		{Name: OrderCreation, Key: account, OverrideKey: overrideKey},
		{Name: SANBudget, Key: account, OverrideKey: overrideKey},
		{Name: PendingAuthorizations, Key: account, OverrideKey: overrideKey},
	}
	for _, n := range names {
		reqs = append(reqs, Request{Name: FailedValidation, Key: FailedValidationKey(account, n)})
	}
	var all []string
	for _, set := range sets {
		reqs = append(reqs, Request{Name: DuplicateCertificate, Key: FQDNSetKey(account, set)})
		all = append(all, set...)
	}
	all = append(all, names...)
	seen := map[string]bool{}
	for _, n := range all {
		if k, err := RegisteredDomainKey(n); err == nil && !seen[k] {
			seen[k] = true
			reqs = append(reqs, Request{Name: RegisteredDomain, Key: k})
		}
	}
	return reqs
}

// AddressBuckets names the buckets of a client address that the backend
// keeps (account-creation); the global one is each replica's [Edge].
func AddressBuckets(ip netip.Addr) []Request { return NewAccountRequests(ip) }

// RenewalsPerHour is how many ARI renewals of names identifiers an hour
// the account can make without a denial from the limits a renewal pays:
// the SAN budget alone ([NewOrderRequests] of a renewal; the
// pending-authorizations slots free as the renewals validate). The
// renewal planner keeps each account's windows within it. +Inf when
// san-budget is off.
func (l *Limiter) RenewalsPerHour(account string, names int) float64 {
	lim, ok := l.LimitFor(Request{Name: SANBudget, Key: account})
	if !ok || lim.Period <= 0 || lim.Count <= 0 {
		return math.Inf(1)
	}
	return float64(lim.Count) * float64(time.Hour) / float64(lim.Period) / float64(max(names, 1))
}

// AccountLevel reports whether the buckets of n are an account's own,
// keyed by the account alone (order-creation, san-budget,
// pending-authorizations): those a group override applies to and the
// RateLimit response fields describe.
func (n Name) AccountLevel() bool {
	switch n {
	case OrderCreation, SANBudget, PendingAuthorizations:
		return true
	}
	return false
}

// registeredDomains returns the distinct registered domains of the DNS
// names of names, in order. An IP address has none that it shares with
// other names, and a name without one (a public suffix) is skipped.
func registeredDomains(names []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range names {
		if _, err := netip.ParseAddr(n); err == nil {
			continue
		}
		k, err := RegisteredDomainKey(n)
		if err != nil || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, k)
	}
	return out
}
