// SPDX-License-Identifier: Apache-2.0

package renewal

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/weir-pki/weir/ratelimit"
)

// fleetResult is what one simulated renewal wave did.
type fleetResult struct {
	peak    int // most renewals in any sliding hour
	denials int // renewals the limiter refused (429s)
	renewed int
}

// simulateFleet issues certs certificates in one hour over the accounts
// (counts per account), places each one's ARI window (planned, or the
// default window when plan is false), lets every client renew at a uniform
// random time within its window as RFC 9773 §4.2 says, and runs each
// renewal through the real limiter with the requests new-order, the
// authorization's validation and finalize make (ratelimit/actions.go), on
// a simulated clock.
func simulateFleet(t *testing.T, cfg Config, plan bool, accounts []int) fleetResult {
	t.Helper()
	cfg.SetDefaults()
	start := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	now := start
	clock := func() time.Time { return now }
	lim, err := ratelimit.New(ratelimit.DefaultPolicy(), ratelimit.NewMemorySource(clock), clock)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	p := NewPlanner(nil)
	const life = 90 * 24 * time.Hour

	type renewal struct {
		at   time.Time
		acct string
		name string
	}
	var wave []renewal
	total := 0
	for _, n := range accounts {
		total += n
	}
	i := 0
	for a, n := range accounts {
		acct := fmt.Sprintf("%d", a+1)
		for range n {
			// Issued evenly within one hour, accounts interleaved by time.
			nb := start.Add(time.Duration(i) * time.Hour / time.Duration(total))
			i++
			var ws, we time.Time
			if plan {
				ws, we = p.place(cfg, fmt.Sprintf("%x", i), acct, 1, nb, nb.Add(life), lim.RenewalsPerHour(acct, 1))
			} else {
				ws, we = DefaultWindow(nb, nb.Add(life))
			}
			at := ws.Add(time.Duration(rng.Int64N(int64(we.Sub(ws)))))
			wave = append(wave, renewal{at: at, acct: acct, name: fmt.Sprintf("host-%d.acct%s.example.com", i, acct)})
		}
	}
	slices.SortFunc(wave, func(a, b renewal) int { return a.at.Compare(b.at) })

	var res fleetResult
	ctx := t.Context()
	for j, r := range wave {
		now = r.at
		o := ratelimit.Order{ID: fmt.Sprintf("o%d", j), Account: r.acct, Names: []string{r.name}, Renewal: true}
		az := ratelimit.Authz{ID: fmt.Sprintf("a%d", j), Expires: now.Add(7 * 24 * time.Hour)}
		if !allowed(t, lim, ratelimit.NewOrderRequests(o, []ratelimit.Authz{az})) {
			res.denials++
			continue
		}
		free, _ := ratelimit.AuthzFinishedRequests(r.acct, az.ID, r.name, false)
		if err := lim.Remove(ctx, free); err != nil {
			t.Fatal(err)
		}
		if !allowed(t, lim, ratelimit.FinalizeRequests(o)) {
			res.denials++
			continue
		}
		res.renewed++
	}
	// The most renewals within any one hour: a sliding window.
	lo := 0
	for hi := range wave {
		for wave[hi].at.Sub(wave[lo].at) >= time.Hour {
			lo++
		}
		res.peak = max(res.peak, hi-lo+1)
	}
	return res
}

// allowed spends reqs and reports whether the limiter allowed them.
func allowed(t *testing.T, lim *ratelimit.Limiter, reqs []ratelimit.Request) bool {
	t.Helper()
	d, _, err := lim.Spend(t.Context(), reqs...)
	if err != nil {
		t.Fatal(err)
	}
	return d.Allowed
}

// TestARIFleetSimulation: 10,000 certificates issued in one hour — one
// large account holding half of them and 50 small ones — renew by ARI.
// With windows planned against the ceiling and each account's limiter
// headroom, the peak renewal rate stays under the ceiling and no renewal
// gets a 429. With the default windows (the same two days for all), the
// same fleet overshoots the ceiling and the large account is refused.
func TestARIFleetSimulation(t *testing.T) {
	accounts := []int{5000}
	for range 50 {
		accounts = append(accounts, 100)
	}
	cfg := Config{MaxRenewalsPerHour: 100}

	planned := simulateFleet(t, cfg, true, accounts)
	t.Logf("planned windows: %d renewed, peak %d renewals in an hour against a ceiling of %d, %d refused (429)",
		planned.renewed, planned.peak, cfg.MaxRenewalsPerHour, planned.denials)
	if planned.denials != 0 || planned.renewed != 10000 {
		t.Errorf("planned: %d renewals refused, %d renewed; want 0 and 10000", planned.denials, planned.renewed)
	}
	if planned.peak > cfg.MaxRenewalsPerHour {
		t.Errorf("planned: peak %d renewals in an hour, over the ceiling %d", planned.peak, cfg.MaxRenewalsPerHour)
	}

	// The baseline shows the simulation can fail: default windows.
	base := simulateFleet(t, cfg, false, accounts)
	t.Logf("default windows: %d renewed, peak %d renewals in an hour, %d refused (429)", base.renewed, base.peak, base.denials)
	if base.peak <= cfg.MaxRenewalsPerHour || base.denials == 0 {
		t.Errorf("default windows: peak %d and %d refusals; the simulation should show them overshoot", base.peak, base.denials)
	}
}

// TestPlannerPlace: a window lies within its bounds, and the planner
// moves later once an hour is full.
func TestPlannerPlace(t *testing.T) {
	cfg := Config{MaxRenewalsPerHour: 4, WindowWidth: time.Hour}
	cfg.SetDefaults()
	p := NewPlanner(nil)
	nb := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	na := nb.Add(100 * time.Hour)
	var starts []time.Time
	for range 5 {
		s, e := p.place(cfg, "", "1", 1, nb, na, 1000)
		if s.Before(nb.Add(60*time.Hour)) || e.After(nb.Add(80*time.Hour)) || e.Sub(s) != time.Hour {
			t.Fatalf("window [%s, %s] outside [60h, 80h] or not 1h wide", s.Sub(nb), e.Sub(nb))
		}
		starts = append(starts, s)
	}
	// Target 0.5 × 4 = 2 renewals an hour: two windows per hour.
	want := []time.Duration{60, 60, 61, 61, 62}
	for i, s := range starts {
		if s.Sub(nb) != want[i]*time.Hour {
			t.Errorf("window %d starts at %s, want %dh", i, s.Sub(nb), want[i])
		}
	}
	// An account's headroom spreads its own windows further.
	s, _ := p.place(cfg, "", "2", 1, nb, na, 2) // 0.5 × 2 = 1 an hour for account 2
	s2, _ := p.place(cfg, "", "2", 1, nb, na, 2)
	if s2.Sub(s) < time.Hour {
		t.Errorf("account 2's windows at %s and %s share an hour", s.Sub(nb), s2.Sub(nb))
	}
}
