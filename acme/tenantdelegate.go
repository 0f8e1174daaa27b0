// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"fmt"
	"strings"
	"time"
)

// Delegated zones (opt-in per tenant). For a name under a zone the
// operator has delegated to a tenant, the authorization of the tenant's
// account is valid when new-order creates it, with no challenge: whoever
// holds one of the tenant's EAB keys gets any name under the zone with no
// proof of control (docs/operations.md, "Tenants"). Such an
// authorization is the only kind that is valid with no challenge, which
// is how the stores keep the mark (nothing else to migrate) and how the
// authorization's JSON shows it (an empty challenges list, RFC 8555
// §7.1.4). Finalize admits the order again with the live tenant and
// refuses one whose name is no longer delegated; the certificate's
// validation record, stored and audited, names the zone of each delegated
// name (Certificate.Validations).

// ValidationDelegated prefixes the validation method of a name a
// delegated zone admitted (NameValidation.Method):
// "delegated-zone:.a.example".
const ValidationDelegated = "delegated-zone:"

// checkDelegatedZones reports the delegated zones of t (canonical) that
// are not zones, or not within one of its allowed zones.
func (t *Tenant) checkDelegatedZones() []error {
	var errs []error
	for i, z := range t.DelegatedZones {
		base, ok := strings.CutPrefix(z, ".")
		if !ok {
			errs = append(errs, fmt.Errorf("delegated-zones[%d]: %q is a name, not a zone: write \".%s\"", i, z, z))
			continue
		}
		within := false
		for _, a := range t.AllowedNames {
			if strings.HasPrefix(a, ".") && patternHolds(a, base) {
				within = true
				break
			}
		}
		if !within {
			errs = append(errs, fmt.Errorf("delegated-zones[%d]: %q lies within none of the tenant's allowed zones", i, z))
		}
	}
	return errs
}

// delegation returns the delegated zone of t that holds the canonical
// identifier id, "" for none (an IP address, a name outside them, the
// default tenant). A wildcard's base name must be under the zone; whether
// the tenant permits wildcards is check's rule, asked before.
func (t *Tenant) delegation(id Identifier) string {
	if t == nil || id.Type != IdentifierDNS {
		return ""
	}
	base, _ := id.SplitWildcard()
	for _, z := range t.DelegatedZones {
		if patternHolds(z, base.Value) {
			return z
		}
	}
	return ""
}

// isDelegated reports whether authorization a was made valid by a
// delegated zone: valid with no challenge.
func (a *Authorization) isDelegated() bool {
	return a.Status == StatusValid && len(a.Challenges) == 0
}

// newDelegatedAuthz makes the valid authorization, with no challenge, of
// a name under a delegated zone.
func (s *Service) newDelegatedAuthz(accountID AccountID, id Identifier, wildcard bool, now time.Time) *Authorization {
	return &Authorization{
		ID: newID[AuthzID](), AccountID: accountID, Identifier: id, Wildcard: wildcard,
		Status: StatusValid, Expires: now.Add(s.cfg.ValidAuthzLifetime), CreatedAt: now, Challenges: []*Challenge{},
	}
}

// checkDelegated returns the zone of authorization a, the i-th of o, an
// order of tenant's account (nil: the default tenant) being finalized,
// that a delegated zone made valid; it refuses a when its name is no
// longer under a zone the live tenant delegates (adm.zones).
func checkDelegated(o *Order, i int, a *Authorization, tenant *Tenant, adm *admission) (string, *Problem) {
	zone := ""
	if i < len(adm.zones) && i < len(o.Identifiers) && o.Identifiers[i].Value == a.Name() {
		zone = adm.zones[i]
	}
	if zone == "" {
		who := "the default tenant" // which delegates nothing
		if tenant != nil {
			who = fmt.Sprintf("tenant %q", tenant.Name)
		}
		return "", NewProblem(ProbRejectedIdentifier, "%s no longer delegates %q: its authorization was valid with no challenge under a delegated zone; "+
			"the tenant changed after this order was created, so it cannot be finalized: create a new order", who, a.Name()).
			WithIdentifier(Identifier{Type: a.Identifier.Type, Value: a.Name()})
	}
	return zone, nil
}
