// SPDX-License-Identifier: Apache-2.0

// weir's own view of the rotation, next to the fleet's: the admin API's
// GET /api/v1/ca/migration (weir ca migration-status), read once a minute
// and at the end, so that the table shows how many certificates of A weir
// counts as still to renew beside the clients that hold one.

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
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

// weirView reads the migration view of the fleet's weir.
type weirView struct {
	hc        *http.Client
	url       string
	tokenFile string
}

func newWeirView(adminBase, tokenFile string) *weirView {
	return &weirView{hc: &http.Client{Timeout: 20 * time.Second}, url: strings.TrimSuffix(adminBase, "/") + "/api/v1/ca/migration", tokenFile: tokenFile}
}

// issuers reads the view; a weir without it (before the view existed)
// answers 404, an error like any other.
func (v *weirView) issuers(ctx context.Context) ([]weirIssuerView, error) {
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
	var st struct {
		Issuers []weirIssuerView `json:"issuers"`
	}
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
		return nil, fmt.Errorf("%s: %w", v.url, err)
	}
	return st.Issuers, nil
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
// minute; nothing when weir does not answer (a restart, an older weir).
func (f *fleet) sampleWeir(ctx context.Context, minute int) {
	if f.view == nil {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	view, err := f.view.issuers(cctx)
	if err != nil {
		return
	}
	if n := remainingOf(view, "default"); n >= 0 {
		f.stats.setWeirRemaining(minute, n)
	}
}
