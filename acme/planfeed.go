// SPDX-License-Identifier: Apache-2.0

package acme

import "time"

// What the renewal planner's refresh (plandelta.go) reads of the store:
// rather than every promised window, what changed since the last
// refresh, so that its cost follows the issuance and revocation since
// then, not the size of the fleet.

// IssuedWindow is a certificate's window as IssuedWindows reads it.
type IssuedWindow struct {
	RenewalWindow
	IssuedAt time.Time
	// Gone is set when the certificate is revoked or its window was
	// moved (RenewNow): the window is no longer one the plan counts, and
	// a PlanRemoval records the window it had.
	Gone bool
}

// Before reports whether w comes before x in the order of IssuedWindows.
func (w IssuedWindow) Before(x IssuedWindow) bool {
	return w.IssuedAt.Before(x.IssuedAt) || (w.IssuedAt.Equal(x.IssuedAt) && w.Serial < x.Serial)
}

// PlanRemoval is a window taken out of the renewal plan: its certificate
// revoked, or the window moved into the past (incident mode). A store
// records one in the transaction that revokes or moves a window that
// ends after the time of the change, and keeps it PlanRemovalsKept, so
// that every replica's planner takes the window out of its plan too.
type PlanRemoval struct {
	ID       int64     // assigned by the store
	At       time.Time // when the window was taken out
	IssuedAt time.Time // when its certificate was issued
	RenewalWindow
}

// Before reports whether r comes before x in the order of PlanRemovals.
func (r PlanRemoval) Before(x PlanRemoval) bool {
	return r.At.Before(x.At) || (r.At.Equal(x.At) && r.ID < x.ID)
}

// PlanRemovalsKept is how long a store keeps a PlanRemoval: a store
// deletes those older than this when it records a new one. A planner
// whose last refresh read the removals from longer ago than this (less
// planMargin) rebuilds its plan in full instead (plandelta.go).
const PlanRemovalsKept = time.Hour

// SoleWriter is implemented by a store that reports whether this process
// is the only one that can write it (SQLite, which holds an exclusive
// lock on its file while open). The renewal planner of that process makes
// every change to the plan itself, as it makes it, so its refresh reads
// nothing back from the store: it only lets the hours that have passed go.
type SoleWriter interface {
	SoleWriter() bool
}
