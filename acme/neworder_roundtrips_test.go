// SPDX-License-Identifier: Apache-2.0

package acme_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// TestNewOrderRoundTrips counts the store round trips of one new-order of
// n identifiers: a lookup of a reusable authorization per identifier, and
// the one write that creates the order with its new authorizations. The
// order's status comes from the authorizations already in hand, not from
// reading them back. On PostgreSQL the SQL round trips are counted on the
// wire too: the lookups and what CreateOrder itself costs, nothing more.
func TestNewOrderRoundTrips(t *testing.T) {
	onBothStores(t, newOrderRoundTrips)
}

func newOrderRoundTrips(t *testing.T, st acme.Store, wire *pgRoundTrips) {
	clock := newFakeClock()
	cs := &countingStore{st: st}
	svc := replica(t, cs, "replica-a", clock.now, &recorder{})
	// measure runs f and returns the store calls and SQL round trips it
	// made.
	measure := func(f func()) (calls, sql int64) {
		c0, s0 := cs.calls.Load(), wire.count()
		f()
		return cs.calls.Load() - c0, wire.count() - s0
	}
	for _, n := range []int{1, 5, 30} {
		for _, reuse := range []bool{false, true} {
			t.Run(fmt.Sprintf("n=%d reuse=%t", n, reuse), func(t *testing.T) {
				c := newAccount(t, st, clock.now())
				names := manyNames(n)
				if reuse {
					for _, name := range names {
						seedValidAuthz(t, st, c, clock.now(), name)
					}
				}
				order := func(names []string) *acme.Order {
					o, err := svc.NewOrder(t.Context(), c, acme.NewOrderRequest{Identifiers: dnsIdents(names...)})
					if err != nil {
						t.Fatal(err)
					}
					return o
				}
				// The warm-up prepares every statement of the shape.
				warm := order(names)
				calls, sql := measure(func() { order(names) })
				if want := int64(n + 1); calls != want {
					t.Errorf("%d store calls, want %d (n lookups and CreateOrder)", calls, want)
				}
				if wire == nil {
					t.Logf("n=%d reuse=%t: %d store calls", n, reuse, calls)
					return
				}
				// What CreateOrder costs on its own, for an order of the
				// same shape: new authorizations, or the reused ones.
				_, create := measure(func() {
					o := &acme.Order{ID: acme.OrderID("order-" + fmt.Sprint(time.Now().UnixNano())), AccountID: c.Account.ID, Status: acme.StatusPending,
						Identifiers: warm.Identifiers, Expires: clock.now().Add(time.Hour), CreatedAt: clock.now()}
					var fresh []*acme.Authorization
					for i, id := range warm.Identifiers {
						if reuse {
							o.AuthzIDs = append(o.AuthzIDs, warm.AuthzIDs[i])
							continue
						}
						a := &acme.Authorization{ID: acme.AuthzID(fmt.Sprintf("authz-%s-%d", o.ID, i)), AccountID: c.Account.ID, Identifier: id,
							Status: acme.StatusPending, Expires: clock.now().Add(time.Hour), CreatedAt: clock.now()}
						for j, typ := range []acme.ChallengeType{acme.ChallengeHTTP01, acme.ChallengeDNS01, acme.ChallengeTLSALPN01} {
							a.Challenges = append(a.Challenges, &acme.Challenge{ID: acme.ChallengeID(fmt.Sprintf("%s-%d", a.ID, j)), AuthzID: a.ID, Type: typ,
								Token: "token", Status: acme.StatusPending, UpdatedAt: clock.now()})
						}
						fresh = append(fresh, a)
						o.AuthzIDs = append(o.AuthzIDs, a.ID)
					}
					if err := st.CreateOrder(t.Context(), o, fresh); err != nil {
						t.Fatal(err)
					}
				})
				if want := int64(n) + create; sql != want {
					t.Errorf("%d SQL round trips, want %d: n lookups and CreateOrder's %d", sql, want, create)
				}
				t.Logf("n=%d reuse=%t: %d store calls, %d SQL round trips (CreateOrder alone %d)", n, reuse, calls, sql, create)
			})
		}
	}
}
