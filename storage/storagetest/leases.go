// SPDX-License-Identifier: Apache-2.0

package storagetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// testLeases runs the lease checks on one store: those of validation
// jobs, of finalizations and of background work.
func testLeases(t *testing.T, f *fixture) {
	t.Run("TryLease", func(t *testing.T) { testTryLease(t, f) })
	t.Run("StartChallenge", func(t *testing.T) { testStartChallenge(t, f) })
	t.Run("ClaimChallenges", func(t *testing.T) { testClaimChallenges(t, f) })
	t.Run("ClaimConcurrent", func(t *testing.T) { testClaimConcurrent(t, f) })
	t.Run("FinalizeLeases", func(t *testing.T) { testFinalizeLeases(t, f) })
}

// isConflict reports whether err wraps acme.ErrConflict.
func isConflict(err error) bool { return errors.Is(err, acme.ErrConflict) }

// processing stores an order of a new account with authorizations for n
// names and moves the first challenge of each to processing, updated at
// at(i minutes) for the i-th; it returns those challenges, as stored.
func (f *fixture) processing(t *testing.T, n int) []*acme.Challenge {
	t.Helper()
	acct := f.account(t)
	var authzs []*acme.Authorization
	for i := range n {
		authzs = append(authzs, f.authz(acct.ID, fmt.Sprintf("n%d.example.com", i), false, acme.StatusPending, at(24*time.Hour)))
	}
	f.order(t, acct.ID, authzs)
	var out []*acme.Challenge
	for i, a := range authzs {
		c := a.Challenges[0]
		c.Status, c.UpdatedAt = acme.StatusProcessing, at(time.Duration(i)*time.Minute)
		// Processing with its lease free, as a full queue leaves it.
		if err := f.s.StartChallenge(f.ctx, c.ID, "starter", c.UpdatedAt, time.Minute); err != nil {
			t.Fatalf("StartChallenge(%s): %v", c.ID, err)
		}
		if err := f.s.ReleaseChallenge(f.ctx, c.ID, "starter"); err != nil {
			t.Fatalf("ReleaseChallenge(%s): %v", c.ID, err)
		}
		out = append(out, c)
	}
	return out
}

