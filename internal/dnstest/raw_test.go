// SPDX-License-Identifier: Apache-2.0

package dnstest

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// garbage returns packets the server must drop without answering.
func garbage() map[string][]byte {
	return map[string][]byte{
		"one byte":     {0x42},
		"short header": {0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0},
		// A header announcing one question that is missing.
		"missing question": {0, 2, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0},
		// A question whose name label runs past the end of the packet.
		"truncated name": {0, 3, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 10, 'a', 'b'},
		// A well-formed message with the QR bit set.
		"response": {0, 4, 0x84, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		// A compression pointer that points at itself.
		"pointer loop": {0, 5, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 12, 0, 1, 0, 1},
	}
}

func TestRawAnswerFlags(t *testing.T) {
	s := startServer(t)
	c := dialUDP(t, s)
	m := exchangeUDP(t, c, buildQuery(t, 77, "Mixed.Example.Test.", dnsmessage.TypeA, false), 77)
	if m.RCode != dnsmessage.RCodeSuccess {
		t.Errorf("RCode = %v, want %v", m.RCode, dnsmessage.RCodeSuccess)
	}
	if len(m.Answers) != 1 {
		t.Fatalf("got %d answers, want 1", len(m.Answers))
	}
	rr := m.Answers[0]
	if got, want := rr.Header.Name.String(), "Mixed.Example.Test."; got != want {
		t.Errorf("answer name = %q, want %q (the query's spelling)", got, want)
	}
	if rr.Header.TTL != 0 {
		t.Errorf("answer TTL = %d, want 0", rr.Header.TTL)
	}
	a, ok := rr.Body.(*dnsmessage.AResource)
	if !ok {
		t.Fatalf("answer body is %T, want *dnsmessage.AResource", rr.Body)
	}
	if got, want := netip.AddrFrom4(a.A), netip.MustParseAddr("127.0.0.1"); got != want {
		t.Errorf("A = %v, want %v", got, want)
	}
}

func TestRawEmptyAnswers(t *testing.T) {
	s := startServer(t)
	s.SetA("v4.example.test", netip.MustParseAddr("192.0.2.1"))
	c := dialUDP(t, s)
	for i, tc := range []struct {
		name  string
		qtype dnsmessage.Type
	}{
		{"example.test.", typeCAA},
		{"unset.example.test.", dnsmessage.TypeTXT},
		{"v4.example.test.", dnsmessage.TypeAAAA},
		{"example.test.", dnsmessage.TypeMX},
	} {
		id := uint16(100 + i)
		m := exchangeUDP(t, c, buildQuery(t, id, tc.name, tc.qtype, true), id)
		if m.RCode != dnsmessage.RCodeSuccess || len(m.Answers) != 0 {
			t.Errorf("%v %s: RCode = %v with %d answers, want %v with 0",
				tc.qtype, tc.name, m.RCode, len(m.Answers), dnsmessage.RCodeSuccess)
		}
	}
}

func TestRawNXDOMAINForAllTypes(t *testing.T) {
	s := startServer(t)
	s.SetA("gone.example.test.")
	c := dialUDP(t, s)
	for i, qtype := range []dnsmessage.Type{dnsmessage.TypeA, dnsmessage.TypeAAAA, dnsmessage.TypeTXT, typeCAA} {
		id := uint16(200 + i)
		m := exchangeUDP(t, c, buildQuery(t, id, "GONE.example.test.", qtype, false), id)
		if m.RCode != dnsmessage.RCodeNameError {
			t.Errorf("%v: RCode = %v, want %v", qtype, m.RCode, dnsmessage.RCodeNameError)
		}
	}
}

func TestRawUDPTruncation(t *testing.T) {
	s := startServer(t)
	const name = "big.example.test."
	for range 20 {
		s.AddTXT(name, strings.Repeat("v", 40))
	}
	c := dialUDP(t, s)
	// Without EDNS the limit is 512 bytes; 20 records of 40 bytes exceed it.
	m := exchangeUDP(t, c, buildQuery(t, 300, name, dnsmessage.TypeTXT, false), 300)
	if !m.Truncated || len(m.Answers) != 0 {
		t.Errorf("without EDNS: TC = %v with %d answers, want TC with 0", m.Truncated, len(m.Answers))
	}
	// With EDNS (1232 bytes) they fit.
	m = exchangeUDP(t, c, buildQuery(t, 301, name, dnsmessage.TypeTXT, true), 301)
	if m.Truncated || len(m.Answers) != 20 {
		t.Errorf("with EDNS: TC = %v with %d answers, want no TC with 20", m.Truncated, len(m.Answers))
	}
	// Over TCP there is no UDP limit.
	tc := dialTCP(t, s)
	m = exchangeTCP(t, tc, buildQuery(t, 302, name, dnsmessage.TypeTXT, false), 302)
	if m.Truncated || len(m.Answers) != 20 {
		t.Errorf("over TCP: TC = %v with %d answers, want no TC with 20", m.Truncated, len(m.Answers))
	}
}

func TestUDPGarbageIsDropped(t *testing.T) {
	s := startServer(t)
	c := dialUDP(t, s)
	buf := make([]byte, 65535)
	for name, pkt := range garbage() {
		if _, err := c.Write(pkt); err != nil {
			t.Fatalf("%s: write: %v", name, err)
		}
		if err := c.SetReadDeadline(time.Now().Add(100 * time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		n, err := c.Read(buf)
		var netErr net.Error
		if !errors.As(err, &netErr) || !netErr.Timeout() {
			t.Errorf("%s: read returned %d bytes, err %v; want a timeout (no answer)", name, n, err)
		}
	}

	// The server still answers, over raw UDP and through a resolver.
	m := exchangeUDP(t, c, buildQuery(t, 400, "after.example.test.", dnsmessage.TypeA, false), 400)
	if len(m.Answers) != 1 {
		t.Errorf("after garbage: got %d answers, want 1", len(m.Answers))
	}
	got, err := resolverFor(s, nil).LookupNetIP(testContext(t), "ip4", "after.example.test.")
	if err != nil {
		t.Fatalf("LookupNetIP after garbage: %v", err)
	}
	if want := []netip.Addr{netip.MustParseAddr("127.0.0.1")}; !slices.Equal(got, want) {
		t.Errorf("LookupNetIP after garbage = %v, want %v", got, want)
	}
}

func TestTCPMultipleQueries(t *testing.T) {
	s := startServer(t)
	s.SetTXT("_acme-challenge.tcp.example.test", "tcp-token")
	s.SetA("gone.example.test")
	c := dialTCP(t, s)

	m := exchangeTCP(t, c, buildQuery(t, 500, "tcp.example.test.", dnsmessage.TypeA, true), 500)
	if len(m.Answers) != 1 {
		t.Fatalf("A over TCP: got %d answers, want 1", len(m.Answers))
	}
	if a, ok := m.Answers[0].Body.(*dnsmessage.AResource); !ok || netip.AddrFrom4(a.A) != netip.MustParseAddr("127.0.0.1") {
		t.Errorf("A over TCP: answer = %v, want A 127.0.0.1", m.Answers[0].Body)
	}

	m = exchangeTCP(t, c, buildQuery(t, 501, "_acme-challenge.tcp.example.test.", dnsmessage.TypeTXT, false), 501)
	if got, want := txtValues(t, m), []string{"tcp-token"}; !slices.Equal(got, want) {
		t.Errorf("TXT over TCP = %q, want %q", got, want)
	}

	m = exchangeTCP(t, c, buildQuery(t, 502, "gone.example.test.", dnsmessage.TypeA, false), 502)
	if m.RCode != dnsmessage.RCodeNameError {
		t.Errorf("NXDOMAIN name over TCP: RCode = %v, want %v", m.RCode, dnsmessage.RCodeNameError)
	}

	m = exchangeTCP(t, c, buildQuery(t, 503, "tcp.example.test.", dnsmessage.TypeAAAA, false), 503)
	if len(m.Answers) != 1 {
		t.Fatalf("AAAA over TCP: got %d answers, want 1", len(m.Answers))
	}
	if a, ok := m.Answers[0].Body.(*dnsmessage.AAAAResource); !ok || netip.AddrFrom16(a.AAAA) != netip.IPv6Loopback() {
		t.Errorf("AAAA over TCP: answer = %v, want AAAA ::1", m.Answers[0].Body)
	}
}

func TestTCPGarbageIsDropped(t *testing.T) {
	s := startServer(t)
	c := dialTCP(t, s)
	for _, pkt := range garbage() {
		writeFrame(t, c, pkt)
	}
	// The connection stays usable: the next answer is for the valid query.
	m := exchangeTCP(t, c, buildQuery(t, 600, "after.example.test.", dnsmessage.TypeA, false), 600)
	if len(m.Answers) != 1 {
		t.Errorf("after garbage over TCP: got %d answers, want 1", len(m.Answers))
	}

	// A connection closed in the middle of a frame does not disturb the
	// server either.
	c2 := dialTCP(t, s)
	if _, err := c2.Write([]byte{0, 40, 1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	c2.Close()
	c3 := dialTCP(t, s)
	m = exchangeTCP(t, c3, buildQuery(t, 601, "after.example.test.", dnsmessage.TypeA, false), 601)
	if len(m.Answers) != 1 {
		t.Errorf("after a cut connection: got %d answers, want 1", len(m.Answers))
	}
}

func TestCloseStopsServing(t *testing.T) {
	s, err := Start("127.0.0.1:0")
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	c := dialTCP(t, s)
	// Make sure the connection has been accepted before closing.
	exchangeTCP(t, c, buildQuery(t, 700, "x.example.test.", dnsmessage.TypeA, false), 700)

	done := make(chan error, 1)
	go func() { done <- s.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return within 5s")
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v, want nil", err)
	}

	// The open connection was closed by the server.
	if err := c.SetReadDeadline(time.Now().Add(2 * time.Second)); err != nil {
		t.Fatal(err)
	}
	var b [1]byte
	if _, err := c.Read(b[:]); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("read on a connection after Close: err = %v, want EOF or reset", err)
	}
	// New TCP connections are refused.
	if c2, err := net.Dial("tcp", s.Addr()); err == nil {
		c2.Close()
		t.Errorf("dial tcp after Close succeeded, want an error")
	}
}
