// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ratelimit"
)

// The refusals renewals may have met, for the issuer-migration view
// (acme.RenewalRefusalCounter), from the ring of recent denials: the
// limiter's events do not say whether an order was a renewal, so the
// count is of the 429s of new-order and finalize by a limit that an ARI
// renewal pays, which other orders get too.

var _ acme.RenewalRefusalCounter = (*Metrics)(nil)

// renewalLimits are the limits a renewal's new-order and finalize spend
// or check (ratelimit/actions.go): all but those renewals are exempt
// from.
var renewalLimits = func() map[string]bool {
	o := ratelimit.Order{Account: "1", Names: []string{"renewal.example.com"}, Renewal: true}
	reqs := append(ratelimit.NewOrderRequests(o, []ratelimit.Authz{{ID: "authz"}}), ratelimit.FinalizeRequests(o)...)
	out := map[string]bool{}
	for _, r := range reqs {
		out[r.Name.String()] = true
	}
	return out
}()

// RenewalRefusals implements acme.RenewalRefusalCounter: the kept
// denials of new-order and finalize at or after since by a limit in
// renewalLimits; complete unless the ring is full and the first denial
// it keeps is not before since.
func (m *Metrics) RenewalRefusals(since time.Time) acme.RefusedRenewals {
	denials := m.Recent429s(0) // newest first
	r := acme.RefusedRenewals{Complete: len(denials) < recentDenials || denials[len(denials)-1].At.Before(since)}
	for _, d := range denials {
		// Every one is read: they are kept in the order they were
		// recorded, which may not be that of their times (a backend's
		// clock, several backends).
		if !d.At.Before(since) && (d.Action == "new-order" || d.Action == "finalize") && renewalLimits[d.Limit] {
			r.Denials++
		}
	}
	return r
}
