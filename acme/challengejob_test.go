// SPDX-License-Identifier: Apache-2.0

package acme_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// TestFullQueueFreesChallenge: a challenge POSTed while this replica's
// validation queue is full is processing with no lease, so the next claim
// of any replica takes it at once (lease.go); the one queued before it
// stays this replica's.
func TestFullQueueFreesChallenge(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(*testing.T) acme.Store) {
		st := open(t)
		clock := newFakeClock()
		svc := newService(t, acme.Config{Owner: "a", ValidationWorkers: 1, ValidationQueue: 1, ValidationTimeout: 10 * time.Second},
			acme.Deps{Store: st, Validator: &recorder{}, Now: clock.now})
		caller, authzs := seedAuthzs(t, st, clock.now(), 2)
		for i, a := range authzs {
			ch, _, err := svc.RespondChallenge(t.Context(), caller, a.Challenges[0].ID)
			if err != nil || ch.Status != acme.StatusProcessing {
				t.Fatalf("RespondChallenge %d: %v, %v; want processing", i, ch, err)
			}
		}
		claimed, err := st.ClaimChallenges(t.Context(), "b", clock.now(), time.Minute, 10)
		if err != nil {
			t.Fatal(err)
		}
		var got []acme.ChallengeID
		for _, c := range claimed {
			got = append(got, c.ID)
		}
		if want := []acme.ChallengeID{authzs[1].Challenges[0].ID}; !slices.Equal(got, want) {
			t.Errorf("another replica's claim took %v, want only the challenge that found the queue full, %v", got, want)
		}
	})
}

// TestValidationClosesSettledChallenge: a queued validation whose
// authorization was deactivated meanwhile is not run; the worker makes
// the challenge invalid, saying why, and leaves the authorization as it
// is (RFC 8555 §7.5.2).
func TestValidationClosesSettledChallenge(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(*testing.T) acme.Store) {
		st := open(t)
		clock := newFakeClock()
		rec := &recorder{}
		svc := replica(t, st, "a", clock.now, rec)
		caller, authzs := seedAuthzs(t, st, clock.now(), 1)
		a := authzs[0]
		if _, _, err := svc.RespondChallenge(t.Context(), caller, a.Challenges[0].ID); err != nil {
			t.Fatalf("RespondChallenge: %v", err)
		}
		if _, err := svc.DeactivateAuthz(t.Context(), caller, a.ID); err != nil {
			t.Fatalf("DeactivateAuthz: %v", err)
		}
		start(t, svc)
		var ch *acme.Challenge
		waitFor(t, "the worker to close the challenge", func() bool {
			var err error
			if ch, err = st.GetChallenge(t.Context(), a.Challenges[0].ID); err != nil {
				t.Fatal(err)
			}
			return ch.Status != acme.StatusProcessing
		})
		if ch.Status != acme.StatusInvalid || ch.Error == nil || ch.Error.Type != acme.ProbUnauthorized ||
			!strings.Contains(ch.Error.Detail, "deactivated") || ch.Error.Identifier == nil || *ch.Error.Identifier != a.Identifier {
			t.Errorf("challenge %s with error %+v; want invalid, unauthorized, naming the deactivation and %v", ch.Status, ch.Error, a.Identifier)
		}
		if s := authzStatus(t, st, a.ID); s != acme.StatusDeactivated {
			t.Errorf("authorization %s after the worker closed its challenge, want deactivated", s)
		}
		if seen := rec.seen(); len(seen) != 0 {
			t.Errorf("the validator ran for %v, want no validation of a settled authorization", seen)
		}
	})
}
