// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"fmt"
	"slices"
)

// Which challenge types may validate an authorization. One rule decides
// it, challengeBar: the types the server offers (Config.Challenges, the
// challenges.*.enabled switches), only the DNS ones for a wildcard (RFC
// 8555 §7.1.3) and none of them for an IP address (RFC 8738 §7), and
// only those the account's tenant allows (Tenant.ChallengeTypes).
//
// New-order offers the types it allows (challengeTypes). Before the
// type, answerable asks whether the rules in force admit the
// authorization's identifier at all (admitIdentifier, new-order's own
// decision for one name), since the naming policy and the tenant's names
// can be narrowed too. Because the
// tenant may be narrowed, and the server's switches changed by a restart,
// while an authorization lives (up to ValidAuthzLifetime), the rule is
// asked again with the rules in force wherever an authorization is used:
// when a challenge is answered (RespondChallenge) and when a worker takes
// its validation, queued before the change (validate), when new-order
// would reuse a valid authorization (planOrder), and at finalize and at
// the take-over of an interrupted finalization (readmitOrder, through
// checkFulfilled). Boulder refuses the same ("challenge type no longer
// allowed" when a challenge is answered, "authorization fulfilled by
// disabled challenge type" at finalize).
//
// None of these costs a store round trip of its own: the tenant comes
// from accountTenant (cached for the request paths, read once at
// finalize, where it was already read), and finalize checks the
// authorizations it has read to derive the order's status.

// challengeBar is why the rule refuses a challenge type.
type challengeBar int

const (
	challengeAllowed   challengeBar = iota
	barredByServer                  // not among the types the server offers
	barredByIdentifier              // not a type that can validate the identifier
	barredByTenant                  // not among the tenant's challenge-types
)

// challengeBar is the rule: whether challenge type ct may validate an
// authorization of tenant t (nil: the default tenant) for id, the base
// name of a wildcard when wildcard is set, and if not, why.
func (s *Service) challengeBar(t *Tenant, id Identifier, wildcard bool, ct ChallengeType) challengeBar {
	switch {
	case !slices.Contains(s.cfg.Challenges, ct):
		return barredByServer
	case wildcard && !ct.IsDNS(), id.Type == IdentifierIP && ct.IsDNS():
		return barredByIdentifier
	case !t.allowsChallenge(ct):
		return barredByTenant
	}
	return challengeAllowed
}

// challengeTypes are the challenge types an authorization of tenant t
// for id offers: the server's, in its order, that the rule allows.
func (s *Service) challengeTypes(t *Tenant, id Identifier, wildcard bool) []ChallengeType {
	var out []ChallengeType
	for _, ct := range s.cfg.Challenges {
		if s.challengeBar(t, id, wildcard, ct) == challengeAllowed {
			out = append(out, ct)
		}
	}
	return out
}

// checkChallenge refuses challenge type ct for authorization a of tenant
// t when the rule no longer allows it: unauthorized (RFC 8555 §6.7: the
// client lacks the authorization for the identifier that a challenge of
// that type would give), for a's identifier, the detail naming the rule.
// A refusal by the tenant's challenge-types also comes back as the
// tenant refusal to report (tenantrefusal.go).
func (s *Service) checkChallenge(t *Tenant, a *Authorization, ct ChallengeType) (*Problem, []tenantRefusal) {
	var (
		reason  string
		refused []tenantRefusal
	)
	switch s.challengeBar(t, a.Identifier, a.Wildcard, ct) {
	case challengeAllowed:
		return nil, nil
	case barredByServer:
		reason = fmt.Sprintf("challenge type %s is no longer enabled on this server (it offers %s)", ct, joinChallengeTypes(s.cfg.Challenges))
	case barredByIdentifier:
		reason = fmt.Sprintf("challenge type %s cannot validate %q", ct, a.Name())
	case barredByTenant:
		reason = fmt.Sprintf("challenge type %s is no longer allowed for tenant %q (its challenge-types: %s)", ct, t.Name, joinChallengeTypes(t.ChallengeTypes))
		refused = []tenantRefusal{{rule: TenantRuleChallengeTypes, identifier: a.Name(), detail: reason}}
	}
	return Unauthorized("%s", reason).WithIdentifier(Identifier{Type: a.Identifier.Type, Value: a.Name()}), refused
}

// answerable decides, when a challenge of type ct of authorization a of
// acct is answered or validated, whether the rules in force still let it
// validate a: first whether they still admit a's identifier at all
// (admitIdentifier, new-order's decision for it: the naming policy, the
// CA's name constraints and the tenant's names may have been narrowed
// since the authorization was created, and a validation for a name the CA
// no longer issues for is an outbound connection it has no reason to
// make), then checkChallenge. It uses acct's tenant (accountTenant,
// cached: the lookup new-order makes too) and reports the tenant's
// refusal. err is the store's failure to read the tenant.
func (s *Service) answerable(ctx context.Context, acct *Account, a *Authorization, ct ChallengeType) (*Problem, error) {
	tenant, err := s.accountTenant(ctx, acct, false)
	if err != nil {
		return nil, err
	}
	id := Identifier{Type: a.Identifier.Type, Value: a.Name()}
	p, _, refused := s.admitIdentifier(s.rules(), tenant, id, nil)
	if p != nil {
		p.Detail += "; the CA's policy or tenant changed after this authorization was created, so it can no longer be validated"
	} else {
		p, refused = s.checkChallenge(tenant, a, ct)
	}
	s.reportTenantRefusals(tenant, "challenge", acct.ID, refused)
	return p, nil
}

// stillAllowed reports whether the rule still allows the type of the
// challenge that made authorization a valid; true for one no challenge
// made valid (a delegated zone's, which readmitOrder checks apart).
func (s *Service) stillAllowed(t *Tenant, a *Authorization) bool {
	v := a.fulfilledBy()
	return v == nil || s.challengeBar(t, a.Identifier, a.Wildcard, v.Type) == challengeAllowed
}

// fulfilledBy returns the challenge that made authorization a valid; nil
// for one that no challenge did (a delegated zone's) or that is not
// valid.
func (a *Authorization) fulfilledBy() *Challenge {
	if a.Status != StatusValid {
		return nil
	}
	for _, c := range a.Challenges {
		if c.Status == StatusValid {
			return c
		}
	}
	return nil
}
