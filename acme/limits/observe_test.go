// SPDX-License-Identifier: Apache-2.0

package limits_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ratelimit"
)

// limiterEvents records the limiter events an observer is given.
type limiterEvents struct {
	acme.NopObserver
	mu  sync.Mutex
	evs []acme.LimiterEvent
}

func (o *limiterEvents) Limiter(ev acme.LimiterEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.evs = append(o.evs, ev)
}

// TestObservedRequestsAreEnforced: the observer is given the requests of
// the limits the limiter enforces, and no event for a call that asked
// about none of them.
func TestObservedRequestsAreEnforced(t *testing.T) {
	ctx := context.Background()
	acct := &acme.Account{ID: "7", Status: acme.StatusValid}
	rl := newTestAdapter(t, map[ratelimit.Name]ratelimit.Limit{
		ratelimit.OrderCreation: {Count: 20, Period: time.Hour, Burst: 5},
	})
	obs := &limiterEvents{}
	rl.SetObserver(obs)
	o := &acme.Order{AccountID: acct.ID, Identifiers: dnsIDs("a.example.com", "b.example.com")}
	if _, err := rl.NewOrder(ctx, acct, o, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := rl.Finalize(ctx, acct, o); err != nil {
		t.Fatal(err)
	}
	if len(obs.evs) != 1 {
		t.Fatalf("%d events %+v, want 1: finalize asks about no enforced limit", len(obs.evs), obs.evs)
	}
	ev := obs.evs[0]
	if ev.Action != "new-order" || len(ev.Requests) != 1 || ev.Requests[0].Name != ratelimit.OrderCreation || !ev.Decision.Allowed {
		t.Errorf("event %+v, want new-order with order-creation alone", ev)
	}
}
