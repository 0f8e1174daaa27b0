// SPDX-License-Identifier: Apache-2.0

package server

import (
	"strings"
	"testing"
)

// TestEABConfig: the acme.external-account-binding block and the
// "eab:LABEL" and "tenant:NAME" rate-limit overrides, each problem named
// by its key.
func TestEABConfig(t *testing.T) {
	tests := []struct {
		name, yaml string
		wantErr    string // "" means valid
		check      func(t *testing.T, c Config)
	}{
		{name: "default: not required", yaml: ``, check: func(t *testing.T, c Config) {
			if c.ACME.ExternalAccountBinding.Required {
				t.Error("required by default")
			}
		}},
		{name: "required", yaml: "acme:\n  external-account-binding: { required: true }\n", check: func(t *testing.T, c Config) {
			if !c.ACME.ExternalAccountBinding.Required {
				t.Error("required: true not read")
			}
		}},
		{name: "required without the admin listener", yaml: "acme:\n  external-account-binding: { required: true }\nadmin: { enabled: false }\n",
			wantErr: "acme.external-account-binding.required"},
		{name: "unknown key", yaml: "acme:\n  external-account-binding: { optional: true }\n", wantErr: "optional"},
		{name: "order-creation override by label",
			yaml: "rate-limiting:\n  overrides:\n    - { limit: order-creation, key: \"eab:team-x\", order-burst: 50 }\n    - { limit: pending-authorizations, key: \"eab:team-x\", max: 300 }\n",
			check: func(t *testing.T, c Config) {
				lc, err := c.RateLimiting.Policy()
				if err != nil {
					t.Fatal(err)
				}
				for key, want := range map[string]int64{"order-creation:eab:team-x": 50, "san-budget:eab:team-x": 100, "pending-authorizations:eab:team-x": 300} {
					l, ok := lc.Overrides[key]
					if got := max(l.Burst, l.Max); !ok || got != want {
						t.Errorf("override %s = %+v (found %v); want %d", key, l, ok, want)
					}
				}
			}},
		{name: "label override of a limit that has none",
			yaml:    "rate-limiting:\n  overrides:\n    - { limit: duplicate-certificate, key: \"eab:team-x\", max-per-window: 9 }\n",
			wantErr: "rate-limiting.overrides[0]: limit duplicate-certificate takes a key of the form account:…"},
		{name: "bad label",
			yaml:    "rate-limiting:\n  overrides:\n    - { limit: order-creation, key: \"eab:team x\", order-burst: 9 }\n",
			wantErr: `rate-limiting.overrides[0]: key "eab:team x"`},
		{name: "override by tenant", yaml: "rate-limiting:\n  overrides:\n    - { limit: pending-authorizations, key: \"tenant:team-a\", max: 400 }\n",
			check: func(t *testing.T, c Config) {
				lc, err := c.RateLimiting.Policy()
				if err != nil {
					t.Fatal(err)
				}
				if l, ok := lc.Overrides["pending-authorizations:tenant:team-a"]; !ok || l.Max != 400 {
					t.Errorf("override pending-authorizations:tenant:team-a = %+v (found %v); want max 400", l, ok)
				}
			}},
		{name: "bad tenant name",
			yaml:    "rate-limiting:\n  overrides:\n    - { limit: order-creation, key: \"tenant:a/b\", order-burst: 9 }\n",
			wantErr: `rate-limiting.overrides[0]: key "tenant:a/b": tenant name:`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseConfig("", []byte(tt.yaml))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("parseConfig: %v", err)
				}
				tt.check(t, c)
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("parseConfig error = %v; want one containing %q", err, tt.wantErr)
			}
		})
	}
}
