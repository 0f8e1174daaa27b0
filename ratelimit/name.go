// SPDX-License-Identifier: Apache-2.0

package ratelimit

import (
	"fmt"
	"strconv"
)

// Name identifies one limit. The set is append-only: a new limit gets the
// next value, and values are never reordered or reused, so a number logged
// or exported as a metric label keeps its meaning. The zero Name is invalid.
//
// Each Name documents the key its buckets use. The key is the part after
// "name:" in [BucketKey]; [Request.Key] carries it.
type Name int

const (
	// Global is the per-IP request limit checked on every ACME endpoint
	// before any JWS work, in process ([Edge]). Key: [IPKey] of the client,
	// an IPv4 address ("192.0.2.7") or an IPv6 /64 ("2001:db8:1:2::/64").
	// Kind: rate.
	Global Name = iota + 1

	// AccountCreation limits new-account requests per client IP.
	// Key: [IPKey] of the client, as for Global. Kind: rate.
	AccountCreation

	// OrderCreation limits new-order requests per account, one token per
	// order whatever its size. Key: the account ID ("acct-42"). Kind: rate.
	OrderCreation

	// SANBudget limits identifiers ordered per account: an order for N
	// names costs N tokens. Key: the account ID. Kind: rate.
	SANBudget

	// DuplicateCertificate counts the non-revoked certificates an account
	// holds for one exact set of names within a rolling window. Key:
	// [FQDNSetKey], the account ID, ":" and the hex SHA-256 of the
	// comma-joined sorted names ("acct-42:3f0c…"). Members: certificate
	// serials, timestamped with their issue time. Kind: count.
	DuplicateCertificate

	// FailedValidation limits challenge failures per account and hostname;
	// it is spent when a challenge turns invalid and checked at new-order.
	// Key: the account ID, ":" and the hostname, where "*.example.com" and
	// "example.com" are distinct ("acct-42:*.example.com"). Kind: rate.
	FailedValidation

	// PendingAuthorizations counts the unexpired pending authorizations of
	// an account. Key: the account ID. Members: authorization IDs,
	// timestamped with their expiry. Kind: count.
	PendingAuthorizations

	// RegisteredDomain limits issuance per registered domain (eTLD+1 by the
	// public suffix list). Key: [RegisteredDomainKey] ("example.co.uk"; an
	// IP identifier is keyed by [IPKey]). Kind: rate.
	RegisteredDomain

	// numNames is one past the last Name. Append new names above it.
	numNames
)

// nameString returns the name used in configuration, bucket keys and logs,
// or "" for an invalid Name. A switch rather than a package-level table, so
// nothing can mutate it.
func nameString(n Name) string {
	switch n {
	case Global:
		return "global"
	case AccountCreation:
		return "account-creation"
	case OrderCreation:
		return "order-creation"
	case SANBudget:
		return "san-budget"
	case DuplicateCertificate:
		return "duplicate-certificate"
	case FailedValidation:
		return "failed-validation"
	case PendingAuthorizations:
		return "pending-authorizations"
	case RegisteredDomain:
		return "registered-domain"
	}
	return ""
}

// Names returns every valid Name in order.
func Names() []Name {
	out := make([]Name, 0, numNames-1)
	for n := Global; n < numNames; n++ {
		out = append(out, n)
	}
	return out
}

// String returns the configuration name ("order-creation"), or "Name(N)"
// for an invalid value.
func (n Name) String() string {
	if s := nameString(n); s != "" {
		return s
	}
	return "Name(" + strconv.Itoa(int(n)) + ")"
}

// Valid reports whether n is one of the defined names.
func (n Name) Valid() bool { return n >= Global && n < numNames }

// Kind reports whether n is a rate limit (GCRA) or an exact count.
func (n Name) Kind() Kind {
	switch {
	case !n.Valid():
		return KindInvalid
	case n == DuplicateCertificate || n == PendingAuthorizations:
		return KindCount
	default:
		return KindRate
	}
}

// ParseName returns the Name whose String is s.
func ParseName(s string) (Name, error) {
	for n := Global; n < numNames; n++ {
		if nameString(n) == s {
			return n, nil
		}
	}
	return 0, fmt.Errorf("ratelimit: unknown limit name %q", s)
}

// MarshalText implements encoding.TextMarshaler, so a Name is a readable
// map key in JSON and YAML.
func (n Name) MarshalText() ([]byte, error) {
	if !n.Valid() {
		return nil, fmt.Errorf("ratelimit: invalid limit name %d", int(n))
	}
	return []byte(n.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler with [ParseName].
func (n *Name) UnmarshalText(b []byte) error {
	v, err := ParseName(string(b))
	if err != nil {
		return err
	}
	*n = v
	return nil
}
