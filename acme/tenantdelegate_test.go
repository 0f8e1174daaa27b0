// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"strings"
	"testing"
)

// TestTenantDelegatedZones: a delegated zone must be a zone within one of
// the tenant's allowed zones (each bad entry named); delegation holds the
// names under it, wildcards by their base name, and nothing else.
func TestTenantDelegatedZones(t *testing.T) {
	bad := []struct {
		allowed, zone, want string
	}{
		{".a.example", ".b.example", `delegated-zones[0]: ".b.example" lies within none of the tenant's allowed zones`},
		{".a.example", ".example", `delegated-zones[0]: ".example" lies within none`}, // a parent of the allowed zone
		{"host.a.example", ".host.a.example", `lies within none`},                     // an exact allowed name is no zone
		{".a.example", "x.a.example", `delegated-zones[0]: "x.a.example" is a name, not a zone: write ".x.a.example"`},
		{".a.example", "*.a.example", `delegated-zones[0]: "*.a.example": write a zone as`},
		{".a.example", ".bad..a.example", `delegated-zones[0]: ".bad..a.example" is not a domain name`},
	}
	for _, b := range bad {
		_, err := Tenant{Name: "t", AllowedNames: []string{b.allowed}, DelegatedZones: []string{b.zone}}.Validate(nil)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("allowed %s, delegated %s: %v; want %q", b.allowed, b.zone, err, b.want)
		}
	}

	tn, err := Tenant{Name: "t", AllowedNames: []string{".a.example", ".b.example"}, Wildcards: true,
		DelegatedZones: []string{".Auto.A.example.", ".a.example"}}.Validate(nil)
	if err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if got := strings.Join(tn.DelegatedZones, " "); got != ".a.example .auto.a.example" {
		t.Errorf("DelegatedZones: %q; want canonical and sorted", got)
	}
	narrow := Tenant{Name: "t", AllowedNames: []string{".a.example"}, DelegatedZones: []string{".auto.a.example"}}
	dns := func(v string) Identifier { return Identifier{Type: IdentifierDNS, Value: v} }
	tests := []struct {
		tenant *Tenant
		id     Identifier
		want   string
	}{
		{&narrow, dns("auto.a.example"), ".auto.a.example"},
		{&narrow, dns("x.y.auto.a.example"), ".auto.a.example"},
		{&narrow, dns("*.auto.a.example"), ".auto.a.example"}, // its base is under the zone
		{&narrow, dns("www.a.example"), ""},
		{&narrow, dns("xauto.a.example"), ""},
		{&narrow, Identifier{Type: IdentifierIP, Value: "10.0.0.1"}, ""},
		{nil, dns("auto.a.example"), ""}, // the default tenant delegates nothing
	}
	for _, tt := range tests {
		if got := tt.tenant.delegation(tt.id); got != tt.want {
			t.Errorf("delegation(%s) = %q; want %q", tt.id.Value, got, tt.want)
		}
	}
}
