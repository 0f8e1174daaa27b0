// SPDX-License-Identifier: Apache-2.0

package challenge

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"

	"github.com/weir-pki/weir/acme"
)

// The egress policy says which addresses the validator may connect to.
// A validation is a connection that an account asks weir to make, to an
// address that the account's DNS names (or that a redirect it serves
// names): without a policy, weir fetches whatever an account points it at,
// such as the cloud metadata service at 169.254.169.254, from inside the
// network it sits in.
//
// The policy is checked in one place, the dialer every validation
// connection goes through (guardedDial): on the address actually dialed,
// after resolution, so a name that resolves to one address at lookup and
// another later (DNS rebinding) cannot pass. The answers of the address
// lookups are filtered by the same rules first (resolve), so that a name
// with one allowed address among denied ones still validates, and so that
// a refusal says what was refused.
//
// The rules are CIDR ranges. An address takes the decision of the most
// specific range that covers it (the longest prefix); between ranges of
// the same length, denied beats allowed and the configured ranges beat the
// built-in ones. An address no range covers is allowed, unless
// EgressConfig.Default is "deny". Independently of every range, weir's own
// listeners (the admin listener) are never dialed.

// builtinDenied are the ranges denied unless a configured range says
// otherwise: addresses that no validation target legitimately has, and the
// cloud providers' metadata and host services. Private ranges (RFC 1918,
// RFC 4193) and loopback stay allowed: weir is an internal CA, and its
// first-run certbot command validates localhost.
var builtinDenied = []struct {
	prefix string
	why    string
}{
	{"0.0.0.0/8", "\"this network\" (RFC 791); 0.0.0.0 reaches the host itself"},
	{"169.254.0.0/16", "link-local (RFC 3927), where cloud metadata services answer (169.254.169.254, 169.254.170.2)"},
	{"100.100.100.200/32", "the Alibaba Cloud metadata service"},
	{"168.63.129.16/32", "the Azure host service (WireServer)"},
	{"192.0.0.192/32", "the Oracle Cloud metadata service"},
	{"224.0.0.0/4", "multicast"},
	{"240.0.0.0/4", "reserved, with the limited broadcast address 255.255.255.255"},
	{"::/128", "the unspecified address"},
	{"fe80::/10", "IPv6 link-local"},
	{"fd00:ec2::254/128", "the AWS instance metadata service over IPv6"},
	{"ff00::/8", "IPv6 multicast"},
}

// BuiltinDeniedRanges returns the ranges the egress policy denies by
// default, each with what it is.
func BuiltinDeniedRanges() map[netip.Prefix]string {
	out := make(map[netip.Prefix]string, len(builtinDenied))
	for _, b := range builtinDenied {
		out[netip.MustParsePrefix(b.prefix)] = b.why
	}
	return out
}

// nat64Prefixes embed an IPv4 address in their last 32 bits (RFC 6052
// §2.2, the /96 format): through a NAT64 gateway, 64:ff9b::a9fe:a9fe is
// 169.254.169.254, so the embedded address is checked too.
var nat64Prefixes = []netip.Prefix{
	netip.MustParsePrefix("64:ff9b::/96"),   // the well-known prefix (RFC 6052)
	netip.MustParsePrefix("64:ff9b:1::/48"), // local use (RFC 8215)
}

// EgressConfig is the egress policy as configured (the challenges.egress
// block). The zero value is the built-in policy: everything allowed but
// the built-in denied ranges.
type EgressConfig struct {
	// Default decides the addresses that no range covers: "allow" (the
	// default; "" means the same) or "deny".
	Default string `yaml:"default"`
	// AllowedCIDRs and DeniedCIDRs are the configured ranges: CIDRs, or
	// single addresses.
	AllowedCIDRs []string `yaml:"allowed-cidrs"`
	DeniedCIDRs  []string `yaml:"denied-cidrs"`
}

// Validate reports every problem of c, each with its key.
func (c EgressConfig) Validate() error {
	var errs []error
	if c.Default != "" && c.Default != "allow" && c.Default != "deny" {
		errs = append(errs, fmt.Errorf("challenges.egress.default: %q must be allow or deny", c.Default))
	}
	for _, l := range []struct {
		key  string
		list []string
	}{{"allowed-cidrs", c.AllowedCIDRs}, {"denied-cidrs", c.DeniedCIDRs}} {
		for i, s := range l.list {
			if _, err := acme.ParseIPRange(s); err != nil {
				errs = append(errs, fmt.Errorf("challenges.egress.%s[%d]: %v", l.key, i, err))
			}
		}
	}
	return errors.Join(errs...)
}

// Rule precedence between ranges of the same length.
const (
	rankBuiltin = iota
	rankAllowed
	rankDenied
)

// egressRule is one range of the policy.
type egressRule struct {
	prefix netip.Prefix
	allow  bool
	rank   int
	why    string // for a built-in range, what it is
}

// Egress is a compiled egress policy. It is immutable and safe for
// concurrent use.
type Egress struct {
	// rules, most specific first, so the first that matches decides.
	rules       []egressRule
	defaultDeny bool
	own         []netip.AddrPort
	// localAddrs lists this host's addresses, for Own entries on an
	// unspecified address; nil means net.InterfaceAddrs.
	localAddrs func() ([]netip.Addr, error)
}

