// SPDX-License-Identifier: Apache-2.0

package limits_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/limits"
	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/storage/sqlite"
)

// TestGroupOverrides: the account limits of an account bound with an EAB
// key take the most specific override there is: its own (account:ID),
// its key's label's (eab:LABEL), its key's tenant's (tenant:NAME), else
// the default. Keys and tenants live in a real SQLite store.
func TestGroupOverrides(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "weir.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	at := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	if err := st.CreateTenant(ctx, &acme.Tenant{Name: "team-a", AllowedNames: []string{".a.example"}, CreatedAt: at, UpdatedAt: at}); err != nil {
		t.Fatal(err)
	}
	keys := map[string]*acme.EABKey{
		"k-label":  {Label: "fast", Tenant: "team-a"}, // the label's override wins over the tenant's
		"k-tenant": {Label: "plain", Tenant: "team-a"},
		"k-own":    {Label: "fast", Tenant: "team-a"}, // the account's own wins over both
		"k-none":   {Label: "plain"},
	}
	for id, k := range keys {
		k.ID, k.HMACKey, k.CreatedAt = id, []byte("hmac-"+id), at
		if err := st.CreateEABKey(ctx, k); err != nil {
			t.Fatal(err)
		}
	}

	now := func() time.Time { return at }
	pol := ratelimit.Policy{
		Limits:  map[ratelimit.Name]ratelimit.Limit{ratelimit.OrderCreation: {Count: 20, Period: time.Hour, Burst: 2}},
		Enabled: map[ratelimit.Name]bool{ratelimit.OrderCreation: true},
		Overrides: map[string]ratelimit.Limit{
			"order-creation:eab:fast":      {Count: 60, Period: time.Hour, Burst: 6},
			"order-creation:tenant:team-a": {Count: 40, Period: time.Hour, Burst: 4},
			"order-creation:3":             {Count: 30, Period: time.Hour, Burst: 3},
		},
	}
	lim, err := ratelimit.New(pol, ratelimit.NewMemorySource(now), now)
	if err != nil {
		t.Fatal(err)
	}
	rl := limits.New(limits.Config{BackendTimeout: time.Second}, lim, nil)
	rl.SetEABKeys(st)

	tests := []struct {
		name string
		acct acme.Account
		want int
	}{
		{"no EAB key: the default", acme.Account{ID: "1"}, 2},
		{"a label with an override: the label's", acme.Account{ID: "2", EABKeyID: "k-label"}, 6},
		{"the account's own override", acme.Account{ID: "3", EABKeyID: "k-own"}, 3},
		{"a label without one: the tenant's", acme.Account{ID: "4", EABKeyID: "k-tenant"}, 4},
		{"a key of no tenant, a label without one: the default", acme.Account{ID: "5", EABKeyID: "k-none"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.acct.Status = acme.StatusValid
			got := 0
			for i := range 10 {
				o := &acme.Order{ID: acme.OrderID(fmt.Sprint(tt.acct.ID, "-", i)), AccountID: tt.acct.ID, Identifiers: dnsIDs(fmt.Sprintf("n%d.a.example", i))}
				_, err := rl.NewOrder(ctx, &tt.acct, o, nil)
				var p *acme.Problem
				if errors.As(err, &p) && p.Type == acme.ProbRateLimited {
					break
				}
				if err != nil {
					t.Fatalf("NewOrder: %v", err)
				}
				got++
			}
			if got != tt.want {
				t.Errorf("admitted %d orders in a row; want %d", got, tt.want)
			}
			q, ok, err := rl.AccountQuota(ctx, &tt.acct)
			if err != nil || !ok || q.Remaining != 0 {
				t.Errorf("AccountQuota after the denial: %+v, %v, %v; want 0 remaining under the same limit", q, ok, err)
			}
		})
	}
}

// TestValidAuthzSpendsNoPendingSlot: a new order's authorizations that
// are valid when created (a tenant's delegated zone) take no
// pending-authorizations slot; its pending ones do.
func TestValidAuthzSpendsNoPendingSlot(t *testing.T) {
	ctx := context.Background()
	rl := newTestAdapter(t, map[ratelimit.Name]ratelimit.Limit{ratelimit.PendingAuthorizations: {Max: 1}})
	acct := &acme.Account{ID: "9", Status: acme.StatusValid}
	exp := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	authz := func(id string, st acme.Status) *acme.Authorization {
		return &acme.Authorization{ID: acme.AuthzID(id), AccountID: acct.ID, Identifier: dnsIDs(id + ".a.example")[0], Status: st, Expires: exp}
	}
	o := &acme.Order{ID: "o1", AccountID: acct.ID, Identifiers: dnsIDs("v1.a.example", "v2.a.example", "p1.a.example")}
	if _, err := rl.NewOrder(ctx, acct, o, []*acme.Authorization{authz("v1", acme.StatusValid), authz("v2", acme.StatusValid), authz("p1", acme.StatusPending)}); err != nil {
		t.Fatalf("an order of two valid and one pending new authorizations under max 1: %v", err)
	}
	o2 := &acme.Order{ID: "o2", AccountID: acct.ID, Identifiers: dnsIDs("p2.a.example")}
	_, err := rl.NewOrder(ctx, acct, o2, []*acme.Authorization{authz("p2", acme.StatusPending)})
	var p *acme.Problem
	if !errors.As(err, &p) || p.Type != acme.ProbRateLimited || p.Limit != "pending-authorizations" {
		t.Fatalf("a second pending authorization under max 1: %v; want pending-authorizations rateLimited", err)
	}
}
