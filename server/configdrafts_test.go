// SPDX-License-Identifier: Apache-2.0

package server

import (
	"slices"
	"strings"
	"testing"

	"github.com/weir-pki/weir/acme"
)

func TestParseConfigDrafts(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		wantErr []string
		names   []string // the issuer domain names
		offered []acme.ChallengeType
	}{
		{name: "off by default", yaml: "", offered: []acme.ChallengeType{"http-01", "dns-01", "tls-alpn-01"}},
		{name: "the external URL's host", yaml: "server:\n  external-url: https://ACME.Corp.Example:8443\nchallenges:\n  dns-persist-01: { enabled: true }\n  dns-account-01: { enabled: true }\n",
			names: []string{"acme.corp.example"}, offered: acme.AllChallengeTypes()},
		{name: "listed names", yaml: "challenges:\n  dns-persist-01: { enabled: true, issuer-domain-names: [weir.corp.example, ca.corp.example] }\n",
			names: []string{"weir.corp.example", "ca.corp.example"}, offered: []acme.ChallengeType{"http-01", "dns-01", "tls-alpn-01", "dns-persist-01"}},
		{name: "only a draft type", yaml: "challenges:\n  http-01: { enabled: false }\n  dns-01: { enabled: false }\n  tls-alpn-01: { enabled: false }\n  dns-account-01: { enabled: true }\n",
			offered: []acme.ChallengeType{"dns-account-01"}},
		{name: "an IP address as the external URL", yaml: "server:\n  external-url: https://10.0.0.1\nchallenges:\n  dns-persist-01: { enabled: true }\n",
			wantErr: []string{"FILE:4: challenges.dns-persist-01.issuer-domain-names: server.external-url has no host name"}},
		{name: "upper case and a trailing dot", yaml: "challenges:\n  dns-persist-01:\n    enabled: true\n    issuer-domain-names: [Weir.corp.example, weir.corp.example.]\n",
			wantErr: []string{"FILE:4: challenges.dns-persist-01.issuer-domain-names: issuer domain name \"Weir.corp.example\" must be lower case", `"weir.corp.example." is not a domain name`}},
		{name: "not among caa-identities", yaml: "acme:\n  caa-identities: [weir.corp.example]\nchallenges:\n  dns-persist-01: { enabled: true, issuer-domain-names: [other.corp.example] }\n",
			wantErr: []string{`challenges.dns-persist-01.issuer-domain-names: "other.corp.example" is not among the directory's caaIdentities`}},
		{name: "among caa-identities", yaml: "acme:\n  caa-identities: [Weir.Corp.Example]\nchallenges:\n  dns-persist-01: { enabled: true, issuer-domain-names: [weir.corp.example] }\n",
			names: []string{"weir.corp.example"}, offered: []acme.ChallengeType{"http-01", "dns-01", "tls-alpn-01", "dns-persist-01"}},
		{name: "a disabled block is not checked", yaml: "challenges:\n  dns-persist-01: { issuer-domain-names: [BAD] }\n", names: []string{"BAD"},
			offered: []acme.ChallengeType{"http-01", "dns-01", "tls-alpn-01"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseConfig("FILE", []byte(tt.yaml))
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("err = nil, want %v", tt.wantErr)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("err = %v\nwant it to mention %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if got := cfg.issuerDomainNames(); tt.names != nil && !slices.Equal(got, tt.names) {
				t.Errorf("issuer domain names: got %v, want %v", got, tt.names)
			}
			if got := offeredChallenges(cfg); !slices.Equal(got, tt.offered) {
				t.Errorf("offered: got %v, want %v", got, tt.offered)
			}
		})
	}
}
