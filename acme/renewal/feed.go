// SPDX-License-Identifier: Apache-2.0

package renewal

import (
	"context"
	"time"
)

// Feed is what the planner reads of the store: every store that
// implements acme.Inventory implements it (storage/storagetest checks
// it). A rebuild reads the promised windows (RenewalWindows); a refresh
// (delta.go), rather than every promised window, what changed since the
// last one (IssuedWindows, PlanRemovals), so that its cost follows the
// issuance and revocation since then, not the size of the fleet.
type Feed interface {
	// RenewalWindows returns the renewal windows of the unrevoked
	// certificates issued before before (the zero time: whenever) whose
	// window ends after after: what the renewal planner has already
	// promised. They come in order of End then Serial, after from (the
	// last window of the previous page; the zero window for the first),
	// at most limit of them (all when limit ≤ 0).
	RenewalWindows(ctx context.Context, after, before time.Time, from Window, limit int) ([]Window, error)
	// IssuedWindows returns the windows of the certificates issued at or
	// after since, revoked or not: what the renewal planner's refresh
	// reads of the windows placed since the last one. They come in order
	// of IssuedAt then Serial, after from (the zero IssuedWindow for the
	// first page), at most limit of them (all when limit ≤ 0).
	IssuedWindows(ctx context.Context, since time.Time, from IssuedWindow, limit int) ([]IssuedWindow, error)
	// PlanRemovals returns the windows taken out of the plan at or after
	// since, in order of At then ID, after from (the zero Removal for
	// the first page), at most limit of them (all when limit ≤ 0).
	PlanRemovals(ctx context.Context, since time.Time, from Removal, limit int) ([]Removal, error)
}

// Window is one certificate's promised ARI window. AccountID is the
// account's ID (acme.AccountID) as a string.
type Window struct {
	Serial     string
	AccountID  string
	Start, End time.Time
}

// Before reports whether w comes before x in the order of RenewalWindows.
func (w Window) Before(x Window) bool {
	return w.End.Before(x.End) || (w.End.Equal(x.End) && w.Serial < x.Serial)
}

// IssuedWindow is a certificate's window as IssuedWindows reads it.
type IssuedWindow struct {
	Window
	IssuedAt time.Time
	// Gone is set when the certificate is revoked or its window was
	// moved (RenewNow): the window is no longer one the plan counts, and
	// a Removal records the window it had.
	Gone bool
}

// Before reports whether w comes before x in the order of IssuedWindows.
func (w IssuedWindow) Before(x IssuedWindow) bool {
	return w.IssuedAt.Before(x.IssuedAt) || (w.IssuedAt.Equal(x.IssuedAt) && w.Serial < x.Serial)
}

// Removal is a window taken out of the renewal plan: its certificate
// revoked, or the window moved into the past (incident mode). A store
// records one in the transaction that revokes or moves a window that
// ends after the time of the change, and keeps it RemovalsKept, so
// that every replica's planner takes the window out of its plan too.
type Removal struct {
	ID       int64     // assigned by the store
	At       time.Time // when the window was taken out
	IssuedAt time.Time // when its certificate was issued
	Window
}

// Before reports whether r comes before x in the order of PlanRemovals.
func (r Removal) Before(x Removal) bool {
	return r.At.Before(x.At) || (r.At.Equal(x.At) && r.ID < x.ID)
}

// RemovalsKept is how long a store keeps a Removal: a store
// deletes those older than this when it records a new one. A planner
// whose last refresh read the removals from longer ago than this (less
// planMargin) rebuilds its plan in full instead (delta.go).
const RemovalsKept = time.Hour

// SoleWriter is implemented by a store that reports whether this process
// is the only one that can write it (SQLite, which holds an exclusive
// lock on its file while open). The renewal planner of that process makes
// every change to the plan itself, as it makes it, so its refresh reads
// nothing back from the store: it only lets the hours that have passed go.
type SoleWriter interface {
	SoleWriter() bool
}
