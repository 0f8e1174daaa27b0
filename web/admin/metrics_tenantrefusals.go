// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"maps"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weir-pki/weir/acme"
)

// The tenants' recent refusals on this replica, for the tenant page: the
// last recentRefusals of all tenants, and the count of each tenant's
// refusals by rule since the start. Metrics takes them as an
// acme.TenantObserver.

// recentRefusals is how many refusals are kept, all tenants together.
const recentRefusals = 500

var _ acme.TenantObserver = (*Metrics)(nil)

// tenantRefusals is the ring of recent refusals and the counts, and
// weir_tenant_refusals_total.
type tenantRefusals struct {
	total *prometheus.CounterVec

	mu     sync.Mutex
	ring   []acme.TenantRefusal // oldest first once full, from next
	next   int
	counts map[string]map[string]uint64 // tenant → rule → refusals
}

// RefusalView is one refusal as the admin API shows it.
type RefusalView struct {
	At         time.Time `json:"at"`
	Rule       string    `json:"rule"`
	Action     string    `json:"action"`
	Account    string    `json:"account"`
	Identifier string    `json:"identifier,omitempty"`
	Detail     string    `json:"detail"`
}

// init registers weir_tenant_refusals_total in reg.
func (t *tenantRefusals) init(reg prometheus.Registerer) {
	t.total = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "weir_tenant_refusals_total",
		Help: "New-orders and finalizes refused by a tenant's policy, by tenant and by the rule that refused (allowed-names, denied-names, wildcards, allowed-ip-ranges, challenge-types, profiles, max-lifetime); one per identifier refused.",
	}, []string{"tenant", "rule"})
	reg.MustRegister(t.total)
}

// TenantRefused implements acme.TenantObserver.
func (m *Metrics) TenantRefused(r acme.TenantRefusal) {
	t := &m.refusals
	if t.total != nil {
		t.total.WithLabelValues(r.Tenant, r.Rule).Inc()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.counts == nil {
		t.counts = map[string]map[string]uint64{}
	}
	if t.counts[r.Tenant] == nil {
		t.counts[r.Tenant] = map[string]uint64{}
	}
	t.counts[r.Tenant][r.Rule]++
	if len(t.ring) < recentRefusals {
		t.ring = append(t.ring, r)
		return
	}
	t.ring[t.next] = r
	t.next = (t.next + 1) % recentRefusals
}

// TenantRefusals returns tenant's last n refusals kept, newest first, and
// its refusals by rule since the start.
func (m *Metrics) TenantRefusals(tenant string, n int) ([]RefusalView, map[string]uint64) {
	t := &m.refusals
	t.mu.Lock()
	defer t.mu.Unlock()
	recent := []RefusalView{}
	for i := len(t.ring) - 1; i >= 0 && len(recent) < n; i-- {
		r := t.ring[(t.next+i)%len(t.ring)]
		if r.Tenant == tenant {
			recent = append(recent, RefusalView{At: r.At, Rule: r.Rule, Action: r.Action, Account: string(r.Account),
				Identifier: r.Identifier, Detail: r.Detail})
		}
	}
	byRule := maps.Clone(t.counts[tenant])
	if byRule == nil {
		byRule = map[string]uint64{}
	}
	return recent, byRule
}
