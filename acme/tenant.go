// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// Tenants. A tenant is a named policy that EAB keys, and through them the
// accounts bound with them, belong to (EABKey.Tenant). An account without
// one (no EAB key, or a key of no tenant) is in the default tenant, which
// is ca.policy and the profiles alone. A tenant's policy never widens
// ca.policy: admitOrder asks both, and a name must pass both.
//
// Name patterns: "host.example.com" is that exact name; ".example.com" is
// the zone: example.com and every name under it. A wildcard identifier
// "*.b.example.com" needs Wildcards and an allowed zone that holds
// b.example.com (an exact pattern never admits a wildcard). Denied
// patterns win over allowed ones; a wildcard is refused when it covers a
// denied name (a one-label child of its base). An empty AllowedNames
// admits no DNS name and an empty AllowedIPRanges no IP address: a tenant
// admits only what it lists.

// maxTenantName is the longest tenant name and EAB label.
const maxTenantName = 64

// Tenant is a tenant's policy as the store keeps it.
type Tenant struct {
	Name string `json:"name,omitempty"`
	// AllowedNames and DeniedNames are name patterns (see above).
	AllowedNames []string `json:"allowed-names"`
	DeniedNames  []string `json:"denied-names"`
	// Wildcards permits wildcard identifiers under the allowed zones.
	Wildcards bool `json:"wildcards"`
	// AllowedIPRanges are CIDRs or single addresses (ParseIPRange).
	AllowedIPRanges []string `json:"allowed-ip-ranges"`
	// Profiles the tenant's orders may use; empty: every profile offered.
	Profiles []string `json:"profiles"`
	// ChallengeTypes the tenant's authorizations offer; empty: every type
	// the server offers.
	ChallengeTypes []ChallengeType `json:"challenge-types"`
	// DelegatedZones are ".zone" patterns, each within an allowed zone,
	// whose names the tenant's accounts get with no challenge: their
	// authorizations are valid when created (tenantdelegate.go). Empty,
	// the default: every name is validated.
	DelegatedZones []string `json:"delegated-zones,omitempty"`
	// MaxLifetime, when positive, caps the certificates' validity: an
	// order asking for a longer notAfter is refused at new-order, and a
	// profile's longer lifetime is cut to it at issuance.
	MaxLifetime time.Duration `json:"max-lifetime"`
	CreatedAt   time.Time     `json:"created-at,omitzero"`
	UpdatedAt   time.Time     `json:"updated-at,omitzero"`
}

// TenantStore keeps tenants. A Store that keeps EAB keys keeps tenants
// too; storage/storagetest checks the contract.
type TenantStore interface {
	// CreateTenant stores a new tenant. ErrConflict if its name exists.
	CreateTenant(ctx context.Context, t *Tenant) error
	// GetTenant returns a tenant by name. ErrNotFound if there is none.
	GetTenant(ctx context.Context, name string) (*Tenant, error)
	// ListTenants returns every tenant, by name.
	ListTenants(ctx context.Context) ([]*Tenant, error)
	// UpdateTenant replaces the policy of tenant t.Name (every field but
	// Name and CreatedAt). ErrNotFound if there is none.
	UpdateTenant(ctx context.Context, t *Tenant) error
	// DeleteTenant removes a tenant. ErrNotFound if there is none,
	// ErrConflict while an EAB key belongs to it.
	DeleteTenant(ctx context.Context, name string) error
}

// CheckTenantName reports why name cannot name a tenant: the rules of an
// EAB label, so that "tenant:NAME" is a plain rate-limit override key.
func CheckTenantName(name string) error {
	if err := checkGroupName(name); err != nil {
		return fmt.Errorf("tenant name: %w", err)
	}
	return nil
}

// checkGroupName is the rule shared by EAB labels and tenant names: 1 to
// maxTenantName letters, digits, '.', '_' or '-'.
func checkGroupName(name string) error {
	if name == "" || len(name) > maxTenantName {
		return fmt.Errorf("it must have 1 to %d characters, got %d", maxTenantName, len(name))
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("%q may only hold letters, digits, '.', '_' and '-'", name)
		}
	}
	return nil
}

