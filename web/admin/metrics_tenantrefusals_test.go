// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"fmt"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// TestTenantRefusalsRing: the recent refusals are a tenant's, newest
// first, at most recentRefusals of all tenants kept; the counts by rule
// keep every refusal since the start.
func TestTenantRefusalsRing(t *testing.T) {
	m := NewMetrics(MetricsOptions{})
	if recent, byRule := m.TenantRefusals("a", 10); len(recent) != 0 || len(byRule) != 0 {
		t.Fatalf("before any refusal: %v, %v", recent, byRule)
	}
	total := recentRefusals + 7
	for i := range total {
		tenant, rule := "a", acme.TenantRuleAllowed
		if i%2 == 1 {
			tenant, rule = "b", acme.TenantRuleDenied
		}
		m.TenantRefused(acme.TenantRefusal{Tenant: tenant, Rule: rule, Action: "new-order", Account: acme.AccountID(fmt.Sprint(i)),
			At: testNow.Add(time.Duration(i) * time.Second)})
	}
	recent, byRule := m.TenantRefusals("a", recentRefusals)
	if byRule[acme.TenantRuleAllowed] != uint64((total+1)/2) || len(byRule) != 1 {
		t.Errorf("a's refusals by rule %v, want %d allowed-names", byRule, (total+1)/2)
	}
	// The ring holds the last recentRefusals of both tenants: half are a's.
	if len(recent) != recentRefusals/2 {
		t.Errorf("a's recent refusals: %d, want %d", len(recent), recentRefusals/2)
	}
	for i := 1; i < len(recent); i++ {
		if !recent[i].At.Before(recent[i-1].At) {
			t.Fatalf("recent refusals not newest first at %d: %v then %v", i, recent[i-1].At, recent[i].At)
		}
	}
	if recent[0].Account != fmt.Sprint(total-1) {
		t.Errorf("a's newest refusal is of account %s, want %d", recent[0].Account, total-1)
	}
	if few, _ := m.TenantRefusals("b", 3); len(few) != 3 || few[0].Rule != acme.TenantRuleDenied {
		t.Errorf("b's last 3: %+v", few)
	}
	sc := scrapeMetrics(t, m)
	if a, b := sc.value("weir_tenant_refusals_total", "tenant", "a", "rule", acme.TenantRuleAllowed),
		sc.value("weir_tenant_refusals_total", "tenant", "b", "rule", acme.TenantRuleDenied); a != float64((total+1)/2) || b != float64(total/2) {
		t.Errorf("weir_tenant_refusals_total: a %v, b %v; want %d, %d", a, b, (total+1)/2, total/2)
	}
}
