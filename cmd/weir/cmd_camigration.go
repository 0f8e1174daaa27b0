// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/weir-pki/weir/web/admin"
)

// caMigrationStatus prints the issuer-migration view of the running weir
// (GET /api/v1/ca/migration): a small table per issuer, then the
// refusals renewals may have met.
func caMigrationStatus(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, af := newVerbFlags("ca migration-status", "ca migration-status [--json]",
		"Shows, for each issuer of the running weir, its live certificates, how\n"+
			"many were renewed and how many are overdue, how fast its holders renew\n"+
			"off it and when the last is projected to have (docs/operations.md,\n"+
			"\"Rotating the intermediate\").", stderr)
	if code, ok := parseNoArgs(fs, args, stdout, stderr); !ok {
		return code
	}
	return ask(ctx, fs, af, nil, get("/api/v1/ca/migration", nil), stdout, stderr, func(v admin.MigrationView) {
		fmt.Fprintf(stdout, "issuers at %s; the recent window is the last %s\n", v.At.UTC().Format(time.RFC3339), v.Window)
		for _, is := range v.Issuers {
			state := "not active"
			if is.Active {
				state = "active"
			}
			if is.RenewEarly {
				state += ", renew-early"
			}
			if is.Leaving {
				state += ": being left"
			}
			fmt.Fprintf(stdout, "\n%s (%s)\n", is.ID, state)
			tw := newTable(stdout, "")
			fmt.Fprintf(tw, "  live\t%d (%.1f %% of all)\n", is.Live, 100*is.Share)
			fmt.Fprintf(tw, "  replaced\t%d (renewed already)\n", is.Replaced)
			fmt.Fprintf(tw, "  remaining\t%d\n", is.Remaining)
			if is.Leaving {
				fmt.Fprintf(tw, "  overdue\t%d (remaining, their own window ended)\n", is.Overdue)
			}
			fmt.Fprintf(tw, "  issued\t%d (in the window)\n", is.Issued)
			fmt.Fprintf(tw, "  renewed off\t%d (in the window: %.0f an hour)\n", is.RenewedOff, is.RatePerHour)
			fmt.Fprintf(tw, "  first expiry\t%s\n", fmtTime(is.FirstExpiry, v.At))
			fmt.Fprintf(tw, "  last expiry\t%s\n", fmtTime(is.LastExpiry, v.At))
			if is.Leaving {
				fmt.Fprintf(tw, "  projected empty\t%s\n", fmtTime(is.ProjectedEmptyAt, v.At))
			}
			tw.Flush()
		}
		if r := v.Refused; r != nil {
			more := ""
			if !r.Complete {
				more = "; more than this replica keeps, the older ones are not counted"
			}
			fmt.Fprintf(stdout, "\nrefused renewals: at most %d (429s of new-order and finalize by a limit renewals pay, on this replica%s)\n", r.Denials, more)
		}
		printPlanCapacity(stdout, v.Plan, v.At)
	})
}

// printPlanCapacity prints the renewal plan against its capacities,
// with a warning line for each it is over.
func printPlanCapacity(w io.Writer, p *admin.PlanCapacityView, at time.Time) {
	if p == nil {
		fmt.Fprintln(w, "\nrenewal plan: off (renewal-info.max-renewals-per-hour: 0)")
		return
	}
	state := "within capacity"
	if p.Over() {
		state = "OVER CAPACITY"
	}
	fmt.Fprintf(w, "\nrenewal plan (%s slots): %s\n", p.Slot, state)
	tw := newTable(w, "")
	fmt.Fprintf(tw, "  ceiling\t%.0f renewals an hour (max-renewals-per-hour)\n", p.CeilingPerHour)
	fmt.Fprintf(tw, "  busiest ahead\t%.0f an hour, %s\n", p.PeakPerHour, fmtTime(p.PeakAt, at))
	if p.SlotsOver > 0 {
		fmt.Fprintf(tw, "  over the ceiling\t%d slots, from %s: raise max-renewals-per-hour to what the CA serves\n", p.SlotsOver, fmtTime(p.OverFrom, at))
	}
	fmt.Fprintf(tw, "  placed over\t%d windows over the ceiling, %d over an account's budget (this replica, since it started)\n", p.PlacedOverCeiling, p.PlacedOverAccount)
	if !p.Loaded {
		fmt.Fprintf(tw, "  note\tnot yet rebuilt from the store: this replica's placements only\n")
	}
	tw.Flush()
	if p.AccountsOver > 0 {
		fmt.Fprintf(w, "  %d accounts will ask for more renewals than their san-budget allows (their renewals will meet 429s):\n", p.AccountsOver)
		tw := newTable(w, "")
		fmt.Fprintf(tw, "  account\tpeak/h\tallowed/h\tat\n")
		for _, a := range p.Accounts {
			fmt.Fprintf(tw, "  %s\t%.1f\t%.1f\t%s\n", a.Account, a.PeakPerHour, a.HeadroomPerHour, fmtTime(&a.PeakAt, at))
		}
		tw.Flush()
	}
}