// Validate reports every malformed field of t at once, each naming the
// field and the entry, and returns t with its patterns canonical (lower
// case, no trailing dot) and its lists sorted and deduplicated.
func (t Tenant) Validate(offered []ChallengeType) (Tenant, error) {
	var errs []error
	if err := CheckTenantName(t.Name); err != nil {
		errs = append(errs, err)
	}
	canon := func(field string, list []string) []string {
		out := make([]string, 0, len(list))
		for i, pat := range list {
			c, err := canonicalPattern(pat)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s[%d]: %w", field, i, err))
				continue
			}
			out = append(out, c)
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	t.AllowedNames = canon("allowed-names", t.AllowedNames)
	t.DeniedNames = canon("denied-names", t.DeniedNames)
	t.DelegatedZones = canon("delegated-zones", t.DelegatedZones)
	errs = append(errs, t.checkDelegatedZones()...)
	ranges := make([]string, 0, len(t.AllowedIPRanges))
	for i, r := range t.AllowedIPRanges {
		p, err := ParseIPRange(r)
		if err != nil {
			errs = append(errs, fmt.Errorf("allowed-ip-ranges[%d]: %w", i, err))
			continue
		}
		ranges = append(ranges, p.String())
	}
	slices.Sort(ranges)
	t.AllowedIPRanges = slices.Compact(ranges)
	for i, p := range t.Profiles {
		if checkGroupName(p) != nil {
			errs = append(errs, fmt.Errorf("profiles[%d]: %q is not a profile name", i, p))
		}
	}
	slices.Sort(t.Profiles)
	t.Profiles = slices.Compact(t.Profiles)
	for i, ct := range t.ChallengeTypes {
		if !slices.Contains(offered, ct) {
			errs = append(errs, fmt.Errorf("challenge-types[%d]: %q is not a challenge type this server offers (%s)", i, ct, joinChallengeTypes(offered)))
		}
	}
	slices.Sort(t.ChallengeTypes)
	t.ChallengeTypes = slices.Compact(t.ChallengeTypes)
	if t.MaxLifetime < 0 {
		errs = append(errs, fmt.Errorf("max-lifetime: %s must not be negative", t.MaxLifetime))
	}
	return t, errors.Join(errs...)
}

func joinChallengeTypes(ts []ChallengeType) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

// canonicalPattern checks a name pattern and returns it canonical.
func canonicalPattern(pat string) (string, error) {
	if strings.HasPrefix(pat, "*") {
		return "", fmt.Errorf("%q: write a zone as \".example.com\", not with '*' (wildcard identifiers are allowed by \"wildcards\")", pat)
	}
	zone := strings.HasPrefix(pat, ".")
	name, err := canonicalDNSName(strings.TrimPrefix(pat, "."))
	if err != nil || name == "" {
		return "", fmt.Errorf("%q is not a domain name or a \".zone\"", pat)
	}
	if zone {
		return "." + name, nil
	}
	return name, nil
}

// patternHolds reports whether pattern pat holds the name.
func patternHolds(pat, name string) bool {
	if zone, ok := strings.CutPrefix(pat, "."); ok {
		return underDomain(name, zone)
	}
	return name == pat
}

// check returns a rejectedIdentifier problem, naming the tenant and the
// rule, when tenant t does not admit the canonical identifier id, and the
// rule's key (TenantRule…).
func (t *Tenant) check(id Identifier) (*Problem, string) {
	refuse := func(rule, format string, a ...any) (*Problem, string) {
		return NewProblem(ProbRejectedIdentifier, "tenant %q forbids %q: "+format, append([]any{t.Name, id.Value}, a...)...).WithIdentifier(id), rule
	}
	switch id.Type {
	case IdentifierIP:
		addr, err := netip.ParseAddr(id.Value)
		if err != nil {
			return Malformed("invalid IP identifier %q", id.Value).WithIdentifier(id), ""
		}
		for _, r := range t.AllowedIPRanges {
			if p, err := netip.ParsePrefix(r); err == nil && p.Contains(addr) {
				return nil, ""
			}
		}
		return refuse(TenantRuleIPRanges, "it is in none of the tenant's allowed-ip-ranges")
	case IdentifierDNS:
		base, wildcard := id.SplitWildcard()
		name := base.Value
		for _, d := range t.DeniedNames {
			if patternHolds(d, name) {
				return refuse(TenantRuleDenied, "denied-names has %q", d)
			}
			if parent, ok := strings.CutSuffix(strings.TrimPrefix(d, "."), "."+name); wildcard && ok && !strings.Contains(parent, ".") {
				return refuse(TenantRuleDenied, "the wildcard covers %q of denied-names", d)
			}
		}
		if wildcard && !t.Wildcards {
			return refuse(TenantRuleWildcards, "the tenant does not permit wildcards")
		}
		for _, a := range t.AllowedNames {
			if wildcard && !strings.HasPrefix(a, ".") {
				continue // an exact name never admits a wildcard
			}
			if patternHolds(a, name) {
				return nil, ""
			}
		}
		return refuse(TenantRuleAllowed, "it matches none of the tenant's allowed-names")
	}
	return NewProblem(ProbUnsupportedIdentifier, "identifier type %q is not supported", id.Type).WithIdentifier(id), ""
}

// checkProfile refuses a profile the tenant may not use.
func (t *Tenant) checkProfile(p *Profile) *Problem {
	if t == nil || len(t.Profiles) == 0 || slices.Contains(t.Profiles, p.name()) {
		return nil
	}
	return NewProblem(ProbInvalidProfile, "tenant %q may not use profile %q; its profiles are %s", t.Name, p.name(), strings.Join(t.Profiles, ", "))
}

// allowsChallenge reports whether the tenant's authorizations may offer
// challenge type ct (nil: the default tenant allows every type).
func (t *Tenant) allowsChallenge(ct ChallengeType) bool {
	return t == nil || len(t.ChallengeTypes) == 0 || slices.Contains(t.ChallengeTypes, ct)
}

// lifetimeCap is the tenant's maximum certificate lifetime, 0 for none.
func (t *Tenant) lifetimeCap() time.Duration {
	if t == nil {
		return 0
	}
	return t.MaxLifetime
}
