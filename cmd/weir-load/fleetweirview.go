// SPDX-License-Identifier: Apache-2.0

// weir's own view of the rotation, next to the fleet's: the admin API's
// GET /api/v1/ca/migration (weir ca migration-status), read once a minute
// and at the end, so that the table shows how many certificates of A weir
// counts as still to renew beside the clients that hold one, and the
// summary what weir told the operator of its renewal plan against its
// ceiling and the accounts' budgets.

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// weirIssuerView is one issuer of the migration view, as the admin API
// answers it (acme.MigrationStatus; docs/operations.md, "Rotating the
// intermediate").
type weirIssuerView struct {
	ID        string `json:"id"`
	Active    bool   `json:"active"`
	Leaving   bool   `json:"leaving"`
	Live      int64  `json:"live"`
	Replaced  int64  `json:"replaced"`
	Remaining int64  `json:"remaining"`
	Overdue   int64  `json:"overdue"`
}

// weirPlanView is the renewal plan of the view (renewal.Capacity): nil
// from a weir before it, or with planning off.
type weirPlanView struct {
	Slot              string  `json:"slot"`
	CeilingPerHour    float64 `json:"ceiling_per_hour"`
	PeakPerHour       float64 `json:"peak_per_hour"`
	SlotsOver         int     `json:"slots_over"`
	AccountsOver      int     `json:"accounts_over"`
	PlacedOverCeiling uint64  `json:"placed_over_ceiling"`
	PlacedOverAccount uint64  `json:"placed_over_account"`
}

// weirStatus is the part of the view the fleet reads.
type weirStatus struct {
	Issuers []weirIssuerView `json:"issuers"`
	Plan    *weirPlanView    `json:"plan"`
}

// planSeen is what the minutes' reads of the view showed of the renewal
// plan: whether, and from which minute, weir said the certificates will
// ask for more renewals than its ceiling or an account's budget. The
// placement counts restart with weir (step 1), so the maxima are kept.
type planSeen struct {
	Samples           int     `json:"samples"`
	CeilingPerHour    float64 `json:"ceiling_per_hour"`
	MaxPeakPerHour    float64 `json:"max_peak_per_hour"`
	MaxSlotsOver      int     `json:"max_slots_over"`
	FirstOverCeiling  int     `json:"first_over_ceiling_minute"` // -1: never
	MaxAccountsOver   int     `json:"max_accounts_over"`
	FirstAccountOver  int     `json:"first_account_over_minute"` // -1: never
	PlacedOverCeiling uint64  `json:"max_placed_over_ceiling"`
	PlacedOverAccount uint64  `json:"max_placed_over_account"`
}

// add records the plan read after minute.
func (s *planSeen) add(p *weirPlanView, minute int) {
	if s.Samples == 0 {
		s.FirstOverCeiling, s.FirstAccountOver = -1, -1
	}
	s.Samples++
	s.CeilingPerHour = p.CeilingPerHour
	s.MaxPeakPerHour = max(s.MaxPeakPerHour, p.PeakPerHour)
	s.MaxSlotsOver = max(s.MaxSlotsOver, p.SlotsOver)
	s.MaxAccountsOver = max(s.MaxAccountsOver, p.AccountsOver)
	s.PlacedOverCeiling = max(s.PlacedOverCeiling, p.PlacedOverCeiling)
	s.PlacedOverAccount = max(s.PlacedOverAccount, p.PlacedOverAccount)
	if p.SlotsOver > 0 && s.FirstOverCeiling < 0 {
		s.FirstOverCeiling = minute
	}
	if p.AccountsOver > 0 && s.FirstAccountOver < 0 {
		s.FirstAccountOver = minute
	}
}

// weirView reads the migration view of the fleet's weir.
type weirView struct {
	hc        *http.Client
	url       string
	tokenFile string

	mu   sync.Mutex
	plan planSeen
}

func newWeirView(adminBase, tokenFile string) *weirView {
	return &weirView{hc: &http.Client{Timeout: 20 * time.Second}, url: strings.TrimSuffix(adminBase, "/") + "/api/v1/ca/migration", tokenFile: tokenFile}
}

// issuers reads the view's issuers.
func (v *weirView) issuers(ctx context.Context) ([]weirIssuerView, error) {
	st, err := v.read(ctx)
	if err != nil {
		return nil, err
	}
	return st.Issuers, nil
}

// read reads the view; a weir without it (before the view existed)
// answers 404, an error like any other.
func (v *weirView) read(ctx context.Context) (*weirStatus, error) {
	tok, err := os.ReadFile(v.tokenFile)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	res, err := v.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", v.url, res.Status)
	}
	var st weirStatus
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
		return nil, fmt.Errorf("%s: %w", v.url, err)
	}
	return &st, nil
}

// planSeen is what the reads so far showed of the plan; nil when none
// had one.
func (v *weirView) planSeen() *planSeen {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.plan.Samples == 0 {
		return nil
	}
	p := v.plan
	return &p
}

// remainingOf is the remaining count of issuer id in the view, or -1.
func remainingOf(view []weirIssuerView, id string) int64 {
	for _, is := range view {
		if is.ID == id {
			return is.Remaining
		}
	}
	return -1
}

// sampleWeir reads the view and puts default's remaining count into the
// minute, and its plan into what was seen of it; nothing when weir does
// not answer (a restart, an older weir).
func (f *fleet) sampleWeir(ctx context.Context, minute int) {
	if f.view == nil {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	st, err := f.view.read(cctx)
	if err != nil {
		return
	}
	if n := remainingOf(st.Issuers, "default"); n >= 0 {
		f.stats.setWeirRemaining(minute, n)
	}
	if st.Plan != nil {
		f.view.mu.Lock()
		f.view.plan.add(st.Plan, minute)
		f.view.mu.Unlock()
	}
}
