// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"errors"
	"time"

	"github.com/weir-pki/weir/acme/renewal"
)

// The issuer-migration view: while the holders of one issuer's
// certificates move to another (a rotation of the intermediate, ca.issuers
// and ca.active-issuer, often with renew-early on the one left), how many
// of its certificates are live, how many were renewed already, how many
// are late, how fast they leave it and when the last one will have left.
// docs/operations.md ("Rotating the intermediate") describes each figure.

// MigrationWindow is the recent interval of the view: the issuances and
// the renewals off each issuer it counts, and the refusals.
const MigrationWindow = 5 * time.Minute

// MigrationStatus is the view at At.
type MigrationStatus struct {
	At time.Time `json:"at"`
	// Window is MigrationWindow, as Go prints a duration ("5m0s").
	Window string `json:"window"`
	// Issuers are the configured issuers, in the configured order.
	Issuers []IssuerMigration `json:"issuers"`
	// Refused is what the Observer keeps of the refusals renewals may
	// have met in the window; nil when it keeps none.
	Refused *RefusedRenewals `json:"refused"`
	// Plan is the renewal plan's load against max-renewals-per-hour and
	// the accounts' san-budgets: whether the renewals the certificates
	// will ask for fit what the CA was told it serves. nil with planning
	// off.
	Plan *renewal.Capacity `json:"plan"`
}

// IssuerMigration is one issuer's line of the view.
type IssuerMigration struct {
	ID         string `json:"id"`
	Active     bool   `json:"active"`
	RenewEarly bool   `json:"renew_early"`
	// Leaving is set for an issuer its holders are moving off: one that
	// is not active, or whose holders are told to renew early.
	Leaving bool `json:"leaving"`
	// Live counts its certificates not revoked and not expired.
	Live int64 `json:"live"`
	// Share is Live's part of the live certificates of every issuer,
	// from 0 to 1.
	Share float64 `json:"share"`
	// Replaced counts the live ones a renewal replaced already (a valid
	// order naming them in replaces, RFC 9773); Remaining the others,
	// whose holders have yet to renew.
	Replaced  int64 `json:"replaced"`
	Remaining int64 `json:"remaining"`
	// Overdue counts, for an issuer being left, the remaining ones whose
	// own renewal window (the one stored at issuance, or moved into the
	// past by renew-now) has ended: late even by their own schedule. 0
	// for an issuer not being left.
	Overdue int64 `json:"overdue"`
	// Issued counts the certificates it issued in the window.
	Issued int64 `json:"issued"`
	// RenewedOff counts its live certificates replaced in the window by a
	// certificate of another issuer, and RatePerHour is that pace.
	RenewedOff  int64   `json:"renewed_off"`
	RatePerHour float64 `json:"rate_per_hour"`
	// FirstExpiry and LastExpiry are the earliest and latest expiry of
	// the live ones; nil when there are none. After LastExpiry it has no
	// live certificate.
	FirstExpiry *time.Time `json:"first_expiry"`
	LastExpiry  *time.Time `json:"last_expiry"`
	// ProjectedEmptyAt is, for an issuer being left with live
	// certificates, when the last of its holders is projected to have
	// renewed off it: At plus Remaining at the pace of RenewedOff (At when
	// none remain), and LastExpiry when that is later or nothing moved in
	// the window. nil otherwise.
	ProjectedEmptyAt *time.Time `json:"projected_empty_at"`
}

// RefusedRenewals is what an Observer keeps of the refusals renewals may
// have met. weir does not record which refused orders were renewals nor
// whose certificate they replaced, so the count is of the whole CA and of
// one replica.
type RefusedRenewals struct {
	// Denials counts the 429s of new-order and finalize in the window
	// by a limit an ARI renewal is not exempt from: at most the
	// renewals refused, since other orders get those 429s too.
	Denials int `json:"denials"`
	// Complete is false when the Observer's record of denials does not
	// reach back to the window's start, which held more.
	Complete bool `json:"complete"`
}

// RenewalRefusalCounter is an Observer that counts the refusals a renewal
// may have met since a time (web/admin's Metrics).
type RenewalRefusalCounter interface {
	RenewalRefusals(since time.Time) RefusedRenewals
}

// MigrationStatus counts the view at now, with one call to the store's
// IssuerCounter.
func (s *Service) MigrationStatus(ctx context.Context) (*MigrationStatus, error) {
	ic, ok := s.store.(IssuerCounter)
	if !ok {
		return nil, errors.New("acme: the store cannot count issuers' certificates")
	}
	now := s.now().UTC()
	q := IssuerCountQuery{Now: now, Since: now.Add(-MigrationWindow)}
	for _, is := range s.issuerList() {
		q.Issuers = append(q.Issuers, IssuerKey{ID: is.ID, KeyID: is.CA.Hierarchy().Intermediate.SubjectKeyId})
	}
	counts, err := ic.IssuerCounts(ctx, q)
	if err != nil {
		return nil, Internal(err)
	}
	if len(counts) != len(q.Issuers) {
		return nil, Internal(errors.New("acme: the store counted other issuers than asked"))
	}
	st := &MigrationStatus{At: now, Window: MigrationWindow.String(), Issuers: make([]IssuerMigration, len(counts))}
	active := s.activeIssuer()
	var total int64
	for _, c := range counts {
		total += c.Live
	}
	for i, c := range counts {
		st.Issuers[i] = issuerMigration(c, c.Issuer == active, s.renewEarly(c.Issuer), total, now)
	}
	if rc, ok := s.observer.(RenewalRefusalCounter); ok {
		r := rc.RenewalRefusals(q.Since)
		st.Refused = &r
	}
	st.Plan = s.RenewalCapacity()
	return st, nil
}

// issuerMigration is the line of the issuer counted c at now, of total
// live certificates.
func issuerMigration(c IssuerCount, active, renewEarly bool, total int64, now time.Time) IssuerMigration {
	m := IssuerMigration{ID: c.Issuer, Active: active, RenewEarly: renewEarly, Leaving: !active || renewEarly,
		Live: c.Live, Replaced: c.Replaced, Remaining: c.Live - c.Replaced, Issued: c.Issued, RenewedOff: c.RenewedOff,
		RatePerHour: float64(c.RenewedOff) * float64(time.Hour) / float64(MigrationWindow)}
	if total > 0 {
		m.Share = float64(c.Live) / float64(total)
	}
	if c.Live == 0 {
		return m
	}
	first, last := c.FirstExpiry.UTC(), c.LastExpiry.UTC()
	m.FirstExpiry, m.LastExpiry = &first, &last
	if !m.Leaving {
		return m
	}
	m.Overdue = c.Overdue
	empty := last
	switch {
	case m.Remaining <= 0:
		empty = now
	case c.RenewedOff > 0:
		// Remaining more renewals at RenewedOff per window (in float, so
		// that a long wait compares with LastExpiry before it can
		// overflow a Duration).
		if d := float64(MigrationWindow) * float64(m.Remaining) / float64(c.RenewedOff); d < float64(last.Sub(now)) {
			empty = now.Add(time.Duration(d))
		}
	}
	m.ProjectedEmptyAt = &empty
	return m
}
