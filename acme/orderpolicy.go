// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"slices"
	"time"
)

// admission is what admitOrder decides for an order: the profile it is
// issued under (nil: the CA's defaults), its tenant's cap on the
// certificate's lifetime (0: none) and the delegated zone of each of its
// identifiers ("" for one validated by a challenge).
type admission struct {
	profile     *Profile
	lifetimeCap time.Duration
	zones       []string
	// validations are, at finalize, how each identifier was validated,
	// for the certificate (Certificate.Validations); readmitOrder sets it
	// (checkFulfilled).
	validations []NameValidation
	// tenant is the name of the order's tenant, "" for none: the log
	// entry of its certificate names it (logentry.go).
	tenant string
}

// admitOrder is the one place where the CA's live rules decide whether it
// issues for an order: the naming policy and the CA's name constraints for
// each identifier (checkIdentifier), then the tenant's name patterns
// (tenant nil is the default tenant: ca.policy alone; a tenant never
// widens it, both must admit a name), the profile the order is issued
// under ("" is the default one) and whether the tenant may use it, the
// identifier types that profile allows, the challenge types the tenant
// allows for each identifier (but one under a zone the tenant delegates,
// which needs none: admission.zones), and the longest lifetime (the
// profile's, and the tenant's cap) for a requested notAfter.
//
// NewOrder admits a request with it; Finalize and resumeFinalize admit
// the order again with the rules in force then, because a live reload
// (SetLive) or a tenant update may have changed them in the up to
// OrderLifetime between the two.
//
// The refusals of the tenant's own rules come back apart too, by rule
// (tenantrefusal.go), for the callers that report them.
func (s *Service) admitOrder(tenant *Tenant, idents []Identifier, profileName string, nb, na time.Time) (admission, *Problem, []tenantRefusal) {
	rules := s.rules()
	var (
		probs   []*Problem
		refused []tenantRefusal
	)
	zones := make([]string, len(idents))
	for i, id := range idents {
		var p *Problem
		p, zones[i], refused = s.admitIdentifier(rules, tenant, id, refused)
		if p != nil {
			probs = append(probs, p)
		}
	}
	if p := combine(ProbRejectedIdentifier, "policy forbids some identifiers of this order", probs); p != nil {
		return admission{}, p, refused
	}
	// draft-aaron-acme-profiles §4: no profile means the default one.
	profile, p := rules.Profiles.resolve(profileName)
	if p != nil {
		return admission{}, p, nil
	}
	if p := tenant.checkProfile(profile); p != nil {
		return admission{}, p, []tenantRefusal{{rule: TenantRuleProfiles, detail: p.Detail}}
	}
	if p := profile.checkIdentifiers(idents); p != nil {
		return admission{}, p, nil
	}
	adm := admission{profile: profile, lifetimeCap: tenant.lifetimeCap(), zones: zones}
	if tenant != nil {
		adm.tenant = tenant.Name
	}
	if p := s.checkLifetime(nb, na, adm); p != nil {
		if adm.lifetimeCap > 0 && s.checkLifetime(nb, na, admission{profile: profile}) == nil {
			return admission{}, p, []tenantRefusal{{rule: TenantRuleMaxLifetime, detail: p.Detail}} // the tenant's cap, not the profile's
		}
		return admission{}, p, nil
	}
	return adm, nil, nil
}

// admitIdentifier is admitOrder's decision for one identifier id (a
// wildcard with its "*." label): the naming policy and the CA's name
// constraints, then tenant's name patterns and, for a name outside the
// zones the tenant delegates, whether one of the challenge types it
// allows can validate it. zone is the delegated zone that covers id ("":
// none); a refusal by the tenant's own rules is appended to refused.
func (s *Service) admitIdentifier(rules *Live, tenant *Tenant, id Identifier, refused []tenantRefusal) (p *Problem, zone string, _ []tenantRefusal) {
	p = s.checkIdentifier(rules.Policy, id)
	if p != nil || tenant == nil {
		return p, "", refused
	}
	var rule string
	p, rule = tenant.check(id)
	if zone = tenant.delegation(id); p == nil && zone == "" {
		if p = s.checkTenantChallenges(tenant, id); p != nil {
			rule = TenantRuleChallengeTypes
		}
	}
	if p != nil && rule != "" {
		refused = append(refused, tenantRefusal{rule: rule, identifier: id.Value, detail: p.Detail})
	}
	return p, zone, refused
}

// checkLifetime refuses a notAfter further from notBefore (or from now,
// without one) than the longest lifetime under the admission: its
// profile's, cut to its tenant's cap.
func (s *Service) checkLifetime(nb, na time.Time, adm admission) *Problem {
	if na.IsZero() {
		return nil
	}
	start := nb
	if start.IsZero() {
		start = s.now()
	}
	maxLife := s.maxLifetime(adm.profile)
	if adm.lifetimeCap > 0 && adm.lifetimeCap < maxLife {
		maxLife = adm.lifetimeCap
	}
	if na.Sub(start) > maxLife {
		return Malformed("the requested validity of %s exceeds the maximum certificate lifetime of %s", na.Sub(start), maxLife)
	}
	return nil
}

// readmitOrder is admitOrder for an order being finalized, created under
// the rules in force at its new-order, with the live tenant of acct (the
// order's account; nil to read it), and then checkFulfilled on its
// authorizations: authzs, those its status was derived from (nil to read
// them). A refusal is the problem new-order would give now, or the
// authorization that no longer counts, with the reason the order can no
// longer be finalized. err is the store's failure to read the account,
// its tenant or the authorizations: the order is left as it is.
func (s *Service) readmitOrder(ctx context.Context, o *Order, acct *Account, authzs []*Authorization) (admission, *Problem, error) {
	if acct == nil {
		var err error
		if acct, err = s.store.GetAccount(ctx, o.AccountID); err != nil {
			return admission{}, nil, err
		}
	}
	tenant, err := s.accountTenant(ctx, acct, true)
	if err != nil {
		return admission{}, nil, err
	}
	adm, p, refused := s.admitOrder(tenant, o.Identifiers, o.Profile, o.NotBefore, o.NotAfter)
	if p != nil {
		s.reportTenantRefusals(tenant, "finalize", acct.ID, refused)
		p.Detail += "; the CA's policy, profiles or tenant changed after this order was created, so it cannot be finalized: create a new order"
		return admission{}, p, nil
	}
	if len(authzs) != len(o.AuthzIDs) {
		if authzs, err = s.orderAuthzs(ctx, o); err != nil {
			return admission{}, nil, err
		}
	}
	if p, refused := s.checkFulfilled(o, tenant, authzs, &adm); p != nil {
		s.reportTenantRefusals(tenant, "finalize", acct.ID, refused)
		return admission{}, p, nil
	}
	return adm, nil, nil
}

// checkTenantChallenges refuses an identifier for which the tenant allows
// none of the challenge types its authorization would offer.
func (s *Service) checkTenantChallenges(t *Tenant, id Identifier) *Problem {
	base, wildcard := id.SplitWildcard()
	allowed := func(ct ChallengeType) bool { return s.challengeBar(t, base, wildcard, ct) == challengeAllowed }
	if !slices.ContainsFunc(s.cfg.Challenges, allowed) {
		return NewProblem(ProbRejectedIdentifier, "tenant %q forbids %q: none of its challenge-types (%s) can validate it",
			t.Name, id.Value, joinChallengeTypes(t.ChallengeTypes)).WithIdentifier(id)
	}
	return nil
}
