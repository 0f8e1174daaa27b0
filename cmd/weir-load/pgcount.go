// SPDX-License-Identifier: Apache-2.0

// -count-pg: the PostgreSQL round trips and statements of an issuance,
// counted on the wire (internal/pgcount).

package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/weir-pki/weir/internal/pgcount"
)

// pgStatementsShown is how many statements the table of -count-pg lists.
const pgStatementsShown = 30

// pgPerCert is what one run sent PostgreSQL, per certificate issued:
// everything every replica sent during the run, the background jobs'
// statements included.
type pgPerCert struct {
	Trips      float64            `json:"round_trips"`
	Statements float64            `json:"statements"`
	ByText     map[string]float64 `json:"by_statement"`
}

// perCert divides the counts d of a run that issued certs certificates.
func perCert(d pgcount.Counts, certs int) *pgPerCert {
	if certs == 0 {
		return nil
	}
	n := float64(certs)
	out := &pgPerCert{Trips: float64(d.Trips) / n, Statements: float64(d.Total()) / n, ByText: map[string]float64{}}
	for k, v := range d.Statements {
		out.ByText[k] = float64(v) / n
	}
	return out
}

// printPGCounts prints the statements of a run per certificate, the most
// frequent first.
func printPGCounts(w io.Writer, c int, p *pgPerCert) {
	if p == nil {
		return
	}
	fmt.Fprintf(w, "c=%d: PostgreSQL per certificate: %.2f round trips, %.2f statements; the most frequent:\n", c, p.Trips, p.Statements)
	texts := slices.SortedFunc(maps.Keys(p.ByText), func(a, b string) int {
		return cmp.Or(cmp.Compare(p.ByText[b], p.ByText[a]), cmp.Compare(a, b))
	})
	for i, t := range texts {
		if i == pgStatementsShown {
			fmt.Fprintf(w, "  … %d more\n", len(texts)-i)
			break
		}
		shown := t
		if len(shown) > 150 {
			shown = shown[:147] + "..."
		}
		fmt.Fprintf(w, "  %7.2f  %s\n", p.ByText[t], shown)
	}
}
