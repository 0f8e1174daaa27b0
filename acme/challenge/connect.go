// SPDX-License-Identifier: Apache-2.0

package challenge

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/weir-pki/weir/acme"
)

// Where a validation connects: the addresses of a name, kept to those the
// egress policy allows (egress.go), tried in order through its dialer.

// resolve returns the addresses to try for host, IPv6 first, looking up
// AAAA and A through the configured resolver (lookupAddrs), or the
// system's when none is configured, and keeping only the answers the
// egress policy eg allows. An IP literal is returned as is: the dialer
// checks it (guardedDial). A failed lookup, or one whose every answer the
// policy refuses, is a dns problem.
func (v *Validator) resolve(ctx context.Context, eg *Egress, host string) ([]netip.Addr, *acme.Problem) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip.Unmap()}, nil
	}
	var v6, v4 []netip.Addr
	var err6, err4 error
	if v.cfg.Resolver != "" {
		v6, v4, err6, err4 = lookupAddrs(ctx, v.cfg.Resolver, host)
	} else {
		// The system's resolver also answers from /etc/hosts, which Go
		// consults only for names that are not rooted (so "localhost"
		// works as it does for every other program on the host).
		done := make(chan struct{})
		go func() {
			defer close(done)
			v4, err4 = v.resolver.LookupNetIP(ctx, "ip4", host)
		}()
		v6, err6 = v.resolver.LookupNetIP(ctx, "ip6", host)
		<-done
	}

	var addrs []netip.Addr
	var refused []error
	seen := make(map[netip.Addr]bool)
	for _, a := range append(v6, v4...) {
		a = a.Unmap()
		if !a.IsValid() || seen[a] {
			continue
		}
		seen[a] = true
		if err := eg.CheckAddr(a); err != nil {
			refused = append(refused, err)
			continue
		}
		addrs = append(addrs, a)
	}
	if len(addrs) > 0 {
		return addrs, nil
	}
	if len(refused) > 0 {
		p := acme.NewProblem(acme.ProbDNS, "DNS problem: no valid IP addresses found for %s: %s", host, refusedList(refused))
		p.Cause = errors.Join(refused...)
		return nil, p
	}
	if err4 != nil && !isNotFound(err4) {
		return nil, dnsProblem("A", host, err4)
	}
	if err6 != nil && !isNotFound(err6) {
		return nil, dnsProblem("AAAA", host, err6)
	}
	return nil, acme.NewProblem(acme.ProbDNS, "DNS problem: no A/AAAA records for %s (the name does not exist or has no addresses)", host)
}

// maxRefusedInDetail bounds the refused addresses a problem detail names.
const maxRefusedInDetail = 4

// refusedList describes the answers the egress policy refused.
func refusedList(errs []error) string {
	var parts []string
	for i, err := range errs {
		if i == maxRefusedInDetail {
			parts = append(parts, fmt.Sprintf("and %d more", len(errs)-i))
			break
		}
		parts = append(parts, err.Error())
	}
	return strings.Join(parts, "; ")
}

// isNotFound reports whether err is a lookup that found no such name or no
// records of the type asked for.
func isNotFound(err error) bool {
	var de *net.DNSError
	return errors.As(err, &de) && de.IsNotFound
}

// egressDialer returns the egress policy in force and the dial function
// behind it (guardedDial). Every validation connection is made through
// what it returns, so a validation keeps the policy it started with.
func (v *Validator) egressDialer() (*Egress, DialFunc) {
	eg := v.egress.Load()
	return eg, guardedDial(eg, *v.dial.Load())
}

// dialAny connects to port on the first of addrs that accepts, giving each
// attempt an equal share of the remaining time so a later address still
// gets a chance when an earlier one hangs. It returns the last error when
// none accepts.
func dialAny(ctx context.Context, dial DialFunc, addrs []netip.Addr, port int) (net.Conn, error) {
	var lastErr error
	for i, a := range addrs {
		actx, cancel := ctx, context.CancelFunc(func() {})
		if dl, ok := ctx.Deadline(); ok && i < len(addrs)-1 {
			share := time.Until(dl) / time.Duration(len(addrs)-i)
			actx, cancel = context.WithTimeout(ctx, share)
		}
		conn, err := dial(actx, "tcp", netip.AddrPortFrom(a, uint16(port)).String())
		cancel()
		if err == nil {
			return conn, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	if lastErr == nil {
		lastErr = errors.New("no addresses to dial")
	}
	return nil, lastErr
}
