// SPDX-License-Identifier: Apache-2.0

package challenge

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/internal/dnstest"
)

const (
	testToken   = "evaGxfADs6pSRb2LAv9IZf17Dt3juxGJ-PCt92wr-oA"
	testKeyAuth = testToken + ".9jg46WB3rR_AHD-EBXdN7cBkH1WOu0tA3M9fm21mqTI"
)

// startDNS starts a dnstest server whose default answer is A 127.0.0.1
// only, closed when the test ends.
func startDNS(t *testing.T) *dnstest.Server {
	t.Helper()
	s, err := dnstest.Start("127.0.0.1:0")
	if err != nil {
		t.Fatalf("dnstest.Start: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	s.SetDefaultAddrs(netip.MustParseAddr("127.0.0.1"))
	return s
}

// newValidator returns a Validator using dns as its resolver, with cfg's
// other fields as given.
func newValidator(t *testing.T, dns *dnstest.Server, cfg Config) *Validator {
	t.Helper()
	cfg.Resolver = dns.Addr()
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	v, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return v
}

// portOf returns the port of a listener address such as "127.0.0.1:1234".
func portOf(t *testing.T, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("SplitHostPort(%q): %v", addr, err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatalf("port %q: %v", p, err)
	}
	return n
}

// closedPort returns a loopback TCP port with nothing listening on it.
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	port := portOf(t, ln.Addr().String())
	ln.Close()
	return port
}

// dnsIdent returns a dns identifier.
func dnsIdent(name string) acme.Identifier {
	return acme.Identifier{Type: acme.IdentifierDNS, Value: name}
}

// ipIdent returns an ip identifier.
func ipIdent(ip string) acme.Identifier {
	return acme.Identifier{Type: acme.IdentifierIP, Value: ip}
}

// request returns a validation request of type typ for ident with the
// test token and key authorization.
func request(typ acme.ChallengeType, ident acme.Identifier) acme.ValidationRequest {
	return acme.ValidationRequest{Identifier: ident, Type: typ, Token: testToken, KeyAuthorization: testKeyAuth}
}

// validate runs v.Validate under a test deadline.
func validate(t *testing.T, v *Validator, req acme.ValidationRequest) *acme.Problem {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return v.Validate(ctx, req)
}

// checkProblem asserts that got is nil when want is "", else a problem of
// type want about ident whose detail contains detail.
func checkProblem(t *testing.T, got *acme.Problem, ident acme.Identifier, want acme.ProblemType, detail string) {
	t.Helper()
	if want == "" {
		if got != nil {
			t.Fatalf("Validate: got problem %v, want nil", got)
		}
		return
	}
	if got == nil {
		t.Fatalf("Validate: got nil, want a %s problem", want)
	}
	if got.Type != want {
		t.Errorf("problem type: got %s, want %s (detail %q, cause %v)", got.Type, want, got.Detail, got.Cause)
	}
	if !strings.Contains(got.Detail, detail) {
		t.Errorf("problem detail: got %q, want it to contain %q", got.Detail, detail)
	}
	if got.Identifier == nil || *got.Identifier != ident {
		t.Errorf("problem identifier: got %v, want %v", got.Identifier, ident)
	}
	if got.Status == 0 {
		t.Errorf("problem status: got 0, want an HTTP status")
	}
}
