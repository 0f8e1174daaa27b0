// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"math"
	"time"

	"github.com/weir-pki/weir/acme/renewal"
)

// The Service's calls into the renewal planner (acme/renewal), which
// places each new certificate's ARI window (RFC 9773).

// renewalHeadroom is implemented by a Limits that knows how many renewals
// an hour an account can make without a 429 (limits.Adapter: its san-budget
// rate), so the planner spreads one account's certificates within it.
type renewalHeadroom interface {
	RenewalsPerHour(accountID AccountID, names int) float64
}

// renewalWindow places the ARI window of certificate serial being
// issued; with planning off it is the default window.
func (s *Service) renewalWindow(serial string, account AccountID, names int, nb, na time.Time) (time.Time, time.Time) {
	c := s.rules().ARI
	perHour := math.Inf(1)
	if h, ok := s.limits.(renewalHeadroom); ok && c.MaxRenewalsPerHour > 0 {
		perHour = h.RenewalsPerHour(account, names)
	}
	return s.plan.Place(c, serial, string(account), names, nb, na, perHour)
}

// planWindow is cert's window as the planner knows it.
func planWindow(cert *Certificate) renewal.Window {
	return renewal.Window{Serial: cert.Serial, AccountID: string(cert.AccountID), Start: cert.RenewalStart, End: cert.RenewalEnd}
}

// unplan takes the window of cert, revoked or moved into the past, out of
// the plan.
func (s *Service) unplan(cert *Certificate) {
	s.plan.Remove(s.rules().ARI, planWindow(cert), cert.IssuedAt)
}

// unplace takes back the window placed for cert when its certificate was
// not stored after all.
func (s *Service) unplace(cert *Certificate) {
	s.plan.Forget(s.rules().ARI, planWindow(cert), cert.IssuedAt)
}

// runPlanner keeps the plan up to date from startDefer after start until
// ctx ends (renewal.Planner.Run).
func (s *Service) runPlanner(ctx context.Context) {
	inv, _ := s.Inventory()
	s.plan.Run(ctx, s.startDefer, func() bool { return s.rules().ARI.MaxRenewalsPerHour > 0 }, inv, s.log)
}

// shortestLifetime is the shortest lifetime the configuration issues: the
// CA's certificate-lifetime and every profile's. The renewal plan's slot
// follows it (renewal.Config.SlotFor).
func (s *Service) shortestLifetime(ps *Profiles) time.Duration {
	var d time.Duration
	if s.ca != nil {
		d = s.ca.Config().Lifetime
	}
	if ps != nil {
		for _, n := range ps.Names() {
			if p, ok := ps.Get(n); ok && p.Lifetime > 0 && (d <= 0 || p.Lifetime < d) {
				d = p.Lifetime
			}
		}
	}
	return d
}

// RenewalCapacity is the renewal plan's load against
// max-renewals-per-hour and against the headroom of the accounts placed
// over theirs (renewal.Capacity); nil with planning off.
func (s *Service) RenewalCapacity() *renewal.Capacity {
	c := s.rules().ARI
	if c.MaxRenewalsPerHour <= 0 {
		return nil
	}
	var headroom func(string, int) float64
	if h, ok := s.limits.(renewalHeadroom); ok {
		headroom = func(id string, names int) float64 { return h.RenewalsPerHour(AccountID(id), names) }
	}
	cp := s.plan.Capacity(c, headroom)
	return &cp
}
