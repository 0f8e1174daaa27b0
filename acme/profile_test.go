// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"crypto/x509"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/ca"
)

func TestProfilesResolve(t *testing.T) {
	week := 7 * 24 * time.Hour
	ps, err := NewProfiles("server", map[string]ProfileConfig{
		"server": {Description: "s"},
		"short":  {CertificateLifetime: &week, KeyUsages: []KeyUsage{KeyUsageServerAuth, KeyUsageClientAuth}, IdentifierTypes: []IdentifierType{IdentifierDNS}, CommonName: ca.CommonNameFirstName},
	}, 90*24*time.Hour)
	if err != nil {
		t.Fatalf("NewProfiles: %v", err)
	}
	var none *Profiles
	tests := []struct {
		name       string
		ps         *Profiles
		ask        string
		wantName   string
		wantNil    bool
		wantProb   ProblemType
		wantDetail string
	}{
		{name: "empty asks for the default", ps: ps, ask: "", wantName: "server"},
		{name: "by name", ps: ps, ask: "short", wantName: "short"},
		{name: "unknown lists the offered", ps: ps, ask: "classic", wantProb: ProbInvalidProfile, wantDetail: `"classic" is not offered; this server offers server, short`},
		{name: "no profiles, none asked", ps: none, ask: "", wantNil: true},
		{name: "no profiles, one asked", ps: none, ask: "short", wantProb: ProbInvalidProfile, wantDetail: "offers no profiles"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, prob := tt.ps.resolve(tt.ask)
			if tt.wantProb != "" {
				if prob == nil || prob.Type != tt.wantProb || prob.Status != 400 || !strings.Contains(prob.Detail, tt.wantDetail) {
					t.Fatalf("Resolve(%q): got %v, want 400 %s containing %q", tt.ask, prob, tt.wantProb, tt.wantDetail)
				}
				return
			}
			if prob != nil {
				t.Fatalf("Resolve(%q): got problem %v", tt.ask, prob)
			}
			if tt.wantNil != (p == nil) || (p != nil && p.Name != tt.wantName) {
				t.Fatalf("Resolve(%q): got %+v, want %q (nil %v)", tt.ask, p, tt.wantName, tt.wantNil)
			}
		})
	}

	server, _ := ps.Get("server")
	if server.Lifetime != 90*24*time.Hour || !slices.Equal(server.KeyUsages, []KeyUsage{KeyUsageServerAuth}) ||
		!slices.Equal(server.IdentifierTypes, []IdentifierType{IdentifierDNS, IdentifierIP}) || server.CommonName != ca.CommonNameNone {
		t.Errorf("a profile with every key left out: got %+v, want the default lifetime, serverAuth, dns and ip, no CN", server)
	}
	short, _ := ps.Get("short")
	if got, want := short.extKeyUsages(), []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}; !slices.Equal(got, want) {
		t.Errorf("extKeyUsages: got %v, want %v", got, want)
	}
	prob := short.checkIdentifiers([]Identifier{{Type: IdentifierDNS, Value: "a.example"}, {Type: IdentifierIP, Value: "10.0.0.1"}, {Type: IdentifierIP, Value: "10.0.0.2"}})
	if prob == nil || prob.Type != ProbRejectedIdentifier || len(prob.Subproblems) != 2 || prob.Subproblems[0].Identifier.Value != "10.0.0.1" {
		t.Errorf("checkIdentifiers: got %+v, want rejectedIdentifier with one subproblem per IP", prob)
	}
	if got := ps.Descriptions(); len(got) != 2 || got["server"] != "s" || got["short"] != "" {
		t.Errorf("Descriptions: got %v", got)
	}
	if none.Descriptions() != nil {
		t.Errorf("Descriptions of no profiles: got %v, want nil", none.Descriptions())
	}
}

func TestProfileRequest(t *testing.T) {
	first := &Profile{Name: "m", Lifetime: time.Hour, KeyUsages: []KeyUsage{KeyUsageClientAuth}, CommonName: ca.CommonNameFirstName}
	tests := []struct {
		name    string
		p       *Profile
		csrCN   string
		wantDNS []string
	}{
		{name: "CSR CN goes first", p: first, csrCN: "C.example.", wantDNS: []string{"c.example", "a.example", "b.example"}},
		{name: "no CSR CN keeps the order", p: first, wantDNS: []string{"a.example", "b.example", "c.example"}},
		{name: "an IP CN changes nothing", p: first, csrCN: "10.0.0.1", wantDNS: []string{"a.example", "b.example", "c.example"}},
		{name: "no profile changes nothing", p: nil, csrCN: "c.example", wantDNS: []string{"a.example", "b.example", "c.example"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := ca.IssueRequest{DNSNames: []string{"a.example", "b.example", "c.example"}}
			csr := &x509.CertificateRequest{}
			csr.Subject.CommonName = tt.csrCN
			profileRequest(&req, tt.p, csr)
			if !slices.Equal(req.DNSNames, tt.wantDNS) {
				t.Errorf("DNSNames: got %q, want %q", req.DNSNames, tt.wantDNS)
			}
			if tt.p != nil && (req.Lifetime != time.Hour || req.CommonName != ca.CommonNameFirstName ||
				!slices.Equal(req.ExtKeyUsages, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth})) {
				t.Errorf("request: got %+v, want the profile's lifetime, EKUs and CN policy", req)
			}
		})
	}
}
