// SPDX-License-Identifier: Apache-2.0

package dnstest

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// lookupIPs resolves host for network ("ip4" or "ip6") through s.
func lookupIPs(t *testing.T, s *Server, network, host string) ([]netip.Addr, error) {
	t.Helper()
	return resolverFor(s, nil).LookupNetIP(testContext(t), network, host)
}

// lookupTXT resolves the TXT records of host through s, sorted.
func lookupTXT(t *testing.T, s *Server, host string) []string {
	t.Helper()
	got, err := resolverFor(s, nil).LookupTXT(testContext(t), host)
	if err != nil {
		t.Fatalf("LookupTXT(%q): %v", host, err)
	}
	slices.Sort(got)
	return got
}

// wantNotFound checks that err is a DNS "not found" error.
func wantNotFound(t *testing.T, err error, what string) {
	t.Helper()
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Errorf("%s: err = %v, want a *net.DNSError with IsNotFound", what, err)
	}
}

func TestAddr(t *testing.T) {
	s := startServer(t)
	ap, err := netip.ParseAddrPort(s.Addr())
	if err != nil {
		t.Fatalf("ParseAddrPort(%q): %v", s.Addr(), err)
	}
	if got, want := ap.Addr(), netip.MustParseAddr("127.0.0.1"); got != want {
		t.Errorf("Addr() IP = %v, want %v", got, want)
	}
	if ap.Port() == 0 {
		t.Errorf("Addr() port = 0, want an assigned port")
	}
}

func TestStartPortInUse(t *testing.T) {
	s := startServer(t)
	s2, err := Start(s.Addr())
	if err == nil {
		s2.Close()
		t.Fatalf("Start(%q) on a used port: err = nil, want an error", s.Addr())
	}
}

func TestDefaultAddrs(t *testing.T) {
	s := startServer(t)
	for _, tc := range []struct {
		network string
		want    string
	}{
		{"ip4", "127.0.0.1"},
		{"ip6", "::1"},
	} {
		got, err := lookupIPs(t, s, tc.network, "anything.example.test.")
		if err != nil {
			t.Fatalf("LookupNetIP(%s): %v", tc.network, err)
		}
		if want := []netip.Addr{netip.MustParseAddr(tc.want)}; !slices.Equal(got, want) {
			t.Errorf("LookupNetIP(%s) = %v, want %v", tc.network, got, want)
		}
	}
}

func TestSetDefaultAddrs(t *testing.T) {
	s := startServer(t)
	s.SetDefaultAddrs(netip.MustParseAddr("192.0.2.7"))
	got, err := lookupIPs(t, s, "ip4", "host.example.test.")
	if err != nil {
		t.Fatalf("LookupNetIP(ip4): %v", err)
	}
	if want := []netip.Addr{netip.MustParseAddr("192.0.2.7")}; !slices.Equal(got, want) {
		t.Errorf("LookupNetIP(ip4) = %v, want %v", got, want)
	}
	_, err = lookupIPs(t, s, "ip6", "host.example.test.")
	wantNotFound(t, err, "LookupNetIP(ip6) with only IPv4 defaults")
}

func TestSetA(t *testing.T) {
	s := startServer(t)
	s.SetA("Custom.Example.Test.",
		netip.MustParseAddr("192.0.2.1"),
		netip.MustParseAddr("192.0.2.2"),
		netip.MustParseAddr("2001:db8::1"),
		netip.MustParseAddr("::ffff:192.0.2.3"))

	got, err := lookupIPs(t, s, "ip4", "custom.example.test.")
	if err != nil {
		t.Fatalf("LookupNetIP(ip4): %v", err)
	}
	slices.SortFunc(got, netip.Addr.Compare)
	want := []netip.Addr{
		netip.MustParseAddr("192.0.2.1"),
		netip.MustParseAddr("192.0.2.2"),
		netip.MustParseAddr("192.0.2.3"),
	}
	if !slices.Equal(got, want) {
		t.Errorf("LookupNetIP(ip4) = %v, want %v", got, want)
	}

	got, err = lookupIPs(t, s, "ip6", "CUSTOM.example.test")
	if err != nil {
		t.Fatalf("LookupNetIP(ip6): %v", err)
	}
	if want := []netip.Addr{netip.MustParseAddr("2001:db8::1")}; !slices.Equal(got, want) {
		t.Errorf("LookupNetIP(ip6) = %v, want %v", got, want)
	}

	// Other names keep the defaults.
	got, err = lookupIPs(t, s, "ip4", "other.example.test.")
	if err != nil {
		t.Fatalf("LookupNetIP(ip4, other): %v", err)
	}
	if want := []netip.Addr{netip.MustParseAddr("127.0.0.1")}; !slices.Equal(got, want) {
		t.Errorf("LookupNetIP(ip4, other) = %v, want %v", got, want)
	}
}

func TestSetAIPv4OnlyHasNoAAAA(t *testing.T) {
	s := startServer(t)
	s.SetA("v4only.example.test", netip.MustParseAddr("192.0.2.9"))
	_, err := lookupIPs(t, s, "ip6", "v4only.example.test.")
	wantNotFound(t, err, "LookupNetIP(ip6) of an IPv4-only name")
}

