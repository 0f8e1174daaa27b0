// SPDX-License-Identifier: Apache-2.0

package challenge

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"

	"golang.org/x/net/dns/dnsmessage"
)

// Address lookups through the configured resolver (Config.Resolver). The
// AAAA and A questions go out together over one UDP socket, as the C
// library's resolvers send them, instead of Go's resolver's one socket and
// one goroutine per question: a validation looks its name up once, and on
// a busy CA the sockets were a large part of the validation's cost. An
// answer that comes back truncated is asked again over TCP, and a CNAME
// chain the resolver left unfinished is followed, as for CAA (caa.go).
//
// The errors are *net.DNSError, as Go's resolver's are, so that resolve
// and dnsProblem treat both alike: IsNotFound for NXDOMAIN or no records
// of the type, IsTimeout when no answer came in time, and the RCODE's name
// (SERVFAIL, REFUSED, ...) in Err for other failures.

// lookupAddrs returns the IPv6 and IPv4 addresses of name (no trailing
// dot) from server, with the error of each lookup.
func lookupAddrs(ctx context.Context, server, name string) (v6, v4 []netip.Addr, err6, err4 error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	var qs [2]*dnsQuery
	for i, t := range []dnsmessage.Type{dnsmessage.TypeAAAA, dnsmessage.TypeA} {
		var err error
		if qs[i], err = newQuery(name, t); err != nil {
			return nil, nil, addrError(name, server, err), addrError(name, server, err)
		}
	}
	if err := exchangeUDP(ctx, server, name, qs[:]...); err != nil {
		for _, q := range qs {
			if q.resp == nil && q.err == nil {
				q.err = err
			}
		}
	}
	for _, q := range qs {
		if q.err == nil && q.resp.Truncated {
			q.resp, q.err = exchangeTCP(ctx, server, q.msg, q.id, name, q.qtype)
		}
	}
	v6, err6 = addrsOf(ctx, server, name, qs[0])
	v4, err4 = addrsOf(ctx, server, name, qs[1])
	return v6, v4, err6, err4
}

// addrsOf returns the addresses in the answer to q, following CNAMEs: those
// the resolver followed in its answer, and, when it left the chain
// unfinished, by asking again for the target.
func addrsOf(ctx context.Context, server, name string, q *dnsQuery) ([]netip.Addr, error) {
	resp, err := q.resp, q.err
	target := name
	for range maxCNAMEHops {
		if err != nil {
			return nil, addrError(target, server, err)
		}
		switch resp.RCode {
		case dnsmessage.RCodeSuccess:
		case dnsmessage.RCodeNameError:
			return nil, &net.DNSError{Err: "no such host", Name: target, Server: server, IsNotFound: true}
		default:
			return nil, &net.DNSError{Err: rcodeName(resp.RCode), Name: target, Server: server}
		}
		final := followCNAMEs(resp.Answers, target)
		addrs := addrAnswers(resp.Answers, final, q.qtype)
		if len(addrs) > 0 {
			return addrs, nil
		}
		if final == target {
			return nil, &net.DNSError{Err: "no " + typeName(q.qtype) + " records", Name: target, Server: server, IsNotFound: true}
		}
		target = final
		resp, err = exchange(ctx, server, target, q.qtype)
	}
	return nil, &net.DNSError{Err: fmt.Sprintf("the CNAME chain from %s is longer than %d", name, maxCNAMEHops), Name: name, Server: server}
}

// addrAnswers returns the addresses of type qtype (A or AAAA) owned by
// owner among answers.
func addrAnswers(answers []dnsmessage.Resource, owner string, qtype dnsmessage.Type) []netip.Addr {
	var out []netip.Addr
	for _, rr := range answers {
		if rr.Header.Type != qtype || !sameName(rr.Header.Name.String(), owner) {
			continue
		}
		switch b := rr.Body.(type) {
		case *dnsmessage.AResource:
			out = append(out, netip.AddrFrom4(b.A))
		case *dnsmessage.AAAAResource:
			out = append(out, netip.AddrFrom16(b.AAAA))
		}
	}
	return out
}

// addrError wraps a failed exchange as a *net.DNSError.
func addrError(name, server string, err error) *net.DNSError {
	var de *net.DNSError
	if errors.As(err, &de) {
		return de
	}
	if isTimeout(err) {
		return &net.DNSError{Err: "timeout", Name: name, Server: server, IsTimeout: true}
	}
	return &net.DNSError{Err: err.Error(), Name: name, Server: server}
}

// typeName names the record types weir asks for.
func typeName(t dnsmessage.Type) string {
	switch t {
	case dnsmessage.TypeA:
		return "A"
	case dnsmessage.TypeAAAA:
		return "AAAA"
	case typeCAA:
		return "CAA"
	}
	return fmt.Sprintf("TYPE%d", int(t))
}
