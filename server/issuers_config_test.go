// SPDX-License-Identifier: Apache-2.0

package server

import (
	"strings"
	"testing"
)

// TestIssuersConfig: ca.issuers and ca.active-issuer are checked, each
// problem with its line and key; a valid list parses.
func TestIssuersConfig(t *testing.T) {
	for _, tt := range []struct {
		name, yaml string
		want       []string
	}{
		{"bad id", "ca:\n  issuers:\n    - id: R2!\n", []string{`line 3: ca.issuers[0].id: "R2!" must be lowercase`}},
		{"default id", "ca:\n  issuers:\n    - id: default\n", []string{`line 3: ca.issuers[0].id: "default" is ca.intermediate's ID`}},
		{"id twice", "ca:\n  issuers:\n    - id: r2\n    - id: r2\n", []string{`line 4: ca.issuers[1].id: "r2" is given twice`}},
		{"unknown active", "ca:\n  active-issuer: r3\n  issuers:\n    - id: r2\n", []string{`line 2: ca.active-issuer: "r3" is neither`}},
		{"bad crl url", "ca:\n  issuers:\n    - id: r2\n      crl-url: ftp://x/crl\n", []string{`line 4: ca.issuers[0].crl-url: "ftp://x/crl" is not an absolute http:// or https:// URL`}},
		{"bad issuer url", "ca:\n  intermediate:\n    issuer-url: /relative\n", []string{`line 3: ca.intermediate.issuer-url: "/relative" is not`}},
		{"half a key pair", "ca:\n  issuers:\n    - id: r2\n      cert-file: r2.pem\n", []string{`ca.issuers[0]: cert-file and key-file must both be set`}},
		{"unknown key", "ca:\n  issuers:\n    - id: r2\n      crl-uri: http://x/\n", []string{`line 4: ca.issuers[0].crl-uri: unknown key`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig("", []byte(tt.yaml))
			if err == nil {
				t.Fatalf("no error, want %v", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v\nwant it to mention %q", err, w)
				}
			}
		})
	}
	cfg, err := ParseConfig("", []byte("ca:\n  active-issuer: r2\n  intermediate: { renew-early: true, crl-url: 'http://crl.corp.example/default' }\n  issuers:\n    - id: r2\n      issuer-url: http://ca.corp.example/r2.der\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CA.ActiveIssuer != "r2" || len(cfg.CA.Issuers) != 1 || cfg.CA.Issuers[0].IssuerURL != "http://ca.corp.example/r2.der" ||
		cfg.CA.Intermediate.CRLURL != "http://crl.corp.example/default" {
		t.Errorf("parsed %+v", cfg.CA)
	}
	if got := cfg.CA.renewEarly(); len(got) != 1 || got[0] != "default" {
		t.Errorf("renew-early issuers %v, want [default]", got)
	}
}