func TestNXDOMAIN(t *testing.T) {
	s := startServer(t)
	s.SetA("gone.example.test")

	for _, network := range []string{"ip4", "ip6"} {
		_, err := lookupIPs(t, s, network, "gone.example.test.")
		wantNotFound(t, err, "LookupNetIP("+network+") of an NXDOMAIN name")
	}

	s.ClearA("gone.example.test.")
	got, err := lookupIPs(t, s, "ip4", "gone.example.test.")
	if err != nil {
		t.Fatalf("LookupNetIP after ClearA: %v", err)
	}
	if want := []netip.Addr{netip.MustParseAddr("127.0.0.1")}; !slices.Equal(got, want) {
		t.Errorf("LookupNetIP after ClearA = %v, want %v", got, want)
	}
}

func TestTXTSetAddClear(t *testing.T) {
	s := startServer(t)
	const name = "_acme-challenge.example.test."

	s.SetTXT("_ACME-Challenge.Example.Test", "b-token", "a-token")
	if got, want := lookupTXT(t, s, name), []string{"a-token", "b-token"}; !slices.Equal(got, want) {
		t.Errorf("after SetTXT: LookupTXT = %q, want %q", got, want)
	}

	s.AddTXT(name, "c-token")
	if got, want := lookupTXT(t, s, name), []string{"a-token", "b-token", "c-token"}; !slices.Equal(got, want) {
		t.Errorf("after AddTXT: LookupTXT = %q, want %q", got, want)
	}

	s.SetTXT(name, "only")
	if got, want := lookupTXT(t, s, name), []string{"only"}; !slices.Equal(got, want) {
		t.Errorf("after second SetTXT: LookupTXT = %q, want %q", got, want)
	}

	s.ClearTXT("_acme-challenge.EXAMPLE.test")
	_, err := resolverFor(s, nil).LookupTXT(testContext(t), name)
	wantNotFound(t, err, "LookupTXT after ClearTXT")
}

func TestTXTUnsetIsEmpty(t *testing.T) {
	s := startServer(t)
	_, err := resolverFor(s, nil).LookupTXT(testContext(t), "nothing.example.test.")
	wantNotFound(t, err, "LookupTXT of a name without TXT records")
}

func TestTXTLongValue(t *testing.T) {
	s := startServer(t)
	long := strings.Repeat("x", 600)
	s.SetTXT("long.example.test", long)
	if got := lookupTXT(t, s, "long.example.test."); !slices.Equal(got, []string{long}) {
		t.Errorf("LookupTXT of a 600-byte value returned %d values of lengths %v, want one of length 600",
			len(got), lens(got))
	}
}

// lens returns the lengths of ss.
func lens(ss []string) []int {
	out := make([]int, len(ss))
	for i, s := range ss {
		out[i] = len(s)
	}
	return out
}

func TestTXTDir(t *testing.T) {
	s := startServer(t)
	dir := t.TempDir()
	s.SetTXTDir(dir)
	const name = "_acme-challenge.dir.example.test"
	path := filepath.Join(dir, name)

	if err := os.WriteFile(path, []byte("first\r\n\nsecond\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := lookupTXT(t, s, "_ACME-challenge.Dir.example.test."), []string{"first", "second"}; !slices.Equal(got, want) {
		t.Errorf("LookupTXT from file = %q, want %q", got, want)
	}

	// The file is read on every query.
	if err := os.WriteFile(path, []byte("third"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := lookupTXT(t, s, name+"."), []string{"third"}; !slices.Equal(got, want) {
		t.Errorf("LookupTXT after rewriting file = %q, want %q", got, want)
	}

	// In-memory records are served alongside the file's.
	s.SetTXT(name, "memory")
	if got, want := lookupTXT(t, s, name+"."), []string{"memory", "third"}; !slices.Equal(got, want) {
		t.Errorf("LookupTXT with file and memory = %q, want %q", got, want)
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if got, want := lookupTXT(t, s, name+"."), []string{"memory"}; !slices.Equal(got, want) {
		t.Errorf("LookupTXT after removing file = %q, want %q", got, want)
	}
}

func TestTruncationFallsBackToTCP(t *testing.T) {
	s := startServer(t)
	const name = "big.example.test."
	var want []string
	for i := range 40 {
		want = append(want, strings.Repeat(string(rune('a'+i%26)), 50)+strings.Repeat("0", i%10))
	}
	s.SetTXT(name, want...)
	slices.Sort(want)

	var log dialLog
	got, err := resolverFor(s, &log).LookupTXT(testContext(t), name)
	if err != nil {
		t.Fatalf("LookupTXT: %v", err)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("LookupTXT returned %d values, want %d matching the ones set", len(got), len(want))
	}
	if !log.has("tcp") {
		t.Errorf("resolver dialed %v, want a TCP retry after a truncated UDP answer", log.networks)
	}
}
