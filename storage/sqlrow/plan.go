// SPDX-License-Identifier: Apache-2.0

package sqlrow

import (
	"math"
	"time"

	"github.com/weir-pki/weir/acme/renewal"
)

// What the renewal planner reads of the store (acme.Inventory's
// RenewalWindows, IssuedWindows and PlanRemovals) and the journal of
// removed windows (renewal.Removal) that revocations and moved windows
// write, the same for both drivers.

// RenewalWindowCols are the columns of certificates that
// ScanRenewalWindow reads, in order.
const RenewalWindowCols = "serial, account_id, renewal_start, renewal_end"

// RenewalWindowsSQL is a page of renewal.Feed.RenewalWindows, with the
// parameters RenewalWindowArgs gives; the driver's covering index
// certificates_renewal holds every column it reads.
const RenewalWindowsSQL = `SELECT ` + RenewalWindowCols + ` FROM certificates
	WHERE revoked_at IS NULL AND (renewal_end, serial) > ($1, $2) AND issued_at < $3
	ORDER BY renewal_end, serial LIMIT $4`

// ScanRenewalWindow reads one row of RenewalWindowCols.
func ScanRenewalWindow(row Scanner) (renewal.Window, error) {
	var (
		w          renewal.Window
		acct       int64
		start, end int64
	)
	err := row.Scan(&w.Serial, &acct, &start, &end)
	w.AccountID = string(FormatAccountID(acct))
	w.Start, w.End = time.Unix(0, start).UTC(), time.Unix(0, end).UTC()
	return w, err
}

// RenewalWindowArgs are the parameters of a page of RenewalWindowsSQL:
// 1 and 2 the (end, serial) the page starts after, 3 the issue time the
// certificates come before (none for the zero time), 4 the page's size.
// The page's one range term on the index is that row value, so that the
// index is sought there rather than read from the first window after
// after: the first page starts after (after + 1 ns, ""), which is windows
// ending after after.
func RenewalWindowArgs(after, before time.Time, from renewal.Window, limit int) []any {
	if from.Serial == "" || !from.End.After(after) {
		from = renewal.Window{End: after.Add(time.Nanosecond)}
	}
	bound := int64(math.MaxInt64)
	if !before.IsZero() {
		bound = ToNanos(before)
	}
	return []any{ToNanos(from.End), from.Serial, bound, PageLimit(limit)}
}

// IssuedWindowCols are the columns of certificates that ScanIssuedWindow
// reads, in order; the last is renewal.IssuedWindow.Gone.
const IssuedWindowCols = "serial, account_id, renewal_start, renewal_end, issued_at, revoked_at IS NOT NULL OR renew_now"

// IssuedWindowsSQL is a page of renewal.Feed.IssuedWindows, with the
// parameters IssuedWindowArgs gives: one range of the index
// certificates_issued from the page's first issue time.
const IssuedWindowsSQL = `SELECT ` + IssuedWindowCols + ` FROM certificates
	WHERE issued_at >= $1 AND (issued_at, serial) > ($1, $2)
	ORDER BY issued_at, serial LIMIT $3`

// IssuedWindowArgs are the parameters of a page of IssuedWindowsSQL:
// 1 and 2 the (issued_at, serial) the page starts after, 3 its size. The
// first page starts after (since, ""), every serial being longer.
func IssuedWindowArgs(since time.Time, from renewal.IssuedWindow, limit int) []any {
	lo, serial := since, ""
	if from.Serial != "" && !from.IssuedAt.Before(since) {
		lo, serial = from.IssuedAt, from.Serial
	}
	return []any{ToNanos(lo), serial, PageLimit(limit)}
}

// ScanIssuedWindow reads one row of IssuedWindowCols.
func ScanIssuedWindow(row Scanner) (renewal.IssuedWindow, error) {
	var (
		w                  renewal.IssuedWindow
		acct               int64
		start, end, issued int64
	)
	err := row.Scan(&w.Serial, &acct, &start, &end, &issued, &w.Gone)
	w.AccountID = string(FormatAccountID(acct))
	w.Start, w.End, w.IssuedAt = time.Unix(0, start).UTC(), time.Unix(0, end).UTC(), time.Unix(0, issued).UTC()
	return w, err
}

// PlanRemovalCols are the columns of plan_removals that ScanPlanRemoval
// reads, in order.
const PlanRemovalCols = "id, at, issued_at, serial, account_id, renewal_start, renewal_end"

// PlanRemovalsSQL is a page of renewal.Feed.PlanRemovals, with the
// parameters PlanRemovalArgs gives: one range of the index
// plan_removals_at.
const PlanRemovalsSQL = `SELECT ` + PlanRemovalCols + ` FROM plan_removals
	WHERE at >= $1 AND (at, id) > ($1, $2)
	ORDER BY at, id LIMIT $3`

// PlanRemovalArgs are the parameters of a page of PlanRemovalsSQL: 1 and 2
// the (at, id) the page starts after, 3 its size. The first page starts
// after (since, 0), every ID being above 0.
func PlanRemovalArgs(since time.Time, from renewal.Removal, limit int) []any {
	lo, id := since, int64(0)
	if from.ID != 0 && !from.At.Before(since) {
		lo, id = from.At, from.ID
	}
	return []any{ToNanos(lo), id, PageLimit(limit)}
}

// ScanPlanRemoval reads one row of PlanRemovalCols.
func ScanPlanRemoval(row Scanner) (renewal.Removal, error) {
	var (
		r                      renewal.Removal
		at, issued, start, end int64
		acct                   int64
	)
	err := row.Scan(&r.ID, &at, &issued, &r.Serial, &acct, &start, &end)
	r.AccountID = string(FormatAccountID(acct))
	r.At, r.IssuedAt = time.Unix(0, at).UTC(), time.Unix(0, issued).UTC()
	r.Start, r.End = time.Unix(0, start).UTC(), time.Unix(0, end).UTC()
	return r, err
}

// PlanRemovalInsertSQL records the window of the certificates that
// match the driver's condition (appended: "AND serial = ..."), if it ends
// after parameter 1, the time of the change, as a removal at that time.
const PlanRemovalInsertSQL = `INSERT INTO plan_removals (at, issued_at, serial, account_id, renewal_start, renewal_end)
	SELECT $1, issued_at, serial, account_id, renewal_start, renewal_end FROM certificates
	WHERE renewal_end > $1 `

// PlanRemovalsPruneSQL deletes the removals recorded before parameter 1
// (PlanRemovalsPruneArg).
const PlanRemovalsPruneSQL = `DELETE FROM plan_removals WHERE at < $1`

// PlanRemovalsPruneArg is the parameter of PlanRemovalsPruneSQL for a
// removal recorded at at: what is older than renewal.RemovalsKept goes.
func PlanRemovalsPruneArg(at time.Time) int64 {
	return ToNanos(at.Add(-renewal.RemovalsKept))
}
