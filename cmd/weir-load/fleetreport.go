// SPDX-License-Identifier: Apache-2.0

// The fleet's report: the per-minute table, the totals and, for -drill,
// the rotation's outcome; as text or JSON.

package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// fleetReport is what -fleet prints.
type fleetReport struct {
	Weir            string         `json:"weir"`
	WeirRev         string         `json:"weir_rev,omitempty"`
	DataDir         string         `json:"data_dir"`
	DataDirKept     bool           `json:"data_dir_kept"`
	AdminURL        string         `json:"admin_url"`
	AdminTokenFile  string         `json:"admin_token_file"`
	ACMEURL         string         `json:"acme_directory"`
	ServerLog       string         `json:"server_log"`
	Clients         int            `json:"clients"`
	Accounts        int            `json:"accounts"`
	PerAccount      int            `json:"clients_per_account"`
	Lifetime        string         `json:"certificate_lifetime"`
	Backdate        string         `json:"backdate"`
	Ramp            string         `json:"ramp"`
	Steady          string         `json:"steady"`
	Limits          fleetLimits    `json:"limits"`
	SANBudgetPerMin float64        `json:"san_budget_per_min"` // the whole fleet's: accounts × SAN budget an hour / 60
	CeilingPerMin   float64        `json:"planner_ceiling_per_min"`
	Start           time.Time      `json:"start"` // minute 0
	ElapsedSec      float64        `json:"elapsed_s"`
	Minutes         []fleetMinute  `json:"minutes"`
	Totals          fleetTotals    `json:"totals"`
	ErrorKinds      map[string]int `json:"error_kinds,omitempty"`
	Notes           []string       `json:"notes,omitempty"`
	Drill           *drillReport   `json:"drill,omitempty"`
}

// fleetTotals sums the minutes.
type fleetTotals struct {
	Issued             int            `json:"issued"`
	Renewals           int            `json:"renewals"`
	RenewalsToB        int            `json:"renewals_to_b"`
	MovedAToB          int            `json:"moved_a_to_b"`
	Polls              int            `json:"ari_polls"`
	Limited            map[string]int `json:"rate_limited,omitempty"`
	LimitedPastExpiry  int            `json:"rate_limited_past_expiry"`
	Lapsed             int            `json:"lapsed"`
	Errors             int            `json:"errors"`
	AlreadyReplaced    int            `json:"already_replaced"`
	PeakCertsPerMin    int            `json:"peak_certs_per_min"` // the most certificates in any 60 s
	PeakAtSec          int            `json:"peak_at_s"`          // where those 60 s start
	PeakMinute         int            `json:"peak_minute"`        // the table's busiest row
	PeakMinuteCerts    int            `json:"peak_minute_certs"`
	PeakRenewalsPerMin int            `json:"peak_renewals_per_min"` // the most renewals in any 60 s
	PeakRenewalsAtSec  int            `json:"peak_renewals_at_s"`
	OnAEnd             int            `json:"on_a_at_end"`
	OnBEnd             int            `json:"on_b_at_end"`
	ExpiredEnd         int            `json:"expired_at_end"`
}

// drillReport is the rotation's outcome.
type drillReport struct {
	Step1AtSec           float64   `json:"step1_at_s"` // from minute 0
	Commands             []string  `json:"commands"`
	RestartDowntimeSec   float64   `json:"restart_downtime_s"`
	Step2AtSec           float64   `json:"step2_at_s"`
	RenewEarlySeenSec    float64   `json:"renew_early_seen_after_s"` // -1: not seen
	RenewEarlyNote       string    `json:"renew_early_note,omitempty"`
	ADeadline            time.Time `json:"a_deadline"` // the latest notAfter of A's certificates at step 1
	AllOnB               bool      `json:"all_on_b"`
	AllOnBAtSec          float64   `json:"all_on_b_at_s,omitempty"`
	AllOnBBeforeDeadline bool      `json:"all_on_b_before_a_deadline"`
	MigrationSec         float64   `json:"migration_s,omitempty"` // from step 2 to every client on B
	// WeirAtEnd is weir's migration view (GET /api/v1/ca/migration) when
	// the drill ended; empty when weir did not answer it.
	WeirAtEnd []weirIssuerView `json:"weir_at_end,omitempty"`
	// WeirPlan is what weir's view said of its renewal plan over the run
	// (its warning that the plan is over a capacity); nil when it said
	// nothing (an older weir, planning off).
	WeirPlan *planSeen `json:"weir_plan,omitempty"`
	Passed   bool      `json:"passed"` // 0 lapsed, 0 refusals past expiry, all on B in time
}

