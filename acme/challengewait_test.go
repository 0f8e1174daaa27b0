// SPDX-License-Identifier: Apache-2.0

package acme_test

import (
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// TestChallengeWait: the POST of a challenge answers with the outcome of
// its validation when this process's workers finish it within
// ChallengeWait (the client needs no poll), and as processing, after the
// wait, when the validation takes longer; that validation still
// completes.
func TestChallengeWait(t *testing.T) {
	st := openSQLite(t)
	clock := newFakeClock()

	fast := replica(t, st, "fast", clock.now, &recorder{})
	start(t, fast)
	caller, authzs := seedAuthzs(t, st, clock.now(), 1)
	ch, a, err := fast.RespondChallenge(t.Context(), caller, authzs[0].Challenges[0].ID)
	if err != nil {
		t.Fatalf("RespondChallenge: %v", err)
	}
	if ch.Status != acme.StatusValid || ch.Validated.IsZero() || a.Status != acme.StatusValid {
		t.Errorf("the POST answered the challenge %s (validated %v) of a %s authorization, want both valid", ch.Status, ch.Validated, a.Status)
	}

	held := &recorder{hold: make(chan struct{}), started: make(chan string, 1)}
	slow := replica(t, st, "slow", clock.now, held)
	start(t, slow)
	caller, authzs = seedAuthzs(t, st, clock.now(), 1)
	began := time.Now()
	ch, a, err = slow.RespondChallenge(t.Context(), caller, authzs[0].Challenges[0].ID)
	if err != nil {
		t.Fatalf("RespondChallenge (slow validation): %v", err)
	}
	waited := time.Since(began)
	if ch.Status != acme.StatusProcessing || a.Status != acme.StatusPending {
		t.Errorf("the POST of a validation still running answered the challenge %s of a %s authorization, want processing and pending", ch.Status, a.Status)
	}
	if wait := slow.Config().ChallengeWait; waited < wait {
		t.Errorf("the POST answered after %s, before ChallengeWait (%s) while the validation ran", waited, wait)
	}
	close(held.hold)
	waitFor(t, "the held validation to finish", func() bool { return authzStatus(t, st, authzs[0].ID) == acme.StatusValid })
}
