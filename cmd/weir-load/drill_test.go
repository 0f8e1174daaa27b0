// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/internal/weirproc"
)

// TestFleetDrill is the rotation drill, small: 200 ARI clients holding
// 10-minute certificates of issuer A, issuer b made and made active by a
// restart, renew-early on A; every client must be on B before A's
// deadline (the latest expiry of A's certificates at the restart), no
// certificate may lapse and no 429 may carry a Retry-After past the
// expiry of the certificate it holds. The drill itself takes a few
// minutes; the bounds are the drill's own (A's deadline), not timings.
func TestFleetDrill(t *testing.T) {
	if testing.Short() {
		t.Skip("runs weir and 200 clients for minutes")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 25*time.Minute)
	defer cancel()
	bin, err := weirproc.Build(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	o, err := parseFlags([]string{
		"-weir", bin, "-fleet", "200", "-fleet-lifetime", "10m",
		"-fleet-ramp", "20s", "-fleet-steady", "40s",
		"-drill", "-drill-step2-after", "10s", "-drill-grace", "30s", "-fleet-max", "15m",
	}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	rep, err := fleetRun(ctx, o, t.Output())
	t.Logf("drill: %s wall clock", time.Since(t0).Round(time.Second))
	if rep != nil {
		var out bytes.Buffer
		printFleet(&out, rep)
		t.Log("\n" + out.String())
	}
	if err != nil {
		t.Fatal(err)
	}
	d := rep.Drill
	if d == nil {
		t.Fatal("no drill in the report")
	}
	if rep.Totals.Issued != 200 {
		t.Errorf("%d first certificates issued, want 200", rep.Totals.Issued)
	}
	if rep.Totals.Lapsed != 0 {
		t.Errorf("%d certificates lapsed, want 0", rep.Totals.Lapsed)
	}
	if rep.Totals.LimitedPastExpiry != 0 {
		t.Errorf("%d refusals with a Retry-After past the certificate's expiry, want 0: %s", rep.Totals.LimitedPastExpiry, strings.Join(rep.Notes, "; "))
	}
	if !d.AllOnB || !d.AllOnBBeforeDeadline {
		t.Errorf("every client on B: %v, at %.0fs; A's deadline %s (%.0fs after minute 0): want every client on B before it",
			d.AllOnB, d.AllOnBAtSec, d.ADeadline.UTC().Format(time.TimeOnly), d.ADeadline.Sub(rep.Start).Seconds())
	}
	if d.RenewEarlySeenSec < 0 {
		t.Errorf("renew-early was not seen through ARI: %s", d.RenewEarlyNote)
	}
	// 200 10-minute certificates ask for about 1,700 renewals an hour,
	// far over weir's default ceiling (600): weir must say so.
	if p := d.WeirPlan; p == nil || p.FirstOverCeiling < 0 || p.CeilingPerHour != 600 || p.MaxPeakPerHour <= 600 {
		t.Errorf("weir's renewal plan as the drill read it: %+v; want it over the default ceiling of 600 an hour", p)
	}
}

// TestFleetConfig: the configuration the fleet gives weir has the drill's
// keys in their blocks, and tight limits 1.25 times the expected renewals.
func TestFleetConfig(t *testing.T) {
	s := &fleetServer{dataDir: "/d", listen: "127.0.0.1:1", admin: "127.0.0.1:2", dnsAddr: "127.0.0.1:3", httpPort: 4,
		lifetime: 10 * time.Minute, backdate: time.Minute, limits: fleetLimitsFor("tight", 1.25, 10, 10*time.Minute, 900), maxRenewals: 900}
	if l := s.limits; l.SANBudgetPerHour != 108 || l.OrdersPerHour != 108 || l.OrderBurst != 10 || l.MaxRenewalsPerHour != 900 {
		t.Errorf("tight limits for 10 clients an account, 10m: %+v", l)
	}
	s.issuerB, s.renewEarlyA = true, true
	text := s.config()
	for _, want := range []string{
		"certificate-lifetime: 10m0s\n  backdate: 1m0s\n",
		"  intermediate: { renew-early: true }\n  issuers:\n    - id: b\n  active-issuer: b\n",
		"rate-limiting:\n  whitelist: [\"127.0.0.1/32\"]\n  order-creation: { orders-per-account-per-hour: 108, order-burst: 10, san-budget-per-account-per-hour: 108 }\n",
		"acme:\n  max-identifiers: 1\n  renewal-info: { max-renewals-per-hour: 900 }\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("config lacks %q:\n%s", want, text)
		}
	}
}

func TestParseFleetFlags(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		err    string // "" for none
		factor float64
	}{
		{[]string{"-fleet", "10"}, "", 1.25},
		{[]string{"-fleet", "10", "-fleet-limits", "tight"}, "", 1.25},
		{[]string{"-fleet", "10", "-fleet-limits", "tight=0.5"}, "", 0.5},
		{[]string{"-fleet", "10", "-fleet-limits", "tight=0"}, "not default, tight or tight=F", 0},
		{[]string{"-fleet", "10", "-fleet-limits", "loose"}, "not default, tight or tight=F", 0},
		{[]string{"-fleet", "10", "-fleet-limits", "default=2"}, "not default, tight or tight=F", 0},
		{[]string{"-drill"}, "-drill needs -fleet", 0},
		{[]string{"-fleet", "10", "-fleet-per-account", "11"}, "between 1 and -fleet", 0},
		{[]string{"-fleet", "10", "-fleet-lifetime", "1m"}, "at least 2m", 0},
		{[]string{"-fleet", "10", "-storage", "postgres", "-postgres-dsn", "postgres://u@127.0.0.1/db"}, "one weir on SQLite", 0},
	} {
		o, err := parseFlags(tc.args, io.Discard)
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.err)
			continue
		}
		if err == nil && o.fleetTightFactor != tc.factor {
			t.Errorf("%v: factor %g, want %g", tc.args, o.fleetTightFactor, tc.factor)
		}
	}
}