// total sums the minutes into r.Totals, with the peaks of the stats.
func (r *fleetReport) total(s *fleetStats) {
	t := fleetTotals{Limited: map[string]int{}}
	t.PeakCertsPerMin, t.PeakAtSec, t.PeakRenewalsPerMin, t.PeakRenewalsAtSec = s.peaks()
	for _, m := range r.Minutes {
		t.Issued += m.Issued
		t.Renewals += m.Renewals
		t.RenewalsToB += m.RenewalsToB
		t.MovedAToB += m.MovedAToB
		t.Polls += m.Polls
		t.LimitedPastExpiry += m.LimitedPastExpiry
		t.Lapsed += m.Lapsed
		t.Errors += m.Errors
		t.AlreadyReplaced += m.AlreadyReplaced
		for k, v := range m.Limited {
			t.Limited[k] += v
		}
		if m.CertsPerMin > t.PeakMinuteCerts {
			t.PeakMinuteCerts, t.PeakMinute = m.CertsPerMin, m.Minute
		}
	}
	if n := len(r.Minutes); n > 0 {
		last := r.Minutes[n-1]
		t.OnAEnd, t.OnBEnd, t.ExpiredEnd = last.OnA, last.OnB, last.Expired
	}
	if len(t.Limited) == 0 {
		t.Limited = nil
	}
	r.Totals = t
}

