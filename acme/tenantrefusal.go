// SPDX-License-Identifier: Apache-2.0

package acme

import "time"

// The refusals of tenants' policies, by rule, for the administrators: a
// new-order, challenge or finalize that a tenant refused is reported to the
// Observer when it is also a TenantObserver (web/admin's Metrics keeps
// the recent ones for the tenant page). ExplainNewOrder, which refuses
// nothing, reports none.

// The rules of a tenant's policy that refuse an order, named as its
// fields are in the admin API and `weir tenant`.
const (
	TenantRuleAllowed        = "allowed-names"
	TenantRuleDenied         = "denied-names"
	TenantRuleWildcards      = "wildcards"
	TenantRuleIPRanges       = "allowed-ip-ranges"
	TenantRuleChallengeTypes = "challenge-types"
	TenantRuleProfiles       = "profiles"
	TenantRuleMaxLifetime    = "max-lifetime"
)

// TenantRefusal is one refusal by a tenant's policy.
type TenantRefusal struct {
	Tenant string
	// Rule is the policy rule that refused (TenantRule…).
	Rule string
	// Action is new-order, challenge (a challenge answered, or its
	// validation, of a type the tenant no longer allows) or finalize.
	Action  string
	Account AccountID
	// Identifier is the identifier refused; "" for a profile or a
	// lifetime.
	Identifier string
	// Detail is the problem's detail for that identifier.
	Detail string
	At     time.Time
}

// TenantObserver is an Observer that also takes tenant refusals.
type TenantObserver interface {
	TenantRefused(r TenantRefusal)
}

// tenantRefusal is a refusal admitOrder found, before it is reported.
type tenantRefusal struct {
	rule, identifier, detail string
}

// reportTenantRefusals hands the refusals of tenant t to the observer.
func (s *Service) reportTenantRefusals(t *Tenant, action string, account AccountID, refusals []tenantRefusal) {
	obs, ok := s.observer.(TenantObserver)
	if !ok || t == nil || len(refusals) == 0 {
		return
	}
	now := s.now()
	for _, r := range refusals {
		obs.TenantRefused(TenantRefusal{Tenant: t.Name, Rule: r.rule, Action: action, Account: account,
			Identifier: r.identifier, Detail: r.detail, At: now})
	}
}
