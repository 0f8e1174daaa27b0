// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"golang.org/x/net/idna"
)

// maxDNSNameLength is the longest presentation-form name (RFC 1035 §2.3.4).
const maxDNSNameLength = 253

// canonicalIdentifier validates an identifier from a client and returns its
// canonical form: DNS names lowercased without a trailing dot, IP addresses
// in their shortest form (IPv4-mapped IPv6 unmapped). A wildcard keeps its
// "*." prefix. The problem is malformed for bad syntax and
// unsupportedIdentifier for an unknown type.
func canonicalIdentifier(id Identifier) (Identifier, *Problem) {
	switch id.Type {
	case IdentifierDNS:
		name, err := canonicalDNSName(id.Value)
		var idnaErr *idnaError
		switch {
		case errors.As(err, &idnaErr):
			return id, NewProblem(ProbRejectedIdentifier, "DNS identifier %q is refused: %v", id.Value, err).WithIdentifier(id)
		case err != nil:
			return id, Malformed("invalid DNS identifier %q: %v", id.Value, err).WithIdentifier(id)
		}
		return Identifier{Type: IdentifierDNS, Value: name}, nil
	case IdentifierIP:
		addr, err := netip.ParseAddr(id.Value)
		if err != nil || addr.Zone() != "" {
			return id, Malformed("invalid IP identifier %q: not an IP address (RFC 8738 §3)", id.Value).WithIdentifier(id)
		}
		return Identifier{Type: IdentifierIP, Value: addr.Unmap().String()}, nil
	case "":
		return id, Malformed("identifier %q has no type", id.Value)
	default:
		return id, NewProblem(ProbUnsupportedIdentifier, "identifier type %q is not supported (use \"dns\" or \"ip\")", id.Type).WithIdentifier(id)
	}
}

// canonicalDNSName checks LDH syntax (RFC 1123 §2.1, RFC 5890 for the A-label
// form) and an optional leading "*." wildcard label (RFC 8555 §7.1.3). A
// label with hyphens in its third and fourth positions must be a valid
// A-label (checkALabels); the error is then an *idnaError.
func canonicalDNSName(v string) (string, error) {
	// Check for non-ASCII before lowercasing: strings.ToLower maps some
	// non-ASCII runes to ASCII (U+212A KELVIN SIGN to "k"), which would
	// accept a name that is not LDH.
	for i := 0; i < len(v); i++ {
		if v[i] >= 0x80 {
			return "", fmt.Errorf("name contains a non-ASCII byte at offset %d; use the A-label (xn--) form", i)
		}
	}
	name := strings.ToLower(strings.TrimSuffix(v, "."))
	if name == "" {
		return "", fmt.Errorf("empty name")
	}
	if len(name) > maxDNSNameLength {
		return "", fmt.Errorf("name is %d bytes long; at most %d allowed", len(name), maxDNSNameLength)
	}
	b, wildcard := Identifier{Type: IdentifierDNS, Value: name}.SplitWildcard()
	base := b.Value
	if wildcard && !strings.Contains(base, ".") {
		return "", fmt.Errorf("wildcard must cover a name with at least two labels")
	}
	if _, err := netip.ParseAddr(base); err == nil {
		return "", fmt.Errorf("an IP address must use an identifier of type \"ip\"")
	}
	labels := strings.Split(base, ".")
	for _, l := range labels {
		if err := checkLabel(l); err != nil {
			return "", err
		}
	}
	if isAllDigits(labels[len(labels)-1]) {
		return "", fmt.Errorf("top-level label %q is all numeric", labels[len(labels)-1])
	}
	if err := checkALabels(base, labels); err != nil {
		return "", err
	}
	return name, nil
}

// idnaError is a name that is LDH but not valid IDNA: a reserved or
// invalid A-label. Such a name is well-formed but no resolver that
// implements IDNA would look it up, so it is refused (rejectedIdentifier)
// rather than malformed.
type idnaError struct{ msg string }

