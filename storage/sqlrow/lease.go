// SPDX-License-Identifier: Apache-2.0

package sqlrow

import (
	"cmp"
	"slices"
	"time"

	"github.com/weir-pki/weir/acme"
)

// LeaseUntil checks the arguments of a write (what) that leases a job or
// a named lease to owner at now for lease, and returns the lease's end.
func LeaseUntil(d Driver, what, owner string, now time.Time, lease time.Duration) (time.Time, error) {
	switch {
	case owner == "":
		return time.Time{}, d.Errorf("%s: empty owner", what)
	case lease <= 0:
		return time.Time{}, d.Errorf("%s: lease %s is not positive", what, lease)
	case now.IsZero():
		return time.Time{}, d.Errorf("%s: the time is zero", what)
	}
	until := now.Add(lease)
	return until, d.CheckTimes(what, now, until)
}

// CheckLimit checks the limit of a claim of many jobs (what).
func CheckLimit(d Driver, what string, limit int) error {
	if limit <= 0 {
		return d.Errorf("%s: limit %d is not positive", what, limit)
	}
	return nil
}

// SortClaimed puts challenges claimed in one statement (whose RETURNING
// gives the rows in no particular order) in the order of the claim:
// least recently updated first, then by ID, bytewise as both schemas
// collate it.
func SortClaimed(cs []*acme.Challenge) {
	slices.SortFunc(cs, func(a, b *acme.Challenge) int {
		if c := a.UpdatedAt.Compare(b.UpdatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
}