// NewEgress compiles cfg, or returns the errors of cfg.Validate. own are
// weir's own listeners (the admin listener), never dialed whatever the
// ranges say; an unspecified address (0.0.0.0 or ::) stands for every
// address of this host on that port.
func NewEgress(cfg EgressConfig, own ...netip.AddrPort) (*Egress, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	e := &Egress{defaultDeny: cfg.Default == "deny"}
	for _, b := range builtinDenied {
		e.rules = append(e.rules, egressRule{prefix: netip.MustParsePrefix(b.prefix), rank: rankBuiltin, why: b.why})
	}
	for _, s := range cfg.AllowedCIDRs {
		p, _ := acme.ParseIPRange(s)
		e.rules = append(e.rules, egressRule{prefix: p, allow: true, rank: rankAllowed})
	}
	for _, s := range cfg.DeniedCIDRs {
		p, _ := acme.ParseIPRange(s)
		e.rules = append(e.rules, egressRule{prefix: p, rank: rankDenied})
	}
	slices.SortStableFunc(e.rules, func(a, b egressRule) int {
		if a.prefix.Bits() != b.prefix.Bits() {
			return b.prefix.Bits() - a.prefix.Bits()
		}
		return b.rank - a.rank
	})
	for _, ap := range own {
		e.own = append(e.own, netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()))
	}
	return e, nil
}

// EgressError is a connection the egress policy refuses.
type EgressError struct {
	// Addr is the address refused, and Port its port (0 when the
	// address was refused as a lookup answer, before any port).
	Addr netip.Addr
	Port uint16
	// Reason says which rule refused it.
	Reason string
}

// Error implements error.
func (e *EgressError) Error() string {
	target := e.Addr.String()
	if e.Port != 0 {
		target = netip.AddrPortFrom(e.Addr, e.Port).String()
	}
	return fmt.Sprintf("weir's validation egress policy does not allow connecting to %s: %s", target, e.Reason)
}

// CheckAddr reports whether the ranges allow a connection to a: nil, or
// an *EgressError saying which rule refuses it. Own listeners are not
// considered (they depend on the port; see CheckDial).
func (e *Egress) CheckAddr(a netip.Addr) error {
	a = a.Unmap()
	if reason, ok := e.decide(a); !ok {
		return &EgressError{Addr: a, Reason: reason}
	}
	for _, p := range nat64Prefixes {
		if !p.Contains(a) {
			continue
		}
		b := a.As16()
		v4 := netip.AddrFrom4([4]byte(b[12:]))
		if reason, ok := e.decide(v4); !ok {
			return &EgressError{Addr: a, Reason: fmt.Sprintf("it embeds %s (NAT64, RFC 6052): %s", v4, reason)}
		}
	}
	return nil
}

// decide applies the ranges to a, which is unmapped: whether it is
// allowed, and if not, why.
func (e *Egress) decide(a netip.Addr) (string, bool) {
	if !a.IsValid() {
		return "not an IP address", false
	}
	for _, r := range e.rules {
		if !r.prefix.Contains(a) {
			continue
		}
		switch {
		case r.allow:
			return "", true
		case r.rank == rankBuiltin:
			return fmt.Sprintf("%s is %s", r.prefix, r.why), false
		default:
			return fmt.Sprintf("%s is a denied range", r.prefix), false
		}
	}
	if e.defaultDeny {
		return "it is in no allowed range", false
	}
	return "", true
}

// CheckDial reports whether the policy allows connecting to ap: the
// ranges (CheckAddr), and never to one of weir's own listeners.
func (e *Egress) CheckDial(ap netip.AddrPort) error {
	a := ap.Addr().Unmap()
	if err := e.CheckAddr(a); err != nil {
		var ee *EgressError
		if errors.As(err, &ee) {
			ee.Port = ap.Port()
		}
		return err
	}
	for _, own := range e.own {
		if own.Port() != ap.Port() {
			continue
		}
		if own.Addr() == a || own.Addr().IsUnspecified() && e.isLocal(a) {
			return &EgressError{Addr: a, Port: ap.Port(), Reason: "it is one of weir's own listeners"}
		}
	}
	return nil
}

// isLocal reports whether a is an address of this host: loopback, or an
// address of one of its interfaces. When the interfaces cannot be read,
// every address is taken as local, so the listener stays protected.
func (e *Egress) isLocal(a netip.Addr) bool {
	if a.IsLoopback() || a.IsUnspecified() {
		return true
	}
	list := e.localAddrs
	if list == nil {
		list = interfaceAddrs
	}
	addrs, err := list()
	if err != nil {
		return true
	}
	return slices.Contains(addrs, a)
}

// interfaceAddrs returns the addresses of this host's interfaces.
func interfaceAddrs() ([]netip.Addr, error) {
	ifas, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	out := make([]netip.Addr, 0, len(ifas))
	for _, ifa := range ifas {
		if p, err := netip.ParsePrefix(ifa.String()); err == nil {
			out = append(out, p.Addr().Unmap())
		}
	}
	return out, nil
}

// guardedDial returns dial behind the policy of e: it dials only an IP
// address and port that CheckDial allows, and refuses anything else
// without calling dial. Every validation connection goes through it.
func guardedDial(e *Egress, dial DialFunc) DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		ap, err := netip.ParseAddrPort(addr)
		if err != nil {
			// A host name would be resolved again by the dialer, after
			// the check: only resolved addresses are dialed.
			return nil, fmt.Errorf("challenge: egress: %q is not an IP address and port", addr)
		}
		if ap.Addr().Zone() != "" {
			return nil, fmt.Errorf("challenge: egress: %q has an IPv6 zone", addr)
		}
		if err := e.CheckDial(ap); err != nil {
			return nil, err
		}
		return dial(ctx, network, addr)
	}
}
