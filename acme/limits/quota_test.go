// SPDX-License-Identifier: Apache-2.0

package limits_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/limits"
	"github.com/weir-pki/weir/ratelimit"
)

// newTestAdapter is an Adapter over an in-memory source on a fixed
// clock enforcing limits.
func newTestAdapter(t *testing.T, lims map[ratelimit.Name]ratelimit.Limit) *limits.Adapter {
	t.Helper()
	now := func() time.Time { return time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC) }
	cfg := ratelimit.Policy{Limits: lims, Enabled: map[ratelimit.Name]bool{}}
	for n := range lims {
		cfg.Enabled[n] = true
	}
	lim, err := ratelimit.New(cfg, ratelimit.NewMemorySource(now), now)
	if err != nil {
		t.Fatal(err)
	}
	return limits.New(limits.Config{BackendTimeout: time.Second}, lim, nil)
}

func dnsIDs(names ...string) []acme.Identifier {
	var out []acme.Identifier
	for _, n := range names {
		out = append(out, acme.Identifier{Type: acme.IdentifierDNS, Value: n})
	}
	return out
}

// subIdentifiers returns the identifiers of p's subproblems, checking
// that each names limit.
func subIdentifiers(t *testing.T, p *acme.Problem, limit string) []string {
	t.Helper()
	var out []string
	for _, sp := range p.Subproblems {
		if sp.Identifier == nil || sp.RateLimitInfo == nil || sp.Limit != limit || sp.Type != acme.ProbRateLimited {
			t.Fatalf("subproblem %+v: want a %s denial with an identifier", sp, limit)
		}
		out = append(out, sp.Identifier.Value)
	}
	slices.Sort(out)
	return out
}

