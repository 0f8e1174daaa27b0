// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"strings"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr []string // substrings that must all appear; nil means valid
	}{
		{"valid", testConfig(), nil},
		{"no URLs", Config{Lifetime: testLifetime}, nil},
		{"zero lifetime", Config{}, []string{"lifetime"}},
		{"negative lifetime", Config{Lifetime: -1}, []string{"lifetime"}},
		{"relative issuer URL", Config{Lifetime: 1, IssuerURL: "/intermediate.der"}, []string{"issuer URL"}},
		{"bad CRL URL", Config{Lifetime: 1, CRLURL: "http://%zz"}, []string{"CRL URL"}},
		{"ftp CRL URL", Config{Lifetime: 1, CRLURL: "ftp://ca.example/crl"}, []string{"http or https"}},
		{"no host", Config{Lifetime: 1, CRLURL: "https:///crl"}, []string{"no host"}},
		{"all wrong", Config{IssuerURL: "nope", CRLURL: "::"}, []string{"lifetime", "issuer URL", "CRL URL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Validate: got %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate: got nil, want error mentioning %q", tt.wantErr)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Validate: got %q, want it to mention %q", err, want)
				}
			}
		})
	}
}
