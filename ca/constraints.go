// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"crypto/x509"
	"fmt"
	"net"
	"strings"
)

// NameConstraints are the RFC 5280 name constraints (§4.2.1.10) a
// generated root and intermediate carry: relying parties that enforce them
// (Go, OpenSSL, NSS, browsers and the major TLS stacks) refuse any
// certificate under the hierarchy for a name outside PermittedDNS and
// PermittedIPs, or inside ExcludedDNS, whoever signed it, so a lost CA key
// cannot be used to impersonate names outside them. A DNS entry covers
// the name and every name under it; a leading dot ("." + domain) covers
// only the names under it. The zero value constrains nothing.
type NameConstraints struct {
	PermittedDNS []string
	ExcludedDNS  []string
	PermittedIPs []*net.IPNet
}

// empty reports whether nc constrains nothing.
func (nc NameConstraints) empty() bool {
	return len(nc.PermittedDNS) == 0 && len(nc.ExcludedDNS) == 0 && len(nc.PermittedIPs) == 0
}

// apply puts nc on the CA template t, marked critical (RFC 5280 asks for
// it). Permitted DNS subtrees without permitted IP ranges exclude every IP
// address, and the other way round: otherwise a constraint on one name
// form would leave the other unconstrained.
func (nc NameConstraints) apply(t *x509.Certificate) {
	if nc.empty() {
		return
	}
	t.PermittedDNSDomainsCritical = true
	t.PermittedDNSDomains = append([]string(nil), nc.PermittedDNS...)
	t.ExcludedDNSDomains = append([]string(nil), nc.ExcludedDNS...)
	t.PermittedIPRanges = append([]*net.IPNet(nil), nc.PermittedIPs...)
	if len(nc.PermittedIPs) == 0 {
		t.ExcludedIPRanges = []*net.IPNet{
			{IP: net.IPv4zero.To4(), Mask: net.CIDRMask(0, 32)},
			{IP: net.IPv6zero, Mask: net.CIDRMask(0, 128)},
		}
	}
	if len(nc.PermittedDNS) == 0 && len(nc.PermittedIPs) > 0 {
		// No DNS name is permitted: a permitted subtree that matches none.
		t.PermittedDNSDomains = []string{".invalid"}
	}
}

// Validate reports a malformed entry.
func (nc NameConstraints) Validate() error {
	for _, list := range [][]string{nc.PermittedDNS, nc.ExcludedDNS} {
		for _, d := range list {
			name := strings.TrimPrefix(d, ".")
			if name == "" || strings.ContainsAny(name, "* ") || name != strings.ToLower(name) {
				return fmt.Errorf("ca: name constraint %q is not a lower-case domain name", d)
			}
		}
	}
	for _, n := range nc.PermittedIPs {
		if n == nil || n.IP == nil || n.Mask == nil {
			return fmt.Errorf("ca: name constraint IP range %v is incomplete", n)
		}
	}
	return nil
}

// PermitsDNS reports whether every CA certificate of h that carries name
// constraints permits the DNS name (canonical, lower case, no trailing
// dot). A wildcard "*.d" must have d's subtree permitted and no excluded
// subtree among the names it covers.
func (h *Hierarchy) PermitsDNS(name string) bool {
	for _, c := range h.caCerts() {
		if !permitsDNS(c, name) {
			return false
		}
	}
	return true
}

// PermitsIP reports whether every CA certificate of h that carries name
// constraints permits the address.
func (h *Hierarchy) PermitsIP(ip net.IP) bool {
	for _, c := range h.caCerts() {
		if !permitsIP(c, ip) {
			return false
		}
	}
	return true
}

// Constrained reports whether a CA certificate of h carries name
// constraints.
func (h *Hierarchy) Constrained() bool {
	for _, c := range h.caCerts() {
		if hasNameConstraints(c) {
			return true
		}
	}
	return false
}

func (h *Hierarchy) caCerts() []*x509.Certificate {
	var cs []*x509.Certificate
	for _, c := range []*x509.Certificate{h.Intermediate, h.Root} {
		if c != nil {
			cs = append(cs, c)
		}
	}
	return cs
}

func hasNameConstraints(c *x509.Certificate) bool {
	return len(c.PermittedDNSDomains) > 0 || len(c.ExcludedDNSDomains) > 0 ||
		len(c.PermittedIPRanges) > 0 || len(c.ExcludedIPRanges) > 0 ||
		len(c.PermittedEmailAddresses) > 0 || len(c.ExcludedEmailAddresses) > 0 ||
		len(c.PermittedURIDomains) > 0 || len(c.ExcludedURIDomains) > 0
}

// inSubtree reports whether name lies in the DNS subtree constraint c:
// "d" covers d and the names under it, ".d" only the names under it.
func inSubtree(name, c string) bool {
	c = strings.ToLower(c)
	if sub, ok := strings.CutPrefix(c, "."); ok {
		return strings.HasSuffix(name, "."+sub)
	}
	return name == c || strings.HasSuffix(name, "."+c)
}

func permitsDNS(c *x509.Certificate, name string) bool {
	base, wildcard := strings.CutPrefix(name, "*.")
	// The names a wildcard covers are one label under base: they are in a
	// subtree when base's children are.
	probe := name
	if wildcard {
		probe = "x." + base
	}
	for _, e := range c.ExcludedDNSDomains {
		if inSubtree(probe, e) {
			return false
		}
		// An excluded subtree under the wildcard's base, such as
		// "a.base" for "*.base", holds names the wildcard covers.
		if wildcard && inSubtree(strings.TrimPrefix(strings.ToLower(e), "."), "."+base) {
			return false
		}
	}
	if len(c.PermittedDNSDomains) == 0 {
		return true
	}
	for _, p := range c.PermittedDNSDomains {
		if inSubtree(probe, p) {
			return true
		}
	}
	return false
}

func permitsIP(c *x509.Certificate, ip net.IP) bool {
	for _, n := range c.ExcludedIPRanges {
		if n.Contains(ip) {
			return false
		}
	}
	if len(c.PermittedIPRanges) == 0 {
		return true
	}
	for _, n := range c.PermittedIPRanges {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}