// TestRateLimitedSubproblems: a denial about identifiers carries one
// subproblem per identifier it is about, with the bucket's members.
func TestRateLimitedSubproblems(t *testing.T) {
	ctx := context.Background()
	acct := &acme.Account{ID: "7", Status: acme.StatusValid}

	t.Run("failed-validation", func(t *testing.T) {
		rl := newTestAdapter(t, map[ratelimit.Name]ratelimit.Limit{
			ratelimit.FailedValidation: {Count: 1, Period: time.Hour, Burst: 1},
			ratelimit.OrderCreation:    {Count: 20, Period: time.Hour, Burst: 5},
		})
		for _, a := range []*acme.Authorization{
			{ID: "a1", AccountID: acct.ID, Identifier: dnsIDs("a.example.com")[0], Status: acme.StatusInvalid},
			{ID: "a2", AccountID: acct.ID, Identifier: dnsIDs("b.example.com")[0], Wildcard: true, Status: acme.StatusInvalid},
		} {
			rl.AuthzFinished(ctx, a)
		}
		o := &acme.Order{AccountID: acct.ID, Identifiers: dnsIDs("a.example.com", "*.b.example.com", "c.example.com", "b.example.com")}
		_, err := rl.NewOrder(ctx, acct, o, nil)
		var p *acme.Problem
		if !errors.As(err, &p) || p.RateLimitInfo == nil {
			t.Fatalf("NewOrder: %v, want a rateLimited problem with members", err)
		}
		if p.Limit != "failed-validation" || p.Remaining != 0 || p.Window != 3600 || p.FreesAt.IsZero() {
			t.Errorf("members %+v, want failed-validation, 0 left, window 3600, a freesAt", *p.RateLimitInfo)
		}
		if got, want := subIdentifiers(t, p, "failed-validation"), []string{"*.b.example.com", "a.example.com"}; !slices.Equal(got, want) {
			t.Errorf("subproblem identifiers %v, want %v (b.example.com is apart from *.b.example.com)", got, want)
		}
		for _, sp := range p.Subproblems {
			if sp.Key != string(acct.ID)+":"+sp.Identifier.Value || sp.RetryAfter <= 0 {
				t.Errorf("subproblem %s: key %q, Retry-After %v", sp.Identifier.Value, sp.Key, sp.RetryAfter)
			}
		}
	})

	t.Run("registered-domain and duplicate-certificate", func(t *testing.T) {
		rl := newTestAdapter(t, map[ratelimit.Name]ratelimit.Limit{
			ratelimit.RegisteredDomain:     {Count: 1, Period: 168 * time.Hour, Burst: 1},
			ratelimit.DuplicateCertificate: {Max: 1, Window: time.Hour},
		})
		issued := &acme.Order{ID: "o1", AccountID: acct.ID, Identifiers: dnsIDs("x.example.com", "y.example.org")}
		if _, err := rl.Finalize(ctx, acct, issued); err != nil {
			t.Fatal(err)
		}
		// The same name set again: a duplicate, and both registered
		// domains are spent.
		_, err := rl.NewOrder(ctx, acct, &acme.Order{AccountID: acct.ID, Identifiers: issued.Identifiers}, nil)
		var p *acme.Problem
		if !errors.As(err, &p) || p.RateLimitInfo == nil {
			t.Fatalf("NewOrder: %v, want a rateLimited problem with members", err)
		}
		byLimit := map[string][]string{}
		for _, sp := range p.Subproblems {
			if sp.Identifier == nil || sp.RateLimitInfo == nil {
				t.Fatalf("subproblem %+v has no identifier", sp)
			}
			byLimit[sp.Limit] = append(byLimit[sp.Limit], sp.Identifier.Value)
		}
		for limit, want := range map[string][]string{
			"duplicate-certificate": {"x.example.com", "y.example.org"},
			"registered-domain":     {"x.example.com", "y.example.org"},
		} {
			got := byLimit[limit]
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s subproblems for %v, want %v", limit, got, want)
			}
		}
		// Another name under example.com: only registered-domain refuses,
		// about that name.
		_, err = rl.NewOrder(ctx, acct, &acme.Order{AccountID: acct.ID, Identifiers: dnsIDs("z.example.com", "other.example.net")}, nil)
		if !errors.As(err, &p) || p.Limit != "registered-domain" || p.Key != "example.com" {
			t.Fatalf("NewOrder: %v, want registered-domain for example.com", err)
		}
		if got := subIdentifiers(t, p, "registered-domain"); !slices.Equal(got, []string{"z.example.com"}) {
			t.Errorf("subproblem identifiers %v, want [z.example.com]", got)
		}
	})

	t.Run("account limits have no subproblem", func(t *testing.T) {
		rl := newTestAdapter(t, map[ratelimit.Name]ratelimit.Limit{
			ratelimit.OrderCreation: {Count: 1, Period: time.Hour, Burst: 1},
		})
		o := &acme.Order{AccountID: acct.ID, Identifiers: dnsIDs("a.example.com")}
		if _, err := rl.NewOrder(ctx, acct, o, nil); err != nil {
			t.Fatal(err)
		}
		_, err := rl.NewOrder(ctx, acct, o, nil)
		var p *acme.Problem
		if !errors.As(err, &p) || p.RateLimitInfo == nil || p.Limit != "order-creation" || p.Key != string(acct.ID) {
			t.Fatalf("NewOrder: %v, want order-creation", err)
		}
		if len(p.Subproblems) != 0 {
			t.Errorf("subproblems %+v, want none", p.Subproblems)
		}
	})
}

// TestRequestEventQuota: an allowed new order notes the account bucket
// with the least left, even when an identifier's check had less.
func TestRequestEventQuota(t *testing.T) {
	ctx := context.Background()
	acct := &acme.Account{ID: "7", Status: acme.StatusValid}
	rl := newTestAdapter(t, map[ratelimit.Name]ratelimit.Limit{
		ratelimit.OrderCreation:    {Count: 20, Period: time.Hour, Burst: 5},
		ratelimit.SANBudget:        {Count: 100, Period: time.Hour, Burst: 100},
		ratelimit.FailedValidation: {Count: 2, Period: time.Hour, Burst: 2},
	})
	// One failure leaves the name's check with 0 after the next order's
	// hypothetical spend: the tightest bucket of the decision.
	rl.AuthzFinished(ctx, &acme.Authorization{ID: "a1", AccountID: acct.ID, Identifier: dnsIDs("a.example.com")[0], Status: acme.StatusInvalid})
	ev := &acme.RequestEvent{}
	o := &acme.Order{AccountID: acct.ID, Identifiers: dnsIDs("a.example.com")}
	if _, err := rl.NewOrder(acme.WithRequestEvent(ctx, ev), acct, o, nil); err != nil {
		t.Fatal(err)
	}
	q := limits.QuotaFromDecision(ev.Quota)
	if q.Limit != ratelimit.OrderCreation || q.Key != string(acct.ID) || q.Remaining != 4 || q.Capacity != 5 || q.Window != 15*time.Minute || q.Reset != 3*time.Minute || q.Denied {
		t.Errorf("quota %+v, want order-creation 4 of 5, window 15m, full again in 3m", q)
	}
}
