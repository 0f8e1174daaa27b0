// SPDX-License-Identifier: Apache-2.0

package acme_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/limits"
	"github.com/weir-pki/weir/ratelimit"
)

// TestExplainAgreesWithNewOrder: what ExplainNewOrder predicts for a
// request is what NewOrder then answers to it: the same problem for a
// request it refuses before the limiter (the identifier cap, the profile,
// the validity window, the naming policy), a rateLimited problem when the
// limiter refuses, and an order otherwise.
func TestExplainAgreesWithNewOrder(t *testing.T) {
	now := newFakeClock().now()
	at := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339) }
	short := 30 * time.Minute
	for _, tc := range []struct {
		name string
		req  acme.NewOrderRequest
		// spent is how many orders of one name the account made before.
		spent int
		want  acme.ProblemType // "" for an order
	}{
		{name: "one name", req: acme.NewOrderRequest{Identifiers: dnsIdents("www.example.com")}},
		{name: "a wildcard and its base", req: acme.NewOrderRequest{Identifiers: dnsIdents("*.example.com", "example.com")}},
		{name: "a profile offered", req: acme.NewOrderRequest{Identifiers: dnsIdents("www.example.com"), Profile: "short", NotAfter: at(20 * time.Minute)}},
		{name: "over the identifier cap", req: acme.NewOrderRequest{Identifiers: dnsIdents(manyNames(101)...)}, want: acme.ProbRejectedIdentifier},
		{name: "a profile not offered", req: acme.NewOrderRequest{Identifiers: dnsIdents("www.example.com"), Profile: "nope"}, want: acme.ProbInvalidProfile},
		{name: "an identifier type the profile does not take", req: acme.NewOrderRequest{Identifiers: []acme.Identifier{{Type: acme.IdentifierIP, Value: "127.0.0.1"}}},
			want: acme.ProbRejectedIdentifier},
		{name: "a denied name", req: acme.NewOrderRequest{Identifiers: dnsIdents("a.example.com", "www.denied.example")}, want: acme.ProbRejectedIdentifier},
		{name: "notAfter beyond the profile's lifetime", req: acme.NewOrderRequest{Identifiers: dnsIdents("www.example.com"), Profile: "short", NotAfter: at(45 * time.Minute)},
			want: acme.ProbMalformed},
		{name: "notBefore more than an hour ago", req: acme.NewOrderRequest{Identifiers: dnsIdents("www.example.com"), NotBefore: at(-2 * time.Hour)}, want: acme.ProbMalformed},
		{name: "order-creation spent", req: acme.NewOrderRequest{Identifiers: dnsIdents("www.example.com")}, spent: 2, want: acme.ProbRateLimited},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := openSQLite(t)
			clock := newFakeClock()
			profiles, err := acme.NewProfiles("default", map[string]acme.ProfileConfig{
				"default": {IdentifierTypes: []acme.IdentifierType{acme.IdentifierDNS}},
				"short":   {CertificateLifetime: &short},
			}, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			p, err := acme.NewPolicy(acme.PolicyConfig{DeniedDomains: []string{"denied.example"}, AllowedIPRanges: []string{"127.0.0.0/8"}})
			if err != nil {
				t.Fatal(err)
			}
			cfg := ratelimit.Policy{
				Limits:  map[ratelimit.Name]ratelimit.Limit{ratelimit.OrderCreation: {Count: 1, Period: time.Hour, Burst: 2}},
				Enabled: map[ratelimit.Name]bool{ratelimit.OrderCreation: true},
			}
			lim, err := ratelimit.New(cfg, ratelimit.NewMemorySource(clock.now), clock.now)
			if err != nil {
				t.Fatal(err)
			}
			svc := limitedReplica(t, st, "replica-a", clock.now, &recorder{}, limits.New(limits.Config{}, lim, nil))
			svc.SetLive(acme.Live{Policy: p, Profiles: profiles})
			c := newAccount(t, st, clock.now())
			for i := range tc.spent {
				if _, err := svc.NewOrder(t.Context(), c, acme.NewOrderRequest{Identifiers: dnsIdents(fmt.Sprintf("before-%d.example.com", i))}); err != nil {
					t.Fatal(err)
				}
			}

			ex, err := svc.ExplainNewOrder(t.Context(), c.Account.ID, tc.req)
			if err != nil {
				t.Fatalf("ExplainNewOrder: %v", err)
			}
			predicted := acme.ProblemType("")
			switch {
			case ex.Problem != nil:
				predicted = ex.Problem.Type
			case !ex.Decision.Allowed:
				predicted = acme.ProbRateLimited
			}
			_, err = svc.NewOrder(t.Context(), c, tc.req)
			got := acme.ProblemType("")
			if err != nil {
				p := acme.AsProblem(err)
				if p == nil {
					t.Fatalf("NewOrder: %v, not a problem", err)
				}
				got = p.Type
				if ex.Problem != nil && p.Detail != ex.Problem.Detail {
					t.Errorf("NewOrder says %q, explain %q", p.Detail, ex.Problem.Detail)
				}
			}
			if predicted != got || got != tc.want {
				t.Errorf("explain predicts %q, new-order answers %q; want %q", predicted, got, tc.want)
			}
		})
	}
}
