// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// PolicyConfig is the CA's naming policy, the ca.policy block of the
// configuration.
type PolicyConfig struct {
	// AllowedDomains, when not empty, limits DNS identifiers to these names
	// and their subdomains.
	AllowedDomains []string `yaml:"allowed-domains"`
	// DeniedDomains refuses these names and their subdomains; it wins over
	// AllowedDomains.
	DeniedDomains []string `yaml:"denied-domains"`
	// AllowedIPRanges lists the CIDRs IP identifiers may come from. Empty
	// means IP identifiers are refused.
	AllowedIPRanges []string `yaml:"allowed-ip-ranges"`
}

// Validate reports every malformed entry at once.
func (c PolicyConfig) Validate() error {
	var errs []error
	lists := []struct {
		key  string
		list []string
	}{{"allowed-domains", c.AllowedDomains}, {"denied-domains", c.DeniedDomains}}
	for _, l := range lists {
		key := l.key
		for i, d := range l.list {
			if _, err := canonicalDNSName(strings.TrimPrefix(d, ".")); err != nil || strings.HasPrefix(d, "*") {
				errs = append(errs, fmt.Errorf("ca.policy.%s[%d]: %q is not a domain name", key, i, d))
			}
		}
	}
	for i, r := range c.AllowedIPRanges {
		if _, err := ParseIPRange(r); err != nil {
			errs = append(errs, fmt.Errorf("ca.policy.allowed-ip-ranges[%d]: %v", i, err))
		}
	}
	return errors.Join(errs...)
}

// ParseIPRange parses an IP range as configured: a CIDR, or a single
// address (a /32 or /128), unmapped and masked.
func ParseIPRange(s string) (netip.Prefix, error) {
	if p, err := netip.ParsePrefix(s); err == nil {
		// IP identifiers are compared unmapped, so unmap a 4in6 range too.
		if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not an IP address or CIDR", s)
	}
	return netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()), nil
}

// Policy decides which canonical identifiers the CA will issue for.
type Policy struct {
	allowed, denied []string
	ipRanges        []netip.Prefix
}

// NewPolicy compiles a validated PolicyConfig.
func NewPolicy(c PolicyConfig) (*Policy, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	p := &Policy{}
	norm := func(list []string) []string {
		out := make([]string, len(list))
		for i, d := range list {
			out[i] = strings.ToLower(strings.Trim(d, "."))
		}
		return out
	}
	p.allowed, p.denied = norm(c.AllowedDomains), norm(c.DeniedDomains)
	for _, r := range c.AllowedIPRanges {
		pfx, _ := ParseIPRange(r)
		p.ipRanges = append(p.ipRanges, pfx)
	}
	return p, nil
}

// underDomain reports whether name is d or a subdomain of d.
func underDomain(name, d string) bool {
	return name == d || strings.HasSuffix(name, "."+d)
}

// check returns a rejectedIdentifier problem when policy forbids id, which
// must be canonical.
func (p *Policy) check(id Identifier) *Problem {
	switch id.Type {
	case IdentifierIP:
		addr, err := netip.ParseAddr(id.Value)
		if err != nil {
			return Malformed("invalid IP identifier %q", id.Value).WithIdentifier(id)
		}
		for _, r := range p.ipRanges {
			if r.Contains(addr) {
				return nil
			}
		}
		if len(p.ipRanges) == 0 {
			return NewProblem(ProbRejectedIdentifier, "policy forbids issuing for IP address %s: no IP ranges are allowed (ca.policy.allowed-ip-ranges)", id.Value).WithIdentifier(id)
		}
		return NewProblem(ProbRejectedIdentifier, "policy forbids issuing for IP address %s: not in ca.policy.allowed-ip-ranges", id.Value).WithIdentifier(id)
	case IdentifierDNS:
		base, wildcard := id.SplitWildcard()
		name := base.Value
		for _, d := range p.denied {
			if underDomain(name, d) {
				return NewProblem(ProbRejectedIdentifier, "policy forbids issuing for %q: it is under the denied domain %q", id.Value, d).WithIdentifier(id)
			}
			// *.name is valid for every one-label child of name, so it
			// covers d when d is such a child (RFC 6125 §6.4.3).
			if parent, ok := strings.CutSuffix(d, "."+name); wildcard && ok && !strings.Contains(parent, ".") {
				return NewProblem(ProbRejectedIdentifier, "policy forbids issuing for %q: the wildcard covers the denied domain %q", id.Value, d).WithIdentifier(id)
			}
		}
		if len(p.allowed) == 0 {
			return nil
		}
		for _, d := range p.allowed {
			if underDomain(name, d) {
				return nil
			}
		}
		return NewProblem(ProbRejectedIdentifier, "policy forbids issuing for %q: it is not under any of ca.policy.allowed-domains", id.Value).WithIdentifier(id)
	}
	return NewProblem(ProbUnsupportedIdentifier, "identifier type %q is not supported", id.Type).WithIdentifier(id)
}

// checkIdentifier is policy.check, then the name constraints of the CA
// (ca.Hierarchy.PermitsDNS, PermitsIP): relying parties would refuse a
// certificate for a name they do not permit.
func (s *Service) checkIdentifier(policy *Policy, id Identifier) *Problem {
	if p := policy.check(id); p != nil {
		return p
	}
	h := s.ca.Hierarchy()
	var ok bool
	switch id.Type {
	case IdentifierDNS:
		ok = h.PermitsDNS(id.Value)
	case IdentifierIP:
		ok = h.PermitsIP(net.ParseIP(id.Value))
	}
	if !ok {
		return NewProblem(ProbRejectedIdentifier, "the CA's name constraints do not permit %q: certificates for it would not verify", id.Value).WithIdentifier(id)
	}
	return nil
}
