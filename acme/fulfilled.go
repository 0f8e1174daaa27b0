// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"fmt"
)

// checkFulfilled checks again, at finalize, how each authorization of o
// was made valid, under the rules in force and tenant (nil: the default
// tenant), the live tenant of o's account, and records it for the
// certificate in adm.validations. authzs are o's authorizations in the
// order of o.AuthzIDs. One a delegated zone made valid counts only while
// the name is still delegated (checkDelegated); one a challenge made
// valid, only while the rule still allows that challenge's type for the
// name (challengerule.go). The refusals come back as one problem, with a
// subproblem per name when several are refused, and the tenant's
// refusals to report.
func (s *Service) checkFulfilled(o *Order, tenant *Tenant, authzs []*Authorization, adm *admission) (*Problem, []tenantRefusal) {
	var (
		probs   []*Problem
		refused []tenantRefusal
	)
	adm.validations = make([]NameValidation, 0, len(authzs))
	for i, a := range authzs {
		// An authorization created before the order is an earlier
		// order's, which this one reused: new-order makes the order and
		// its new authorizations at one instant.
		v := NameValidation{Name: a.Name(), AuthzID: a.ID, Reused: a.CreatedAt.Before(o.CreatedAt)}
		if a.isDelegated() {
			zone, p := checkDelegated(o, i, a, tenant, adm)
			if p != nil {
				probs = append(probs, p)
			}
			v.Method, v.ValidatedAt = ValidationDelegated+zone, a.CreatedAt
			adm.validations = append(adm.validations, v)
			continue
		}
		if ch := a.fulfilledBy(); ch != nil {
			if p, r := s.checkChallenge(tenant, a, ch.Type); p != nil {
				p.Detail = fmt.Sprintf("the authorization of %q was fulfilled by %s, and %s: this order cannot be finalized; create a new order", a.Name(), ch.Type, p.Detail)
				probs = append(probs, p)
				refused = append(refused, r...)
			}
			v.Method, v.ValidatedAt = string(ch.Type), ch.Validated
		}
		adm.validations = append(adm.validations, v)
	}
	return combine(ProbUnauthorized, "the authorizations of several of this order's names no longer count: create a new order", probs), refused
}

// orderAuthzs reads the authorizations of o, in the order of o.AuthzIDs.
func (s *Service) orderAuthzs(ctx context.Context, o *Order) ([]*Authorization, error) {
	authzs := make([]*Authorization, 0, len(o.AuthzIDs))
	for _, id := range o.AuthzIDs {
		a, err := s.store.GetAuthz(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("authorization %s of order %s: %w", id, o.ID, err)
		}
		authzs = append(authzs, a)
	}
	return authzs, nil
}
