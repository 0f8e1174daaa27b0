// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"strings"
	"testing"
	"time"
)

// TestTenantCheck checks the name patterns: exact names and zones,
// denied over allowed, wildcards only under zones and only when permitted,
// IP ranges, and that each refusal names the tenant and the rule.
func TestTenantCheck(t *testing.T) {
	raw := Tenant{
		Name:            "team-a",
		AllowedNames:    []string{".A.example.", "host.b.example"},
		DeniedNames:     []string{".secret.a.example", "db.a.example"},
		Wildcards:       true,
		AllowedIPRanges: []string{"10.1.0.0/16"},
	}
	tn, err := raw.Validate([]ChallengeType{ChallengeHTTP01, ChallengeDNS01})
	if err != nil {
		t.Fatalf("Validate: %v", err)
	}
	noWild := tn
	noWild.Wildcards = false
	dns := func(v string) Identifier { return Identifier{Type: IdentifierDNS, Value: v} }
	ip := func(v string) Identifier { return Identifier{Type: IdentifierIP, Value: v} }
	tests := []struct {
		tenant *Tenant
		id     Identifier
		want   string // "" admits; else a part of the detail
	}{
		{&tn, dns("a.example"), ""},
		{&tn, dns("www.a.example"), ""},
		{&tn, dns("host.b.example"), ""},
		{&tn, dns("other.b.example"), `tenant "team-a" forbids "other.b.example": it matches none of the tenant's allowed-names`},
		{&tn, dns("b.example"), "matches none"},
		{&tn, dns("x.secret.a.example"), `denied-names has ".secret.a.example"`},
		{&tn, dns("secret.a.example"), `denied-names has ".secret.a.example"`},
		{&tn, dns("db.a.example"), `denied-names has "db.a.example"`},
		{&tn, dns("x.db.a.example"), ""}, // an exact denial is that name only
		{&tn, dns("*.x.a.example"), ""},
		{&tn, dns("*.a.example"), `the wildcard covers ".secret.a.example" of denied-names`},
		{&tn, dns("*.b.example"), "matches none"}, // an exact name never admits a wildcard
		{&noWild, dns("*.x.a.example"), "does not permit wildcards"},
		{&tn, ip("10.1.2.3"), ""},
		{&tn, ip("10.2.0.1"), "allowed-ip-ranges"},
	}
	for _, tt := range tests {
		p, _ := tt.tenant.check(tt.id)
		switch {
		case tt.want == "" && p != nil:
			t.Errorf("%s: refused: %s", tt.id.Value, p.Detail)
		case tt.want != "" && p == nil:
			t.Errorf("%s: admitted, want a refusal with %q", tt.id.Value, tt.want)
		case tt.want != "" && (!strings.Contains(p.Detail, tt.want) || p.Type != ProbRejectedIdentifier):
			t.Errorf("%s: %s %q, want rejectedIdentifier with %q", tt.id.Value, p.Type, p.Detail, tt.want)
		}
	}
}

// TestTenantValidate checks that every malformed field is reported at
// once, naming the field and the entry, and that patterns come back
// canonical.
func TestTenantValidate(t *testing.T) {
	bad := Tenant{
		Name:            "team a",
		AllowedNames:    []string{"*.a.example", "ok.example", "bad..name"},
		DeniedNames:     []string{"."},
		AllowedIPRanges: []string{"10.0.0.0/33"},
		Profiles:        []string{"no spaces"},
		ChallengeTypes:  []ChallengeType{"tls-alpn-01"},
		MaxLifetime:     -time.Hour,
	}
	_, err := bad.Validate([]ChallengeType{ChallengeHTTP01})
	if err == nil {
		t.Fatal("Validate: no error")
	}
	for _, want := range []string{"tenant name", "allowed-names[0]", "allowed-names[2]", "denied-names[0]",
		"allowed-ip-ranges[0]", "profiles[0]", `challenge-types[0]: "tls-alpn-01" is not a challenge type this server offers (http-01)`, "max-lifetime"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not mention %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "allowed-names[1]") {
		t.Errorf("a good entry was reported: %v", err)
	}
	good, err := Tenant{Name: "t", AllowedNames: []string{"B.example.", ".a.example", "b.example"}, AllowedIPRanges: []string{"10.0.0.1"}}.Validate(nil)
	if err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if got := strings.Join(good.AllowedNames, " "); got != ".a.example b.example" {
		t.Errorf("AllowedNames: got %q, want canonical, sorted, deduplicated", got)
	}
	if got := strings.Join(good.AllowedIPRanges, " "); got != "10.0.0.1/32" {
		t.Errorf("AllowedIPRanges: got %q", got)
	}
}
