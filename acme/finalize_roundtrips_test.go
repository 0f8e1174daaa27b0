// SPDX-License-Identifier: Apache-2.0

package acme_test

import (
	"fmt"
	"testing"

	"github.com/weir-pki/weir/acme"
)

// TestFinalizeRoundTrips counts the store round trips of one finalize of
// an order of n identifiers, all authorized: the order, its
// authorizations in one call (GetAuthzs), the lease of its finalization
// and the write of its certificate, whatever n is. Reading the
// authorizations one at a time cost n calls, each a network round trip
// on PostgreSQL, where the SQL round trips on the wire are counted too.
func TestFinalizeRoundTrips(t *testing.T) {
	onBothStores(t, finalizeRoundTrips)
}

// finalizeStoreCalls is what one finalize asks of the store: GetOrder,
// GetAuthzs, StartFinalize, FinalizeOrder.
const finalizeStoreCalls = 4

func finalizeRoundTrips(t *testing.T, st acme.Store, wire *pgRoundTrips) {
	clock := newFakeClock()
	cs := &countingStore{st: st}
	svc := replica(t, cs, "replica-a", clock.now, &recorder{})
	sqlTrips := map[int]int64{}
	for _, n := range []int{1, 5, 30} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			c := newAccount(t, st, clock.now())
			names := manyNames(n)
			for _, name := range names {
				seedValidAuthz(t, st, c, clock.now(), name)
			}
			finalize := func() {
				o, err := svc.NewOrder(t.Context(), c, acme.NewOrderRequest{Identifiers: dnsIdents(names...)})
				if err != nil {
					t.Fatal(err)
				}
				if o.Status != acme.StatusReady {
					t.Fatalf("order %s, want ready (every name authorized)", o.Status)
				}
				c0, s0 := cs.calls.Load(), wire.count()
				if o, err = svc.Finalize(t.Context(), c, o.ID, challengeCSR(t, names...)); err != nil {
					t.Fatal(err)
				}
				if o.Status != acme.StatusValid {
					t.Fatalf("finalized order %s, want valid", o.Status)
				}
				calls := cs.calls.Load() - c0
				sqlTrips[n] = wire.count() - s0
				if calls != finalizeStoreCalls {
					t.Errorf("%d store calls for a finalize of %d identifiers, want %d, whatever n", calls, n, finalizeStoreCalls)
				}
				t.Logf("n=%d: %d store calls, %d SQL round trips", n, calls, sqlTrips[n])
			}
			finalize() // the warm-up prepares every statement of the shape
			finalize()
		})
	}
	if wire != nil && (sqlTrips[5] != sqlTrips[1] || sqlTrips[30] != sqlTrips[1]) {
		t.Errorf("SQL round trips per finalize %v by n, want the same for every n", sqlTrips)
	}
}
