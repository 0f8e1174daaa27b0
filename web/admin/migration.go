// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"fmt"
	"html/template"
	"net/http"
	"strings"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/renewal"
)

// The issuer-migration view (acme.MigrationStatus): GET
// /api/v1/ca/migration, which `weir ca migration-status` reads, and the
// dashboard's page /migration.

// MigrationView is the answer of GET /api/v1/ca/migration, for the
// admin API's clients (the weir CLI).
type MigrationView = acme.MigrationStatus

// PlanCapacityView is the renewal plan of a MigrationView (its plan).
type PlanCapacityView = renewal.Capacity

func (s *Server) apiMigration(w http.ResponseWriter, r *http.Request) error {
	st, err := s.cfg.Service.MigrationStatus(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

// migrationPage is the data of the page: the view, a bar of the live
// certificates' shares, and a line per issuer.
type migrationPage struct {
	Status *acme.MigrationStatus
	Bar    template.HTML
	Rows   []migrationRow
}

// migrationRow is one issuer's line of the page.
type migrationRow struct {
	acme.IssuerMigration
	// Swatch is the issuer's color in Bar.
	Swatch template.HTML
	// SharePct is Share in percent, to a tenth.
	SharePct string
}

func (s *Server) pageMigration(w http.ResponseWriter, r *http.Request) {
	st, err := s.cfg.Service.MigrationStatus(r.Context())
	if err != nil {
		s.failPage(w, r, err)
		return
	}
	p := migrationPage{Status: st, Bar: shareBar(st.Issuers)}
	for i, is := range st.Issuers {
		p.Rows = append(p.Rows, migrationRow{IssuerMigration: is, Swatch: swatch(i),
			SharePct: fmt.Sprintf("%.1f %%", 100*is.Share)})
	}
	s.render(w, r, http.StatusOK, "migration", "Issuer migration", p)
}

// shareColors are the issuers' colors in the bar, by their position.
var shareColors = []string{"#2563eb", "#16a34a", "#d97706", "#9333ea", "#0891b2", "#dc2626", "#4b5563"}

func shareColor(i int) string { return shareColors[i%len(shareColors)] }

// The share bar's size, in SVG user units.
const shareW, shareH = 600, 18

// shareBar draws the live certificates of every issuer as one bar, a
// segment per issuer as wide as its share, with its count in a tooltip;
// a grey bar when none is live.
func shareBar(issuers []acme.IssuerMigration) template.HTML {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="share" id="migration-share" xmlns="http://www.w3.org/2000/svg" width="100%%" height="%d" viewBox="0 0 %d %d" preserveAspectRatio="none" role="img" aria-label="live certificates by issuer">`,
		shareH, shareW, shareH)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#e5e7eb"/>`, shareW, shareH)
	x := 0.0
	for i, is := range issuers {
		if is.Live == 0 {
			continue
		}
		wd := is.Share * shareW
		fmt.Fprintf(&b, `<rect x="%.2f" width="%.2f" height="%d" fill="%s"><title>%s: %d live (%.1f %%)</title></rect>`,
			x, wd, shareH, shareColor(i), template.HTMLEscapeString(is.ID), is.Live, 100*is.Share)
		x += wd
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// swatch is a square of the color of the issuer at position i.
func swatch(i int) template.HTML {
	return template.HTML(fmt.Sprintf(`<svg class="swatch" xmlns="http://www.w3.org/2000/svg" width="10" height="10" viewBox="0 0 10 10" aria-hidden="true"><rect width="10" height="10" fill="%s"/></svg>`,
		shareColor(i)))
}