// claim calls ClaimChallenges and returns the IDs it claimed.
func (f *fixture) claim(t *testing.T, owner string, now time.Time, lease time.Duration, limit int) []acme.ChallengeID {
	t.Helper()
	cs, err := f.s.ClaimChallenges(f.ctx, owner, now, lease, limit)
	if err != nil {
		t.Fatalf("ClaimChallenges(%s, %v): %v", owner, now, err)
	}
	ids := make([]acme.ChallengeID, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	return ids
}

// ids returns the IDs of cs.
func ids(cs ...*acme.Challenge) []acme.ChallengeID {
	out := make([]acme.ChallengeID, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

// testStartChallenge: the POST of a challenge moves it from pending to
// processing and leases it to the replica that took it, in one
// compare-and-set; nobody else claims it while the lease lives, and
// anybody may once it has ended.
func testStartChallenge(t *testing.T, f *fixture) {
	acct := f.account(t)
	a := f.authz(acct.ID, "start.example.com", false, acme.StatusPending, at(time.Hour))
	f.order(t, acct.ID, []*acme.Authorization{a})
	c := a.Challenges[1]
	t0 := at(3 * time.Hour) // after the tests before (one store): no other lease lives then
	const lease = time.Minute

	if err := f.s.StartChallenge(f.ctx, c.ID, "a", t0, lease); err != nil {
		t.Fatalf("StartChallenge: %v", err)
	}
	c.Status, c.UpdatedAt = acme.StatusProcessing, t0
	got, err := f.s.GetChallenge(f.ctx, c.ID)
	if err != nil {
		t.Fatalf("GetChallenge: %v", err)
	}
	checkChallenge(t, "GetChallenge after StartChallenge", got, c)
	wantErr(t, "StartChallenge(again)", f.s.StartChallenge(f.ctx, c.ID, "b", t0, lease), acme.ErrConflict)
	wantErr(t, "StartChallenge(unknown)", f.s.StartChallenge(f.ctx, "no-such-challenge", "b", t0, lease), acme.ErrNotFound)
	wantErr(t, "ClaimChallenge(b, a's live lease)", f.s.ClaimChallenge(f.ctx, c.ID, "b", t0.Add(59*time.Second), lease), acme.ErrConflict)
	if got := f.claim(t, "b", t0.Add(59*time.Second), lease, 10); slices.Contains(got, c.ID) {
		t.Errorf("ClaimChallenges(b) while a's lease lives: got %v, which holds %s", got, c.ID)
	}
	if got := f.claim(t, "b", t0.Add(lease), lease, 10); !slices.Contains(got, c.ID) {
		t.Errorf("ClaimChallenges(b) when a's lease ended: got %v, want %s among them", got, c.ID)
	}
	authz, err := f.s.GetAuthz(f.ctx, a.ID)
	if err != nil {
		t.Fatalf("GetAuthz: %v", err)
	}
	checkAuthz(t, "GetAuthz after StartChallenge", authz, a)
	// Leave nothing claimable for the tests after.
	c.Status, c.UpdatedAt = acme.StatusInvalid, t0.Add(lease)
	f.settle(t, c)
}

// testClaimChallenges checks the leases of validation jobs: a claim takes
// processing challenges whose lease is free or ended, oldest first, and
// returns them whole; a live lease is nobody else's to take (nor its
// holder's to take twice) until it ends or is released; the claim of one
// challenge renews its holder's lease and refuses anyone else's; pending
// and settled challenges are never claimed.
func testClaimChallenges(t *testing.T, f *fixture) {
	cs := f.processing(t, 3)
	const lease = time.Minute
	t0 := at(10 * time.Minute)

	got, err := f.s.ClaimChallenges(f.ctx, "a", t0, lease, 2)
	if err != nil {
		t.Fatalf("ClaimChallenges: %v", err)
	}
	if len(got) != 2 {
		t.Fatalf("ClaimChallenges(limit 2): got %v, want %v", ids(got...), ids(cs[:2]...))
	}
	for i, c := range got {
		checkChallenge(t, fmt.Sprintf("ClaimChallenges: challenge %d", i), c, cs[i])
	}
	if got := f.claim(t, "b", t0.Add(30*time.Second), lease, 10); !slices.Equal(got, ids(cs[2])) {
		t.Errorf("ClaimChallenges(b) while a's leases are live: got %v, want only the free %v", got, ids(cs[2]))
	}
	if got := f.claim(t, "a", t0.Add(30*time.Second), lease, 10); len(got) != 0 {
		t.Errorf("ClaimChallenges(a) again while every lease is live: got %v, want none", got)
	}

	// The claim of one: a renewal by the holder, a conflict for others.
	wantErr(t, "ClaimChallenge(b, a's live lease)", f.s.ClaimChallenge(f.ctx, cs[0].ID, "b", t0.Add(30*time.Second), lease), acme.ErrConflict)
	if err := f.s.ClaimChallenge(f.ctx, cs[0].ID, "a", t0.Add(30*time.Second), lease); err != nil {
		t.Fatalf("ClaimChallenge(a renews): %v", err)
	}
	// At t0+lease a's unrenewed lease of cs[1] has ended (a lease is live
	// while now is before its end); the renewed one of cs[0] has not.
	if got := f.claim(t, "b", t0.Add(lease), lease, 10); !slices.Equal(got, ids(cs[1])) {
		t.Errorf("ClaimChallenges(b) when a's lease of %s ended: got %v, want %v", cs[1].ID, got, ids(cs[1]))
	}
	wantErr(t, "ClaimChallenge(a, its lease taken over)", f.s.ClaimChallenge(f.ctx, cs[1].ID, "a", t0.Add(lease), lease), acme.ErrConflict)
	if err := f.s.ClaimChallenge(f.ctx, cs[0].ID, "c", t0.Add(90*time.Second), lease); err != nil {
		t.Errorf("ClaimChallenge(c) when a's renewed lease ended: %v", err)
	}

	// Release: only the holder's frees it, and then anyone may claim it.
	if err := f.s.ReleaseChallenge(f.ctx, cs[1].ID, "a"); err != nil {
		t.Fatalf("ReleaseChallenge(not the holder): %v", err)
	}
	wantErr(t, "ClaimChallenge(a) after a release by a non-holder", f.s.ClaimChallenge(f.ctx, cs[1].ID, "a", t0.Add(lease), lease), acme.ErrConflict)
	if err := f.s.ReleaseChallenge(f.ctx, cs[1].ID, "b"); err != nil {
		t.Fatalf("ReleaseChallenge(holder): %v", err)
	}
	if got := f.claim(t, "a", t0.Add(lease), lease, 10); !slices.Equal(got, ids(cs[1])) {
		t.Errorf("ClaimChallenges(a) after b released %s: got %v, want it", cs[1].ID, got)
	}

	// A lease changes nothing a reader sees.
	for _, c := range cs {
		got, err := f.s.GetChallenge(f.ctx, c.ID)
		if err != nil {
			t.Fatalf("GetChallenge: %v", err)
		}
		checkChallenge(t, "GetChallenge of a leased challenge", got, c)
	}

	// Settled challenges are not jobs, whatever their lease.
	cs[2].Status, cs[2].Validated, cs[2].UpdatedAt = acme.StatusValid, at(time.Hour), at(time.Hour)
	f.settle(t, cs[2])
	if got := f.claim(t, "d", t0.Add(time.Hour), lease, 10); !slices.Equal(got, ids(cs[0], cs[1])) {
		t.Errorf("ClaimChallenges when every lease ended: got %v, want the processing %v", got, ids(cs[0], cs[1]))
	}
	wantErr(t, "ClaimChallenge(valid)", f.s.ClaimChallenge(f.ctx, cs[2].ID, "d", t0.Add(2*time.Hour), lease), acme.ErrConflict)
	acct := f.account(t)
	pending := f.authz(acct.ID, "pending.example.com", false, acme.StatusPending, at(time.Hour))
	f.order(t, acct.ID, []*acme.Authorization{pending})
	wantErr(t, "ClaimChallenge(pending)", f.s.ClaimChallenge(f.ctx, pending.Challenges[0].ID, "d", t0, lease), acme.ErrConflict)
	wantErr(t, "ClaimChallenge(unknown)", f.s.ClaimChallenge(f.ctx, "no-such-challenge", "d", t0, lease), acme.ErrNotFound)
	if err := f.s.ReleaseChallenge(f.ctx, "no-such-challenge", "d"); err != nil {
		t.Errorf("ReleaseChallenge(unknown): %v", err)
	}

	// Arguments that make no lease.
	if _, err := f.s.ClaimChallenges(f.ctx, "", t0, lease, 1); err == nil {
		t.Error("ClaimChallenges(empty owner) succeeded")
	}
	if _, err := f.s.ClaimChallenges(f.ctx, "a", t0, 0, 1); err == nil {
		t.Error("ClaimChallenges(zero lease) succeeded")
	}
	if _, err := f.s.ClaimChallenges(f.ctx, "a", t0, lease, 0); err == nil {
		t.Error("ClaimChallenges(limit 0) succeeded")
	}
}

// testClaimConcurrent: owners claiming at once, on any connections, never
// get the same challenge; together they get each of this test's exactly
// once (the store may hold others, leased by the tests before). Of owners
// claiming one challenge at once, exactly one gets it.
func testClaimConcurrent(t *testing.T, f *fixture) {
	const jobs, owners = 40, 8
	cs := f.processing(t, jobs)
	now := at(time.Hour)
	var (
		mu      sync.Mutex
		claimed = map[acme.ChallengeID][]string{} // challenge -> owners
		wg      sync.WaitGroup
	)
	for o := range owners {
		owner := fmt.Sprintf("owner-%d", o)
		wg.Go(func() {
			for range jobs { // bounded: each round claims one at least, or stops
				got, err := f.s.ClaimChallenges(f.ctx, owner, now, time.Minute, 3)
				if err != nil {
					t.Errorf("ClaimChallenges(%s): %v", owner, err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, c := range got {
					claimed[c.ID] = append(claimed[c.ID], owner)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, c := range cs {
		if got := claimed[c.ID]; len(got) != 1 {
			t.Errorf("challenge %s was claimed by %v, want exactly one owner", c.ID, got)
		}
	}

	// One challenge whose lease ended, claimed by every owner at once.
	later := now.Add(time.Hour)
	var wins sync.Map
	for o := range owners {
		owner := fmt.Sprintf("late-%d", o)
		wg.Go(func() {
			switch err := f.s.ClaimChallenge(f.ctx, cs[0].ID, owner, later, time.Minute); {
			case err == nil:
				wins.Store(owner, true)
			case !isConflict(err):
				t.Errorf("ClaimChallenge(%s): %v", owner, err)
			}
		})
	}
	wg.Wait()
	n := 0
	wins.Range(func(any, any) bool { n++; return true })
	if n != 1 {
		t.Errorf("%d of %d concurrent ClaimChallenge calls won, want exactly 1", n, owners)
	}
}

// testTryLease checks the named leases of background work: free, it is
// taken; live, it is its holder's to renew and nobody else's; ended, it is
// anyone's; released by its holder, it is free at once; names are
// independent; of owners trying at once, exactly one gets it.
func testTryLease(t *testing.T, f *fixture) {
	const ttl = time.Minute
	t0 := at(0)
	try := func(name, owner string, now time.Time, want bool) {
		t.Helper()
		got, err := f.s.TryLease(f.ctx, name, owner, now, ttl)
		if err != nil {
			t.Fatalf("TryLease(%s, %s, %v): %v", name, owner, now.Sub(t0), err)
		}
		if got != want {
			t.Errorf("TryLease(%s, %s, t0+%v) = %v, want %v", name, owner, now.Sub(t0), got, want)
		}
	}
	try("crl", "a", t0, true)
	try("crl", "b", t0.Add(30*time.Second), false)
	try("sweep", "b", t0.Add(30*time.Second), true) // another name
	try("crl", "a", t0.Add(30*time.Second), true)   // renewed until t0+90s
	try("crl", "b", t0.Add(time.Minute), false)
	try("crl", "b", t0.Add(90*time.Second), true) // ended: taken over
	try("crl", "a", t0.Add(100*time.Second), false)

	if err := f.s.ReleaseLease(f.ctx, "crl", "a"); err != nil {
		t.Fatalf("ReleaseLease(not the holder): %v", err)
	}
	try("crl", "a", t0.Add(100*time.Second), false)
	if err := f.s.ReleaseLease(f.ctx, "crl", "b"); err != nil {
		t.Fatalf("ReleaseLease(holder): %v", err)
	}
	try("crl", "a", t0.Add(100*time.Second), true)
	if err := f.s.ReleaseLease(f.ctx, "never-taken", "a"); err != nil {
		t.Errorf("ReleaseLease(unknown): %v", err)
	}
	if _, err := f.s.TryLease(f.ctx, "crl", "", t0, ttl); err == nil {
		t.Error("TryLease(empty owner) succeeded")
	}
	if _, err := f.s.TryLease(f.ctx, "crl", "a", t0, 0); err == nil {
		t.Error("TryLease(zero ttl) succeeded")
	}

	const owners = 8
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		wins []string
	)
	for o := range owners {
		owner := fmt.Sprintf("owner-%d", o)
		wg.Go(func() {
			ok, err := f.s.TryLease(f.ctx, "race", owner, t0, ttl)
			if err != nil {
				t.Errorf("TryLease(%s): %v", owner, err)
				return
			}
			if ok {
				mu.Lock()
				wins = append(wins, owner)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(wins) != 1 {
		t.Errorf("concurrent TryLease: %v won, want exactly one owner", wins)
	}
}

// claimOrders calls ClaimOrders and returns the IDs it claimed among
// mine, in the order returned.
func (f *fixture) claimOrders(t *testing.T, owner string, now time.Time, lease time.Duration, mine []*acme.Order) []acme.OrderID {
	t.Helper()
	os, err := f.s.ClaimOrders(f.ctx, owner, now, lease, 1000)
	if err != nil {
		t.Fatalf("ClaimOrders(%s, %v): %v", owner, now, err)
	}
	var out []acme.OrderID
	for _, o := range os {
		if slices.ContainsFunc(mine, func(m *acme.Order) bool { return m.ID == o.ID }) {
			out = append(out, o.ID)
		}
	}
	return out
}

// orderIDs returns the IDs of os.
func orderIDs(os ...*acme.Order) []acme.OrderID {
	out := make([]acme.OrderID, len(os))
	for i, o := range os {
		out[i] = o.ID
	}
	return out
}

// testFinalizeLeases checks the leases of finalizations: StartFinalize
// moves a pending order to processing with its CSR, leased, in one
// compare-and-set; nobody claims it while the lease lives, and one
// claimer takes it, CSR included, once the lease has ended; a claim of
// several returns them oldest first; concurrent claims never take one
// order twice; an order that left processing (valid or invalid) is never
// claimed again.
func testFinalizeLeases(t *testing.T, f *fixture) {
	acct := f.account(t)
	t0 := at(5 * time.Hour) // after the other lease tests: none of their leases lives then
	const lease = time.Minute
	start := func(o *acme.Order, owner string, now time.Time) {
		t.Helper()
		csr := []byte("CSR of " + o.ID)
		if err := f.s.StartFinalize(f.ctx, o.ID, owner, csr, now, lease); err != nil {
			t.Fatalf("StartFinalize(%s): %v", o.ID, err)
		}
		o.Status, o.CSR = acme.StatusProcessing, csr
	}

	o := f.simpleOrder(t, acct.ID, "finalize.example.com")
	start(o, "a", t0)
	got, err := f.s.GetOrder(f.ctx, o.ID)
	if err != nil {
		t.Fatalf("GetOrder: %v", err)
	}
	checkOrder(t, "GetOrder after StartFinalize", got, o)
	if string(got.CSR) != string(o.CSR) {
		t.Errorf("GetOrder after StartFinalize: CSR %q, want %q", got.CSR, o.CSR)
	}
	wantErr(t, "StartFinalize(again)", f.s.StartFinalize(f.ctx, o.ID, "b", []byte("other"), t0, lease), acme.ErrConflict)
	wantErr(t, "StartFinalize(unknown)", f.s.StartFinalize(f.ctx, "no-such-order", "b", []byte("csr"), t0, lease), acme.ErrNotFound)
	other := f.simpleOrder(t, acct.ID, "other.example.com")
	for name, call := range map[string]func() error{
		"empty CSR":   func() error { return f.s.StartFinalize(f.ctx, other.ID, "b", nil, t0, lease) },
		"empty owner": func() error { return f.s.StartFinalize(f.ctx, other.ID, "", []byte("csr"), t0, lease) },
		"zero lease":  func() error { return f.s.StartFinalize(f.ctx, other.ID, "b", []byte("csr"), t0, 0) },
	} {
		if err := call(); err == nil {
			t.Errorf("StartFinalize(%s) succeeded", name)
		}
	}
	if got, err := f.s.GetOrder(f.ctx, other.ID); err != nil || got.Status != acme.StatusPending || got.CSR != nil {
		t.Errorf("order after refused StartFinalize calls: %+v, %v; want pending without CSR", got, err)
	}

	mine := []*acme.Order{o}
	if got := f.claimOrders(t, "b", t0.Add(59*time.Second), lease, mine); len(got) != 0 {
		t.Errorf("ClaimOrders(b) while a's lease lives: claimed %v", got)
	}
	claimed, err := f.s.ClaimOrders(f.ctx, "b", t0.Add(lease), lease, 1000)
	if err != nil {
		t.Fatalf("ClaimOrders(b) when a's lease ended: %v", err)
	}
	i := slices.IndexFunc(claimed, func(c *acme.Order) bool { return c.ID == o.ID })
	if i < 0 {
		t.Fatalf("ClaimOrders(b) when a's lease ended: got %v, want %s among them", orderIDs(claimed...), o.ID)
	}
	checkOrder(t, "ClaimOrders", claimed[i], o)
	if string(claimed[i].CSR) != string(o.CSR) {
		t.Errorf("ClaimOrders: CSR %q, want %q", claimed[i].CSR, o.CSR)
	}
	if got := f.claimOrders(t, "c", t0.Add(lease+time.Second), lease, mine); len(got) != 0 {
		t.Errorf("ClaimOrders(c) while b's lease lives: claimed %v", got)
	}

	// Settled orders are never claimed again.
	if err := f.s.FinalizeOrder(f.ctx, f.cert(o, "0f1a2b3c4d5e6f70", at(90*24*time.Hour))); err != nil {
		t.Fatalf("FinalizeOrder of a claimed order: %v", err)
	}
	failed := f.simpleOrder(t, acct.ID, "failed.example.com")
	start(failed, "a", t0)
	failed.Status, failed.Error = acme.StatusInvalid, acme.NewProblem(acme.ProbServerInternal, "issuance failed")
	if err := f.s.UpdateOrder(f.ctx, failed, acme.StatusProcessing); err != nil {
		t.Fatalf("UpdateOrder(processing->invalid): %v", err)
	}
	if got := f.claimOrders(t, "d", t0.Add(24*time.Hour), lease, []*acme.Order{o, failed}); len(got) != 0 {
		t.Errorf("ClaimOrders claimed settled orders %v", got)
	}

	// Oldest first, and concurrent claimers take each order once.
	var batch []*acme.Order
	for i := range 6 {
		b := f.simpleOrder(t, acct.ID, fmt.Sprintf("batch%d.example.com", i))
		start(b, "a", t0)
		batch = append(batch, b)
	}
	t1 := t0.Add(2 * time.Hour)
	if got := f.claimOrders(t, "x", t1, lease, batch[:3]); !slices.Equal(got, orderIDs(batch[:3]...)) {
		t.Errorf("ClaimOrders(x): claimed %v of the first three, want %v (oldest first)", got, orderIDs(batch[:3]...))
	}
	t2 := t1.Add(lease)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		taken = map[acme.OrderID]string{}
	)
	for c := range 8 {
		owner := fmt.Sprintf("claimer-%d", c)
		wg.Go(func() {
			os, err := f.s.ClaimOrders(f.ctx, owner, t2, lease, 1000)
			if err != nil {
				t.Errorf("ClaimOrders(%s): %v", owner, err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, o := range os {
				if prev, ok := taken[o.ID]; ok {
					t.Errorf("order %s claimed by %s and %s at once", o.ID, prev, owner)
				}
				taken[o.ID] = owner
			}
		})
	}
	wg.Wait()
	for _, b := range batch {
		if _, ok := taken[b.ID]; !ok {
			t.Errorf("no concurrent claimer took order %s, whose lease had ended", b.ID)
		}
	}
	// Leave nothing claimable for the tests after.
	for _, b := range batch {
		b.Status, b.Error = acme.StatusInvalid, acme.NewProblem(acme.ProbServerInternal, "test")
		if err := f.s.UpdateOrder(f.ctx, b, acme.StatusProcessing); err != nil {
			t.Fatalf("UpdateOrder(%s, processing->invalid): %v", b.ID, err)
		}
	}
}
