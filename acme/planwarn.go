// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"log/slog"
	"time"

	"github.com/weir-pki/weir/acme/renewal"
)

// The log's warning that the renewal plan is over a capacity
// (renewal.Capacity): the certificates already issued will ask for more
// renewals an hour than max-renewals-per-hour, or some account's
// certificates for more than its san-budget lets it renew. The same
// figures are on the metrics (weir_renewal_plan_*), the migration view
// and its dashboard page.

// planWarnEvery is how often the plan is checked; planWarnRepeat how
// often a warning that still holds is logged again.
const (
	planWarnEvery  = 5 * time.Minute
	planWarnRepeat = time.Hour
)

// runPlanWarnings checks the plan every planWarnEvery until ctx ends.
func (s *Service) runPlanWarnings(ctx context.Context) {
	t := time.NewTicker(planWarnEvery)
	defer t.Stop()
	var w planWarner
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.check(s.log, s.RenewalCapacity(), s.now())
		}
	}
}

// planWarner logs a warning when the plan goes over a capacity, again
// every planWarnRepeat while it stays over, and a notice when it is back
// within both.
type planWarner struct {
	over bool
	last time.Time
}

// check looks at c, the plan's capacity at now (nil: planning off).
func (w *planWarner) check(log *slog.Logger, c *renewal.Capacity, now time.Time) {
	over := c != nil && c.Over()
	defer func() { w.over = over }()
	if !over {
		if w.over {
			log.Info("renewal plan: back within max-renewals-per-hour and every account's san-budget")
		}
		return
	}
	if w.over && now.Sub(w.last) < planWarnRepeat {
		return
	}
	w.last = now
	if c.SlotsOver > 0 {
		log.Warn("renewal plan: the certificates issued will ask for more renewals an hour than renewal-info.max-renewals-per-hour; "+
			"raise it to what the CA can serve, or the renewals will come faster than it was told",
			"peak_per_hour", int64(c.PeakPerHour+0.5), "peak_at", c.PeakAt, "max_renewals_per_hour", c.CeilingPerHour,
			"slots_over", c.SlotsOver, "slot", c.Slot, "over_from", c.OverFrom)
	}
	if c.AccountsOver > 0 {
		a := c.Accounts[0]
		log.Warn("renewal plan: accounts' certificates will ask for more renewals an hour than their san-budget allows; "+
			"raise their san-budget, or those renewals will meet 429s",
			"accounts", c.AccountsOver, "worst_account", a.Account, "peak_per_hour", a.PeakPerHour,
			"headroom_per_hour", a.HeadroomPerHour, "peak_at", a.PeakAt)
	}
}