func (e *idnaError) Error() string { return e.msg }

// checkALabels checks the reserved LDH labels of name (RFC 5890 §2.3.1:
// hyphens in the third and fourth positions). The only defined prefix is
// "xn--", and such a label must be an A-label: its Punycode decodes to a
// U-label valid under golang.org/x/net/idna's lookup profile (IDNA2008 as
// UTS #46 applies it: no disallowed or mapped code points, NFC, the
// context and hyphen rules) that encodes back to the very same label
// (RFC 5891 §5.4). With an A-label present, the bidi rule (RFC 5893)
// is then checked across all of name's labels, as a resolver does.
func checkALabels(name string, labels []string) error {
	seen := false
	for _, l := range labels {
		if len(l) < 4 || l[2:4] != "--" {
			continue
		}
		if !strings.HasPrefix(l, "xn--") {
			return &idnaError{fmt.Sprintf("label %q has hyphens in the third and fourth positions but is not an A-label (RFC 5890 §2.3.1)", l)}
		}
		u, err := idna.Lookup.ToUnicode(l)
		if err != nil {
			return &idnaError{fmt.Sprintf("label %q is not a valid A-label: %v", l, err)}
		}
		if back, err := idna.Lookup.ToASCII(u); err != nil || back != l {
			return &idnaError{fmt.Sprintf("label %q is not a valid A-label: it decodes to %q, whose A-label is %q", l, u, back)}
		}
		seen = true
	}
	if !seen {
		return nil
	}
	if _, err := idna.Lookup.ToUnicode(name); err != nil {
		return &idnaError{fmt.Sprintf("name %q is not valid IDNA: %v (RFC 5893: the bidi rule holds for every label of a name with a right-to-left label)", name, err)}
	}
	return nil
}

func checkLabel(l string) error {
	switch {
	case l == "":
		return fmt.Errorf("empty label")
	case len(l) > 63:
		return fmt.Errorf("label %q is longer than 63 bytes", l)
	case l == "*":
		return fmt.Errorf("a wildcard is allowed only as the whole leftmost label")
	case l[0] == '-' || l[len(l)-1] == '-':
		return fmt.Errorf("label %q starts or ends with a hyphen", l)
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return fmt.Errorf("label %q contains the character %q; only letters, digits and hyphens are allowed", l, c)
		}
	}
	return nil
}

func isAllDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// canonicalIdentifiers canonicalises, de-duplicates and sorts a list of
// identifiers, collecting one subproblem per bad identifier.
func canonicalIdentifiers(ids []Identifier) ([]Identifier, *Problem) {
	var probs []*Problem
	seen := make(map[Identifier]bool, len(ids))
	out := make([]Identifier, 0, len(ids))
	for _, id := range ids {
		c, p := canonicalIdentifier(id)
		if p != nil {
			probs = append(probs, p)
			continue
		}
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	if p := combine(ProbMalformed, "some identifiers are invalid", probs); p != nil {
		return nil, p
	}
	sortIdentifiers(out)
	return out, nil
}

// sortIdentifiers orders identifiers by type, then value.
func sortIdentifiers(ids []Identifier) {
	sort.Slice(ids, func(i, j int) bool {
		if ids[i].Type != ids[j].Type {
			return ids[i].Type < ids[j].Type
		}
		return ids[i].Value < ids[j].Value
	})
}

// SplitWildcard returns the identifier a "*." DNS name's authorization is
// for, its base name, and whether it was a wildcard (RFC 8555 §7.1.3);
// any other identifier is its own base. Authorization.Name is the
// inverse.
func (id Identifier) SplitWildcard() (base Identifier, wildcard bool) {
	if v, ok := strings.CutPrefix(id.Value, "*."); ok && id.Type == IdentifierDNS {
		return Identifier{Type: IdentifierDNS, Value: v}, true
	}
	return id, false
}

// IdentifierValues returns the values of ids, in order: the "FQDN set".
func IdentifierValues(ids []Identifier) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.Value
	}
	return out
}
