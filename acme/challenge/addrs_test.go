// SPDX-License-Identifier: Apache-2.0

package challenge

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// TestLookupAddrs: the addresses and errors of lookupAddrs against the test
// DNS server, which answers like a recursive resolver.
func TestLookupAddrs(t *testing.T) {
	dns := startDNS(t) // every name: A 127.0.0.1, no AAAA
	v4 := netip.MustParseAddr("127.0.0.2")
	v6 := netip.MustParseAddr("::1")
	dns.SetA("both.test", v4, v6)
	dns.SetA("nx.test")
	dns.SetA("target.test", v6)
	dns.SetCNAME("alias.test", "target.test")
	dns.SetRCode("servfail.test", dnsmessage.TypeA, dnsmessage.RCodeServerFailure)
	dns.SetRCode("refused.test", dnsmessage.TypeAAAA, dnsmessage.RCodeRefused)
	var many []netip.Addr // more than fit in a 1232-byte datagram
	for i := range 120 {
		many = append(many, netip.AddrFrom4([4]byte{10, 0, byte(i / 256), byte(i % 256)}))
	}
	dns.SetA("many.test", many...)

	type result struct {
		addrs    []netip.Addr
		notFound bool
		err      string // the DNSError's Err, when not found or failed
	}
	found := func(a ...netip.Addr) result { return result{addrs: a} }
	notFound := result{notFound: true}
	loopback := netip.MustParseAddr("127.0.0.1")
	for _, tc := range []struct {
		name   string
		v6, v4 result
	}{
		{"default.test", notFound, found(loopback)},
		{"both.test", found(v6), found(v4)},
		{"nx.test", notFound, notFound},
		{"alias.test", found(v6), notFound},
		{"servfail.test", notFound, result{err: "SERVFAIL"}},
		{"refused.test", result{err: "REFUSED"}, found(loopback)},
		{"many.test", notFound, found(many...)}, // truncated over UDP, asked again over TCP
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		got6, got4, err6, err4 := lookupAddrs(ctx, dns.Addr(), tc.name)
		cancel()
		for _, c := range []struct {
			qtype string
			got   []netip.Addr
			err   error
			want  result
		}{{"AAAA", got6, err6, tc.v6}, {"A", got4, err4, tc.v4}} {
			if !slices.Equal(c.got, c.want.addrs) {
				t.Errorf("%s %s: got %v, want %v", tc.name, c.qtype, c.got, c.want.addrs)
			}
			var de *net.DNSError
			switch {
			case c.want.addrs != nil:
				if c.err != nil {
					t.Errorf("%s %s: error %v", tc.name, c.qtype, c.err)
				}
			case !errors.As(c.err, &de):
				t.Errorf("%s %s: error %#v, want a *net.DNSError", tc.name, c.qtype, c.err)
			case de.IsNotFound != c.want.notFound || c.want.err != "" && de.Err != c.want.err:
				t.Errorf("%s %s: error %+v, want IsNotFound %t, Err %q", tc.name, c.qtype, de, c.want.notFound, c.want.err)
			}
		}
	}
}

// TestLookupAddrsOneSocket: both questions come from one socket, and
// datagrams that answer neither (another ID, garbage) are skipped.
func TestLookupAddrsOneSocket(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	from := make(chan net.Addr, 2)
	go func() {
		buf := make([]byte, 1500)
		for range 2 {
			n, addr, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			from <- addr
			var q dnsmessage.Message
			if q.Unpack(buf[:n]) != nil {
				return
			}
			// Noise first: garbage, then the right answer with another ID.
			_, _ = pc.WriteTo([]byte("not DNS"), addr)
			wrong := answerTo(t, q, q.Header.ID+1)
			_, _ = pc.WriteTo(wrong, addr)
			_, _ = pc.WriteTo(answerTo(t, q, q.Header.ID), addr)
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	got6, got4, err6, err4 := lookupAddrs(ctx, pc.LocalAddr().String(), "one.test")
	if err6 != nil || err4 != nil {
		t.Fatalf("errors %v, %v", err6, err4)
	}
	if want := []netip.Addr{netip.MustParseAddr("::2")}; !slices.Equal(got6, want) {
		t.Errorf("AAAA: got %v, want %v", got6, want)
	}
	if want := []netip.Addr{netip.MustParseAddr("127.0.0.3")}; !slices.Equal(got4, want) {
		t.Errorf("A: got %v, want %v", got4, want)
	}
	if a, b := <-from, <-from; a.String() != b.String() {
		t.Errorf("the questions came from %v and %v, want one socket", a, b)
	}
}

// TestLookupAddrsTimeout: a resolver that never answers is a timeout, once
// the context ends.
func TestLookupAddrsTimeout(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, _, err6, err4 := lookupAddrs(ctx, pc.LocalAddr().String(), "silent.test")
	for _, err := range []error{err6, err4} {
		var de *net.DNSError
		if !errors.As(err, &de) || !de.IsTimeout {
			t.Errorf("error %#v, want a timeout *net.DNSError", err)
		}
		if p := dnsProblem("A", "silent.test", err); p.Detail != "DNS problem: timeout looking up A for silent.test" {
			t.Errorf("problem %q", p.Detail)
		}
	}
}

// answerTo packs a response with id to the question of q: A 127.0.0.3 or
// AAAA ::2.
func answerTo(t *testing.T, q dnsmessage.Message, id uint16) []byte {
	t.Helper()
	if len(q.Questions) != 1 {
		t.Errorf("query with %d questions", len(q.Questions))
		return nil
	}
	qq := q.Questions[0]
	m := dnsmessage.Message{
		Header:    dnsmessage.Header{ID: id, Response: true, RecursionAvailable: true},
		Questions: q.Questions,
	}
	rh := dnsmessage.ResourceHeader{Name: qq.Name, Type: qq.Type, Class: dnsmessage.ClassINET, TTL: 60}
	switch qq.Type {
	case dnsmessage.TypeA:
		m.Answers = []dnsmessage.Resource{{Header: rh, Body: &dnsmessage.AResource{A: [4]byte{127, 0, 0, 3}}}}
	case dnsmessage.TypeAAAA:
		m.Answers = []dnsmessage.Resource{{Header: rh, Body: &dnsmessage.AAAAResource{AAAA: netip.MustParseAddr("::2").As16()}}}
	}
	b, err := m.Pack()
	if err != nil {
		t.Errorf("pack: %v", err)
	}
	return b
}
