// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// The admin listener answers only for its own names. A browser that a
// hostile page has pointed at the listener through DNS rebinding sends the
// attacker's name in Host (the page's origin is that name), so refusing
// every Host that is not one of ours keeps such a page from reading the
// API with the browser's network position (RFC 9110 §7.2 makes the origin
// server responsible for checking that Host names it; §15.5.20 gives 421
// for a request that reached a server that will not answer for it). The
// port is not compared: a port forward or a proxy changes it, and a name
// the attacker does not control cannot be rebound whatever its port.

// hostPolicy holds the names and addresses the listener answers for.
type hostPolicy struct {
	names map[string]bool
	addrs map[netip.Addr]bool
}

// newHostPolicy reads hosts, each as CanonicalHost accepts it.
func newHostPolicy(hosts []string) (hostPolicy, error) {
	p := hostPolicy{names: map[string]bool{}, addrs: map[netip.Addr]bool{}}
	for i, h := range hosts {
		c, err := CanonicalHost(h)
		if err != nil {
			return hostPolicy{}, fmt.Errorf("admin: Hosts[%d]: %w", i, err)
		}
		if a, err := netip.ParseAddr(c); err == nil {
			p.addrs[a] = true
		} else {
			p.names[c] = true
		}
	}
	return p, nil
}

// allows reports whether r's Host is one of the listener's names. An IP
// address equal to the one the connection arrived at is always ours: it is
// how a client that dialled the listener directly (a pod IP, say) names
// it, and no page but the listener's own has that origin.
func (p hostPolicy) allows(r *http.Request) bool {
	host := requestHost(r.Host)
	if host == "" {
		return false
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return p.names[host]
	}
	a = a.Unmap()
	if a.Zone() != "" {
		return false
	}
	if p.addrs[a] {
		return true
	}
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	ap, err := netip.ParseAddrPort(local.String())
	return err == nil && ap.Addr().Unmap().WithZone("") == a
}

// requestHost is the host of a Host header value without its port,
// brackets and trailing dot, in lower case; "" when it is malformed.
func requestHost(hostport string) string {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	} else if strings.Contains(host, ":") {
		return "" // an IPv6 address in Host must be bracketed (RFC 3986 §3.2.2)
	}
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// CanonicalHost checks one host name the admin listener answers for and
// returns it in the form it is compared in: a DNS name (ASCII; an
// internationalised name as its A-labels, xn--…) in lower case without a
// trailing dot, or an IP address (an IPv6 one with or without brackets)
// in its standard form. A port, a scheme, a wildcard or an IPv6 zone is
// refused.
func CanonicalHost(h string) (string, error) {
	s := strings.TrimSpace(h)
	if s == "" {
		return "", errors.New("empty host name")
	}
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		s = s[1 : len(s)-1]
	}
	if a, err := netip.ParseAddr(s); err == nil {
		if a.Zone() != "" {
			return "", fmt.Errorf("%q: an IPv6 zone is not a host name", h)
		}
		return a.Unmap().String(), nil
	}
	s = strings.TrimSuffix(strings.ToLower(s), ".")
	if len(s) > 253 {
		return "", fmt.Errorf("%q: longer than 253 characters", h)
	}
	labels := strings.Split(s, ".")
	for _, label := range labels {
		if err := checkLabel(label); err != nil {
			return "", fmt.Errorf("%q is not a host name (a DNS name or an IP address, without scheme or port): %w", h, err)
		}
	}
	// A browser reads a name that ends in a number as an IPv4 address
	// (127.1 is 127.0.0.1; WHATWG URL, "ends in a number"), so it never
	// sends it as a name.
	if strings.Trim(labels[len(labels)-1], "0123456789") == "" {
		return "", fmt.Errorf("%q: a name whose last label is a number is read as an IP address; write the address", h)
	}
	return s, nil
}

// checkLabel checks one DNS label: letters, digits and inner hyphens, 1 to
// 63 of them (RFC 1123 §2.1).
func checkLabel(l string) error {
	if l == "" || len(l) > 63 {
		return fmt.Errorf("label %q is empty or longer than 63 characters", l)
	}
	if l[0] == '-' || l[len(l)-1] == '-' {
		return fmt.Errorf("label %q starts or ends with a hyphen", l)
	}
	for _, c := range []byte(l) {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return fmt.Errorf("label %q has the character %q", l, c)
		}
	}
	return nil
}
