// SPDX-License-Identifier: Apache-2.0

package system

import (
	"fmt"
	"strings"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/server"
	"github.com/weir-pki/weir/web/admin"
)

// TestRenewalPlanOverCapacity: weir tells the operator when the
// certificates it issued will ask for more renewals than its ceiling, or
// than an account's san-budget allows. Six 10-minute certificates of one
// account, with a ceiling of one renewal a minute and a budget of 12
// names an hour (a fifth of a renewal a minute), leave the planner a
// couple of one-minute starts: it places over both, and the migration
// view, the metrics and the CLI say so. Raising the ceiling by a live
// reload clears the CA's warning at once; the account's stays until its
// budget is raised too.
func TestRenewalPlanOverCapacity(t *testing.T) {
	e := startEnv(t, func(c *server.Config) {
		c.CA.CertificateLifetime = 10 * time.Minute
		c.ACME.RenewalInfo.MaxRenewalsPerHour = 60
		c.ACME.MaxIdentifiers = 1
		c.RateLimiting.OrderCreation = ratelimit.OrderCreationConfig{Enabled: true, OrdersPerAccountPerHour: 60, OrderBurst: 10, SANBudgetPerAccountPerHour: 12}
	})
	ctx, _, c, acct := e.Registered(t)
	account := acct.URI[strings.LastIndex(acct.URI, "/")+1:]
	for i := range 6 {
		name := fmt.Sprintf("plan%d.weir.test", i)
		chain, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.DomainIDs(name)...)
		e.VerifyChain(chain, name)
	}
	var v admin.MigrationView
	e.adminJSON(t, "/api/v1/ca/migration", &v)
	p := v.Plan
	if p == nil {
		t.Fatal("no plan in the migration view with planning on")
	}
	// Six windows on at most five one-minute starts (issuance within a
	// few minutes): some minute holds two, over the ceiling of one.
	if !p.Over() || p.Slot != "1m0s" || p.CeilingPerHour != 60 || p.SlotsOver < 1 || p.PeakPerHour < 120 || p.PlacedOverCeiling < 1 || p.OverFrom == nil {
		t.Errorf("plan %+v: want minute slots over the ceiling of 60 an hour, a peak of at least 120", p)
	}
	if p.AccountsOver != 1 || len(p.Accounts) != 1 || p.Accounts[0].Account != account || p.Accounts[0].HeadroomPerHour != 12 ||
		p.Accounts[0].PeakPerHour < 60 || p.PlacedOverAccount != 6 {
		t.Errorf("accounts over %d %+v (placed over an account %d): want account %s at 60 an hour or more against 12, all 6 placed over",
			p.AccountsOver, p.Accounts, p.PlacedOverAccount, account)
	}
	m := scrapeServer(t, e.srv)
	if got := m.Get("weir_renewal_plan_slots_over_ceiling"); got != float64(p.SlotsOver) {
		t.Errorf("weir_renewal_plan_slots_over_ceiling = %v, the view says %d", got, p.SlotsOver)
	}
	if got := m.Get("weir_renewal_plan_accounts_over_headroom"); got != 1 {
		t.Errorf("weir_renewal_plan_accounts_over_headroom = %v, want 1", got)
	}
	if got := m.Get("weir_renewal_plan_placed_over_capacity_total", "capacity", "account"); got != 6 {
		t.Errorf("placed over an account's budget: %v, want 6", got)
	}
	out := e.cli.Run(t, 0, "ca", "migration-status")
	for _, want := range []string{"renewal plan (1m0s slots): OVER CAPACITY", "over the ceiling", account + "  "} {
		if !strings.Contains(out, want) {
			t.Errorf("weir ca migration-status lacks %q:\n%s", want, out)
		}
	}

	// The operator raises the ceiling: the CA's warning goes at the next
	// look; the account is still over its budget.
	e.reloadWith(func(c *server.Config) { c.ACME.RenewalInfo.MaxRenewalsPerHour = 100000 })
	e.adminJSON(t, "/api/v1/ca/migration", &v)
	if p := v.Plan; p == nil || p.SlotsOver != 0 || p.CeilingPerHour != 100000 || p.AccountsOver != 1 {
		t.Errorf("after raising the ceiling: %+v; want no slot over, the account still over", p)
	}
	// And its budget: nothing is over.
	e.reloadWith(func(c *server.Config) {
		c.ACME.RenewalInfo.MaxRenewalsPerHour = 100000
		c.RateLimiting.OrderCreation.SANBudgetPerAccountPerHour = 100000
	})
	e.adminJSON(t, "/api/v1/ca/migration", &v)
	if p := v.Plan; p == nil || p.Over() {
		t.Errorf("after raising the budget: %+v; want within capacity", p)
	}
	if got := scrapeServer(t, e.srv).Get("weir_renewal_plan_accounts_over_headroom"); got != 0 {
		t.Errorf("weir_renewal_plan_accounts_over_headroom = %v after the budget was raised, want 0", got)
	}
}
