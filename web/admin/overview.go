// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"context"
	"fmt"
	"time"

	"github.com/weir-pki/weir/acme"
)

// OverviewView is the dashboard's front page.
type OverviewView struct {
	Counts acme.Counts `json:"counts"`
	// Issuance counts certificates per hour over the last 48 hours,
	// oldest first, starting at IssuanceFrom.
	IssuanceFrom time.Time `json:"issuance_from"`
	IssuanceStep string    `json:"issuance_step"`
	Issuance     []int     `json:"issuance"`
	// CA expiry.
	RootExpires         *time.Time `json:"root_expires,omitempty"`
	IntermediateExpires time.Time  `json:"intermediate_expires"`
	Intermediate        string     `json:"intermediate"`
	// Denials counts 429s by limit since start (this replica).
	Denials map[string]uint64 `json:"denials_by_limit"`
	Config  ConfigInfo        `json:"-"`
}

// Overview gathers the front page.
func (s *Server) Overview(ctx context.Context) (*OverviewView, error) {
	inv, ok := s.cfg.Service.Inventory()
	if !ok {
		return nil, fmt.Errorf("admin: the store has no inventory")
	}
	now := s.cfg.Now().UTC()
	counts, err := inv.Counts(ctx, now)
	if err != nil {
		return nil, err
	}
	from := now.Truncate(time.Hour).Add(-47 * time.Hour)
	hist, err := inv.Issuance(ctx, from, time.Hour, 48)
	if err != nil {
		return nil, err
	}
	h := s.cfg.Service.CA().Hierarchy()
	v := &OverviewView{Counts: counts, IssuanceFrom: from, IssuanceStep: "1h", Issuance: hist,
		IntermediateExpires: h.Intermediate.NotAfter.UTC(), Intermediate: h.Intermediate.Subject.String(),
		Denials: s.cfg.Metrics.DenialsByLimit(), Config: s.cfg.Config()}
	if h.Root != nil {
		t := h.Root.NotAfter.UTC()
		v.RootExpires = &t
	}
	return v, nil
}
