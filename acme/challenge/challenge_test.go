// SPDX-License-Identifier: Apache-2.0

package challenge

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// Validator implements acme.Validator.
var _ acme.Validator = (*Validator)(nil)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want []string // substrings of the error; none means valid
	}{
		{name: "zero"},
		{name: "full", cfg: Config{HTTPPort: 5002, TLSALPNPort: 5001, Resolver: "127.0.0.1:8053",
			Timeout: time.Second, MaxBodyBytes: 1, Enabled: map[acme.ChallengeType]bool{acme.ChallengeDNS01: true}}},
		{name: "ipv6 resolver", cfg: Config{Resolver: "[::1]:53"}},
		{name: "bad ports", cfg: Config{HTTPPort: -1, TLSALPNPort: 65536},
			want: []string{"HTTP port -1 out of range", "TLS-ALPN port 65536 out of range"}},
		{name: "resolver without port", cfg: Config{Resolver: "127.0.0.1"}, want: []string{`resolver "127.0.0.1"`}},
		{name: "resolver bad port", cfg: Config{Resolver: "127.0.0.1:0"}, want: []string{`port "0"`}},
		{name: "resolver no host", cfg: Config{Resolver: ":53"}, want: []string{"empty host"}},
		{name: "negatives", cfg: Config{Timeout: -1, MaxBodyBytes: -1},
			want: []string{"timeout -1ns is negative", "max body bytes -1 is negative"}},
		{name: "unknown type", cfg: Config{Enabled: map[acme.ChallengeType]bool{"http-00": true, acme.ChallengeHTTP01: true}},
			want: []string{`unknown challenge type "http-00"`}},
		{name: "none enabled", cfg: Config{Enabled: map[acme.ChallengeType]bool{acme.ChallengeHTTP01: false}},
			want: []string{"no challenge type enabled"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("Validate: got %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate: got nil, want errors %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate: got %q, want it to contain %q", err, w)
				}
			}
			if _, nerr := New(tc.cfg); nerr == nil {
				t.Errorf("New: got nil error, want one")
			}
		})
	}
}

func TestNewDefaults(t *testing.T) {
	enabled := map[acme.ChallengeType]bool{acme.ChallengeHTTP01: true}
	v, err := New(Config{Enabled: enabled})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	want := Config{HTTPPort: 80, TLSALPNPort: 443, Timeout: 10 * time.Second, MaxBodyBytes: 8192}
	got := v.cfg
	got.Enabled = nil
	if got.HTTPPort != want.HTTPPort || got.TLSALPNPort != want.TLSALPNPort || got.Timeout != want.Timeout || got.MaxBodyBytes != want.MaxBodyBytes {
		t.Errorf("defaults: got %+v, want %+v", got, want)
	}
	enabled[acme.ChallengeDNS01] = true // must not affect v
	if v.cfg.enabled(acme.ChallengeDNS01) {
		t.Errorf("enabled(dns-01) after mutating the caller's map: got true, want false")
	}
}

// TestValidateRequests covers requests rejected before any network use.
func TestValidateRequests(t *testing.T) {
	dns := startDNS(t)
	v := newValidator(t, dns, Config{Enabled: map[acme.ChallengeType]bool{acme.ChallengeHTTP01: true, acme.ChallengeDNS01: true}})
	good := dnsIdent("example.test")
	tests := []struct {
		name   string
		req    acme.ValidationRequest
		want   acme.ProblemType
		detail string
	}{
		{name: "disabled type", req: request(acme.ChallengeTLSALPN01, good),
			want: acme.ProbMalformed, detail: `challenge type "tls-alpn-01" is not enabled`},
		{name: "unknown type", req: request("http-02", good),
			want: acme.ProbMalformed, detail: `unsupported challenge type "http-02"`},
		{name: "token with a slash", req: acme.ValidationRequest{Identifier: good, Type: acme.ChallengeHTTP01, Token: "../x", KeyAuthorization: "k"},
			want: acme.ProbMalformed, detail: "invalid challenge token"},
		{name: "empty token", req: acme.ValidationRequest{Identifier: good, Type: acme.ChallengeHTTP01, KeyAuthorization: "k"},
			want: acme.ProbMalformed, detail: "invalid challenge token"},
		{name: "empty key authorization", req: acme.ValidationRequest{Identifier: good, Type: acme.ChallengeHTTP01, Token: testToken},
			want: acme.ProbServerInternal},
		{name: "bad dns name", req: request(acme.ChallengeHTTP01, dnsIdent("evil.test/x?")),
			want: acme.ProbMalformed, detail: `invalid dns identifier "evil.test/x?"`},
		{name: "wildcard not stripped", req: request(acme.ChallengeDNS01, dnsIdent("*.example.test")),
			want: acme.ProbMalformed, detail: "invalid dns identifier"},
		{name: "bad ip", req: request(acme.ChallengeHTTP01, ipIdent("300.1.1.1")),
			want: acme.ProbMalformed, detail: `invalid ip identifier "300.1.1.1"`},
		{name: "ip with zone", req: request(acme.ChallengeHTTP01, ipIdent("fe80::1%eth0")),
			want: acme.ProbMalformed, detail: "invalid ip identifier"},
		{name: "unsupported identifier type", req: request(acme.ChallengeHTTP01, acme.Identifier{Type: "email", Value: "a@b"}),
			want: acme.ProbUnsupportedIdentifier, detail: `unsupported identifier type "email"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkProblem(t, validate(t, v, tc.req), tc.req.Identifier, tc.want, tc.detail)
		})
	}
}

// TestValidateCanceled reports a validation the caller canceled as an
// internal error rather than blaming the applicant.
func TestValidateCanceled(t *testing.T) {
	dns := startDNS(t)
	started := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
	}))
	defer srv.Close()
	v := newValidator(t, dns, Config{HTTPPort: portOf(t, srv.Listener.Addr().String())})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	ident := dnsIdent("example.test")
	p := v.Validate(ctx, request(acme.ChallengeHTTP01, ident))
	checkProblem(t, p, ident, acme.ProbServerInternal, "internal server error")
}
