// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"time"
)

// LimitRecords is the store role the rate limiter rebuilds its exact
// counts from when its backend has lost them (a Redis restarted empty, a
// memory backend after a restart): the store, not the limiter, is the
// truth for how many certificates a name set has and how many
// authorizations an account has pending. It is not part of Store, so
// that wrappers of Store need not implement it; the SQLite and PostgreSQL
// stores do.
type LimitRecords interface {
	// IssuedSince returns every unrevoked certificate issued at or after
	// since, in no particular order.
	IssuedSince(ctx context.Context, since time.Time) ([]IssuedRecord, error)
	// PendingAuthzs returns every pending authorization that expires after
	// now, in no particular order.
	PendingAuthzs(ctx context.Context, now time.Time) ([]PendingRecord, error)
}

// IssuedRecord is a certificate as the duplicate-certificate limit counts
// it: its account, its order (the limit's member), its names and when it
// was issued.
type IssuedRecord struct {
	AccountID AccountID
	OrderID   OrderID
	Names     []string
	IssuedAt  time.Time
}

// PendingRecord is a pending authorization as the pending-authorizations
// limit counts it.
type PendingRecord struct {
	AccountID AccountID
	AuthzID   AuthzID
	Expires   time.Time
}