// printFleet prints the per-minute table and the summary.
func printFleet(w io.Writer, r *fleetReport) {
	kept := " (removed at the end: -keep keeps it)"
	if r.DataDirKept {
		kept = ""
	}
	fmt.Fprintf(w, "weir %s %s; data dir %s%s; admin %s (token in %s); server log %s\n",
		r.Weir, r.WeirRev, r.DataDir, kept, r.AdminURL, r.AdminTokenFile, r.ServerLog)
	fmt.Fprintf(w, "%d clients, %d accounts (%d clients each), lifetime %s (backdate %s), ramp %s, steady %s\n",
		r.Clients, r.Accounts, r.PerAccount, r.Lifetime, r.Backdate, r.Ramp, r.Steady)
	fmt.Fprintf(w, "limits %s: orders %d/h (burst %d) and SAN budget %d/h per account (expected renewals %s/h per account); fleet SAN budget %.1f certs/min; planner ceiling %d/h = %.1f/min\n\n",
		r.Limits.Mode, r.Limits.OrdersPerHour, r.Limits.OrderBurst, r.Limits.SANBudgetPerHour, r.Limits.ExpectedPerAcctHour,
		r.SANBudgetPerMin, r.Limits.MaxRenewalsPerHour, r.CeilingPerMin)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "min\tphase\ton A\ton B\texpired\tissued\trenewals\tto B\tcerts/min\t%%SAN\t%%ceil\tARI polls\t429s\tpast exp.\tlapsed\terrors\tweir: A left\t\n")
	for _, m := range r.Minutes {
		label := fmt.Sprint(m.Minute)
		perMin := float64(m.CertsPerMin) * 60 / float64(max(1, m.Seconds))
		if m.Seconds < 60 {
			label += fmt.Sprintf(" (%ds)", m.Seconds)
		}
		left := "-"
		if m.WeirARemaining != nil {
			left = fmt.Sprint(*m.WeirARemaining)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.0f\t%s\t%s\t%d\t%s\t%d\t%d\t%d\t%s\t\n",
			label, m.Phase, m.OnA, m.OnB, m.Expired, m.Issued, m.Renewals, m.RenewalsToB, perMin,
			pct(perMin, r.SANBudgetPerMin), pct(perMin, r.CeilingPerMin), m.Polls, limitedString(m.Limited), m.LimitedPastExpiry, m.Lapsed, m.Errors, left)
	}
	tw.Flush()
	t := r.Totals
	fmt.Fprintf(w, "\ntotals over %.0fs: issued %d, renewals %d (to B %d, A→B %d), ARI polls %d, 429s %s, refused with a Retry-After past expiry %d, lapsed %d, errors %d, alreadyReplaced %d\n",
		r.ElapsedSec, t.Issued, t.Renewals, t.RenewalsToB, t.MovedAToB, t.Polls, limitedString(t.Limited), t.LimitedPastExpiry, t.Lapsed, t.Errors, t.AlreadyReplaced)
	fmt.Fprintf(w, "peak issuance %d certs/min (the 60 s from %ds): %s of the fleet's SAN budget, %s of the planner's ceiling; peak renewals %d/min (from %ds): %s, %s\n",
		t.PeakCertsPerMin, t.PeakAtSec, pct(float64(t.PeakCertsPerMin), r.SANBudgetPerMin), pct(float64(t.PeakCertsPerMin), r.CeilingPerMin),
		t.PeakRenewalsPerMin, t.PeakRenewalsAtSec, pct(float64(t.PeakRenewalsPerMin), r.SANBudgetPerMin), pct(float64(t.PeakRenewalsPerMin), r.CeilingPerMin))
	fmt.Fprintf(w, "at the end: on A %d, on B %d, expired %d\n", t.OnAEnd, t.OnBEnd, t.ExpiredEnd)
	if d := r.Drill; d != nil {
		fmt.Fprintf(w, "drill: step 1 (issuer b, restart) at %.0fs, weir down %.1fs; step 2 (renew-early on default) at %.0fs, seen through ARI after %s\n",
			d.Step1AtSec, d.RestartDowntimeSec, d.Step2AtSec, seenString(d.RenewEarlySeenSec))
		if d.RenewEarlyNote != "" {
			fmt.Fprintf(w, "  %s\n", d.RenewEarlyNote)
		}
		onB := "NOT every client on B"
		if d.AllOnB {
			onB = fmt.Sprintf("every client on B at %.0fs (%.0fs after step 2)", d.AllOnBAtSec, d.MigrationSec)
		}
		fmt.Fprintf(w, "  A's deadline %s; %s; before the deadline: %v\n", d.ADeadline.UTC().Format(time.TimeOnly), onB, d.AllOnBBeforeDeadline)
		for _, is := range d.WeirAtEnd {
			fmt.Fprintf(w, "  weir's view at the end, issuer %s (active %v, leaving %v): live %d, replaced %d, remaining %d, overdue %d\n",
				is.ID, is.Active, is.Leaving, is.Live, is.Replaced, is.Remaining, is.Overdue)
		}
		if p := d.WeirPlan; p != nil {
			fmt.Fprintf(w, "  weir's renewal plan (%d reads): %s\n", p.Samples, p.summary())
		}
		verdict := "PASSED"
		if !d.Passed {
			verdict = "FAILED"
		}
		fmt.Fprintf(w, "  %s: lapsed %d, refusals past expiry %d, all on B before A's deadline %v\n", verdict, t.Lapsed, t.LimitedPastExpiry, d.AllOnBBeforeDeadline)
	}
	if len(r.ErrorKinds) > 0 {
		fmt.Fprintln(w, "errors (retried):")
		for _, k := range slices.Sorted(maps.Keys(r.ErrorKinds)) {
			fmt.Fprintf(w, "  ×%d %s\n", r.ErrorKinds[k], k)
		}
	}
	if len(r.Notes) > 0 {
		fmt.Fprintln(w, "notes:")
		fmt.Fprintln(w, "  "+strings.Join(r.Notes, "\n  "))
	}
}

// summary says what weir told of its plan over the run.
func (p *planSeen) summary() string {
	var parts []string
	if p.FirstOverCeiling >= 0 {
		parts = append(parts, fmt.Sprintf("over its ceiling of %.0f/h from minute %d (up to %d slots over, a peak of %.0f/h; %d windows placed over it)",
			p.CeilingPerHour, p.FirstOverCeiling, p.MaxSlotsOver, p.MaxPeakPerHour, p.PlacedOverCeiling))
	} else {
		parts = append(parts, fmt.Sprintf("within its ceiling of %.0f/h (a peak of %.0f/h)", p.CeilingPerHour, p.MaxPeakPerHour))
	}
	if p.FirstAccountOver >= 0 {
		parts = append(parts, fmt.Sprintf("up to %d accounts over their san-budget from minute %d (%d windows placed over one)",
			p.MaxAccountsOver, p.FirstAccountOver, p.PlacedOverAccount))
	} else {
		parts = append(parts, "no account over its san-budget")
	}
	return strings.Join(parts, "; ")
}

func pct(v, of float64) string {
	if of <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*v/of)
}

func seenString(sec float64) string {
	if sec < 0 {
		return "(not seen)"
	}
	return fmt.Sprintf("%.1fs", sec)
}
