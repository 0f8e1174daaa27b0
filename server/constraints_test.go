// SPDX-License-Identifier: Apache-2.0

package server

import (
	"bytes"
	"crypto/x509"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ca"
)

// TestNameConstraintsServe: with ca.name-constraints, the root and
// intermediate weir generates carry the policy as critical name
// constraints, with weir's own HTTPS names; weir's HTTPS certificate
// verifies under them (the host name left out when they do not permit
// it); and once the policy allows more than the constraints, orders for
// those names are refused and the start-up check says so.
func TestNameConstraintsServe(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir() + "/weir-data"
	cfg.Server.Listen = "127.0.0.1:0"
	cfg.Log.Level = "error"
	cfg.CA.NameConstraints = true
	cfg.CA.Policy = acme.PolicyConfig{AllowedDomains: []string{"corp.example"}, DeniedDomains: []string{"secret.corp.example"},
		AllowedIPRanges: []string{"10.0.0.0/8"}}
	s, err := New(t.Context(), cfg, Options{Log: &bytes.Buffer{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := s.svc.CA().Hierarchy()
	for _, c := range []*x509.Certificate{h.Root, h.Intermediate} {
		if !c.PermittedDNSDomainsCritical || !slices.Equal(c.PermittedDNSDomains, []string{"corp.example", "localhost"}) ||
			!slices.Equal(c.ExcludedDNSDomains, []string{"secret.corp.example"}) {
			t.Errorf("%s: permitted %v, excluded %v, critical %t", c.Subject.CommonName,
				c.PermittedDNSDomains, c.ExcludedDNSDomains, c.PermittedDNSDomainsCritical)
		}
		var ranges []string
		for _, n := range c.PermittedIPRanges {
			ranges = append(ranges, n.String())
		}
		if !slices.Equal(ranges, []string{"10.0.0.0/8", "127.0.0.0/8", "::1/128", "127.0.0.1/32"}) {
			t.Errorf("%s: permitted IP ranges %v", c.Subject.CommonName, ranges)
		}
	}

	leaf := s.serving.leaf()
	if !slices.Contains(leaf.DNSNames, "localhost") {
		t.Errorf("weir's HTTPS certificate names %v, want localhost among them", leaf.DNSNames)
	}
	for _, n := range leaf.DNSNames {
		if !h.PermitsDNS(n) {
			t.Errorf("weir's HTTPS certificate names %q, which the constraints do not permit", n)
		}
	}
	roots, inter := x509.NewCertPool(), x509.NewCertPool()
	roots.AddCert(h.Root)
	inter.AddCert(h.Intermediate)
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, DNSName: "localhost"}); err != nil {
		t.Errorf("weir's HTTPS certificate does not verify under its constrained root: %v", err)
	}

	ctx := t.Context()
	acct := &acme.Account{Key: []byte(`{"kty":"EC"}`), KeyThumbprint: "nc-test", Status: acme.StatusValid, CreatedAt: time.Now()}
	if err := s.store.CreateAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	// The policy now allows more than the constraints do.
	wider := cfg.CA
	wider.Policy.AllowedDomains = []string{"corp.example", "other.example"}
	policy, err := acme.NewPolicy(wider.Policy)
	if err != nil {
		t.Fatal(err)
	}
	s.svc.SetLive(acme.Live{Policy: policy, Profiles: s.svc.Profiles(), ARI: cfg.ACME.RenewalInfo})
	for _, tc := range []struct {
		name   string
		refuse string // a substring of the problem's detail, or "" for none
	}{
		{"www.corp.example", ""},
		{"www.other.example", "name constraints do not permit"},
		{"db.secret.corp.example", "denied domain"},
	} {
		ex, err := s.svc.ExplainNewOrder(ctx, acct.ID, acme.NewOrderRequest{Identifiers: []acme.Identifier{{Type: acme.IdentifierDNS, Value: tc.name}}})
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case tc.refuse == "" && ex.Problem != nil:
			t.Errorf("%s: refused: %v", tc.name, ex.Problem)
		case tc.refuse != "" && (ex.Problem == nil || ex.Problem.Type != acme.ProbRejectedIdentifier || !strings.Contains(ex.Problem.Error(), tc.refuse)):
			t.Errorf("%s: problem %v, want rejectedIdentifier saying %q", tc.name, ex.Problem, tc.refuse)
		}
	}
	_, err = s.svc.NewOrder(ctx, acme.Caller{Account: acct}, acme.NewOrderRequest{
		Identifiers: []acme.Identifier{{Type: acme.IdentifierDNS, Value: "www.other.example"}}})
	if p, ok := err.(*acme.Problem); !ok || p.Type != acme.ProbRejectedIdentifier {
		t.Errorf("NewOrder for a name outside the constraints: %v, want rejectedIdentifier", err)
	}

	var logs bytes.Buffer
	warnConstraints(slog.New(slog.NewTextHandler(&logs, nil)), wider, h, false)
	if out := logs.String(); !strings.Contains(out, "domain=other.example") || strings.Contains(out, "domain=corp.example") ||
		strings.Contains(out, "no effect") {
		t.Errorf("start-up warnings:\n%s\nwant one for other.example only", out)
	}
	logs.Reset()
	every := cfg.CA
	every.Policy.AllowedDomains = nil
	warnConstraints(slog.New(slog.NewTextHandler(&logs, nil)), every, h, false)
	if !strings.Contains(logs.String(), "allowed-domains is empty") {
		t.Errorf("a policy allowing every domain under constraints: warnings %q, want one about the empty allowed-domains", logs.String())
	}
	logs.Reset()
	warnConstraints(slog.New(slog.NewTextHandler(&logs, nil)), wider, newUnconstrained(t), false)
	if !strings.Contains(logs.String(), "has no effect") {
		t.Errorf("ca.name-constraints on a CA without constraints: warnings %q, want one saying it has no effect", logs.String())
	}
}

// newUnconstrained generates a hierarchy without name constraints.
func newUnconstrained(t *testing.T) *ca.Hierarchy {
	t.Helper()
	h, err := ca.GenerateHierarchy("weir test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return h
}
