package storagetest

import (
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// testAuthz checks GetAuthz: fields, challenges in creation order with
// AuthzID set, and fresh copies.
func testAuthz(t *testing.T, f *fixture) {
	acct := f.account(t)
	a := f.authz(acct.ID, "www.example.com", false, acme.StatusPending, at(24*time.Hour))
	// Creation order, not alphabetical by type or ID.
	a.Challenges[0].ID, a.Challenges[2].ID = "chall-z-first", "chall-a-last"
	f.order(t, acct.ID, []*acme.Authorization{a})

	got, err := f.s.GetAuthz(f.ctx, a.ID)
	if err != nil {
		t.Fatalf("GetAuthz: %v", err)
	}
	checkAuthz(t, "GetAuthz", got, a)

	got.Challenges[0].Status = acme.StatusInvalid
	got.Challenges = got.Challenges[:1]
	again, err := f.s.GetAuthz(f.ctx, a.ID)
	if err != nil {
		t.Fatalf("GetAuthz: %v", err)
	}
	checkAuthz(t, "GetAuthz after mutating a returned authorization", again, a)

	ip := &acme.Authorization{
		ID:         f.id("authz"),
		AccountID:  acct.ID,
		Identifier: acme.Identifier{Type: acme.IdentifierIP, Value: "2001:db8::1"},
		Status:     acme.StatusPending,
		Expires:    at(time.Hour),
		CreatedAt:  at(0),
		Challenges: []*acme.Challenge{{
			ID: f.id("chall"), Type: acme.ChallengeHTTP01, Token: "tok", Status: acme.StatusPending, UpdatedAt: at(0),
		}},
	}
	f.order(t, acct.ID, []*acme.Authorization{ip})
	got, err = f.s.GetAuthz(f.ctx, ip.ID)
	if err != nil {
		t.Fatalf("GetAuthz(ip): %v", err)
	}
	ip.Challenges[0].AuthzID = ip.ID // set by the store
	checkAuthz(t, "GetAuthz(ip)", got, ip)
}

// testFindValidAuthz checks which authorization FindValidAuthz picks.
func testFindValidAuthz(t *testing.T, f *fixture) {
	acct := f.account(t)
	other := f.account(t)
	const name = "example.com"
	ident := acme.Identifier{Type: acme.IdentifierDNS, Value: name}

	early := f.authz(acct.ID, name, false, acme.StatusValid, at(time.Hour))
	latest := f.authz(acct.ID, name, false, acme.StatusValid, at(3*time.Hour))
	middle := f.authz(acct.ID, name, false, acme.StatusValid, at(2*time.Hour))
	pending := f.authz(acct.ID, name, false, acme.StatusPending, at(10*time.Hour))
	invalid := f.authz(acct.ID, name, false, acme.StatusInvalid, at(10*time.Hour))
	wildcard := f.authz(acct.ID, name, true, acme.StatusValid, at(4*time.Hour))
	othersAuthz := f.authz(other.ID, name, false, acme.StatusValid, at(10*time.Hour))
	otherName := f.authz(acct.ID, "www."+name, false, acme.StatusValid, at(10*time.Hour))
	expired := f.authz(acct.ID, "old."+name, false, acme.StatusValid, at(-time.Hour))
	f.order(t, acct.ID, []*acme.Authorization{early, latest, middle, pending, invalid, wildcard, otherName, expired})
	f.order(t, other.ID, []*acme.Authorization{othersAuthz})

	got, err := f.s.FindValidAuthz(f.ctx, acct.ID, ident, false, at(0))
	if err != nil {
		t.Fatalf("FindValidAuthz: %v", err)
	}
	checkAuthz(t, "FindValidAuthz (latest expiry)", got, latest)

	got, err = f.s.FindValidAuthz(f.ctx, acct.ID, ident, true, at(0))
	if err != nil {
		t.Fatalf("FindValidAuthz(wildcard): %v", err)
	}
	checkAuthz(t, "FindValidAuthz(wildcard)", got, wildcard)

	// Expiry must be after notBefore.
	_, err = f.s.FindValidAuthz(f.ctx, acct.ID, ident, false, at(3*time.Hour))
	wantErr(t, "FindValidAuthz(all expire by notBefore)", err, acme.ErrNotFound)
	got, err = f.s.FindValidAuthz(f.ctx, acct.ID, ident, false, at(3*time.Hour-time.Microsecond))
	if err != nil {
		t.Fatalf("FindValidAuthz(just before latest expiry): %v", err)
	}
	if got.ID != latest.ID {
		t.Errorf("FindValidAuthz(just before latest expiry): got %s, want %s", got.ID, latest.ID)
	}

	_, err = f.s.FindValidAuthz(f.ctx, acct.ID, acme.Identifier{Type: acme.IdentifierDNS, Value: "old." + name}, false, at(0))
	wantErr(t, "FindValidAuthz(expired)", err, acme.ErrNotFound)
	_, err = f.s.FindValidAuthz(f.ctx, acct.ID, acme.Identifier{Type: acme.IdentifierIP, Value: name}, false, at(0))
	wantErr(t, "FindValidAuthz(other identifier type)", err, acme.ErrNotFound)
	_, err = f.s.FindValidAuthz(f.ctx, acct.ID, acme.Identifier{Type: acme.IdentifierDNS, Value: "unknown.example"}, false, at(0))
	wantErr(t, "FindValidAuthz(unknown name)", err, acme.ErrNotFound)

	third := f.account(t)
	_, err = f.s.FindValidAuthz(f.ctx, third.ID, ident, false, at(0))
	wantErr(t, "FindValidAuthz(account without authorizations)", err, acme.ErrNotFound)
	got, err = f.s.FindValidAuthz(f.ctx, other.ID, ident, false, at(0))
	if err != nil {
		t.Fatalf("FindValidAuthz(other account): %v", err)
	}
	if got.ID != othersAuthz.ID {
		t.Errorf("FindValidAuthz(other account): got %s, want %s", got.ID, othersAuthz.ID)
	}
}

// testAuthzUpdate checks that UpdateAuthz writes the authorization and its
// challenges together, compare-and-set on the authorization's status.
func testAuthzUpdate(t *testing.T, f *fixture) {
	acct := f.account(t)
	a := f.authz(acct.ID, "example.com", false, acme.StatusPending, at(time.Hour))
	f.order(t, acct.ID, []*acme.Authorization{a})

	a.Status = acme.StatusValid
	a.Expires = at(30 * 24 * time.Hour)
	a.Challenges[0].Status = acme.StatusInvalid
	a.Challenges[0].Error = &acme.Problem{Type: acme.ProbConnection, Detail: "connection refused", Status: 400}
	a.Challenges[0].UpdatedAt = at(time.Minute)
	a.Challenges[1].Status = acme.StatusValid
	a.Challenges[1].Validated = at(2 * time.Minute)
	a.Challenges[1].UpdatedAt = at(2 * time.Minute)
	if err := f.s.UpdateAuthz(f.ctx, a, acme.StatusPending); err != nil {
		t.Fatalf("UpdateAuthz(pending->valid): %v", err)
	}
	got, err := f.s.GetAuthz(f.ctx, a.ID)
	if err != nil {
		t.Fatalf("GetAuthz: %v", err)
	}
	checkAuthz(t, "GetAuthz after UpdateAuthz", got, a)

	stale := *got
	stale.Status = acme.StatusInvalid
	stale.Challenges = []*acme.Challenge{{}}
	*stale.Challenges[0] = *got.Challenges[2]
	stale.Challenges[0].Status = acme.StatusInvalid
	wantErr(t, "UpdateAuthz(from pending, now valid)", f.s.UpdateAuthz(f.ctx, &stale, acme.StatusPending), acme.ErrConflict)
	got, err = f.s.GetAuthz(f.ctx, a.ID)
	if err != nil {
		t.Fatalf("GetAuthz: %v", err)
	}
	checkAuthz(t, "GetAuthz after failed UpdateAuthz", got, a)

	missing := *a
	missing.ID = "no-such-authz"
	missing.Challenges = nil
	wantErr(t, "UpdateAuthz(unknown)", f.s.UpdateAuthz(f.ctx, &missing, acme.StatusValid), acme.ErrNotFound)
}

// testCountPendingAuthzs checks what CountPendingAuthzs counts.
func testCountPendingAuthzs(t *testing.T, f *fixture) {
	acct := f.account(t)
	other := f.account(t)
	f.order(t, acct.ID, []*acme.Authorization{
		f.authz(acct.ID, "a.example.com", false, acme.StatusPending, at(time.Hour)),
		f.authz(acct.ID, "b.example.com", false, acme.StatusPending, at(2*time.Hour)),
		f.authz(acct.ID, "c.example.com", true, acme.StatusPending, at(3*time.Hour)),
		f.authz(acct.ID, "expired.example.com", false, acme.StatusPending, at(-time.Hour)),
		f.authz(acct.ID, "valid.example.com", false, acme.StatusValid, at(time.Hour)),
		f.authz(acct.ID, "invalid.example.com", false, acme.StatusInvalid, at(time.Hour)),
	})
	f.order(t, other.ID, []*acme.Authorization{
		f.authz(other.ID, "a.example.com", false, acme.StatusPending, at(time.Hour)),
	})

	for _, tc := range []struct {
		name    string
		account string
		now     time.Time
		want    int
	}{
		{"now", acct.ID, at(0), 3},
		{"after the first expiry", acct.ID, at(time.Hour), 2},
		{"after all expired", acct.ID, at(3 * time.Hour), 0},
		{"other account", other.ID, at(0), 1},
	} {
		got, err := f.s.CountPendingAuthzs(f.ctx, tc.account, tc.now)
		if err != nil {
			t.Fatalf("CountPendingAuthzs(%s): %v", tc.name, err)
		}
		if got != tc.want {
			t.Errorf("CountPendingAuthzs(%s): got %d, want %d", tc.name, got, tc.want)
		}
	}
}

// testChallenges checks GetChallenge and the compare-and-set of
// UpdateChallenge.
func testChallenges(t *testing.T, f *fixture) {
	acct := f.account(t)
	a := f.authz(acct.ID, "example.com", false, acme.StatusPending, at(time.Hour))
	f.order(t, acct.ID, []*acme.Authorization{a})
	c := a.Challenges[1]

	got, err := f.s.GetChallenge(f.ctx, c.ID)
	if err != nil {
		t.Fatalf("GetChallenge: %v", err)
	}
	checkChallenge(t, "GetChallenge", got, c)

	c.Status = acme.StatusProcessing
	c.UpdatedAt = at(time.Minute)
	if err := f.s.UpdateChallenge(f.ctx, c, acme.StatusPending); err != nil {
		t.Fatalf("UpdateChallenge(pending->processing): %v", err)
	}
	wantErr(t, "UpdateChallenge(from pending, now processing)",
		f.s.UpdateChallenge(f.ctx, c, acme.StatusPending), acme.ErrConflict)

	c.Status = acme.StatusValid
	c.Validated = at(2 * time.Minute)
	c.UpdatedAt = at(2 * time.Minute)
	c.Error = &acme.Problem{Type: acme.ProbDNS, Detail: "a transient error that was overcome"}
	if err := f.s.UpdateChallenge(f.ctx, c, acme.StatusProcessing); err != nil {
		t.Fatalf("UpdateChallenge(processing->valid): %v", err)
	}
	got, err = f.s.GetChallenge(f.ctx, c.ID)
	if err != nil {
		t.Fatalf("GetChallenge: %v", err)
	}
	checkChallenge(t, "GetChallenge after UpdateChallenge", got, c)

	// The other challenges are untouched.
	authz, err := f.s.GetAuthz(f.ctx, a.ID)
	if err != nil {
		t.Fatalf("GetAuthz: %v", err)
	}
	checkAuthz(t, "GetAuthz after UpdateChallenge", authz, a)

	missing := *c
	missing.ID = "no-such-challenge"
	wantErr(t, "UpdateChallenge(unknown)", f.s.UpdateChallenge(f.ctx, &missing, acme.StatusValid), acme.ErrNotFound)
}

// testListChallenges checks which challenges ListChallenges returns.
func testListChallenges(t *testing.T, f *fixture) {
	acct := f.account(t)
	var authzs []*acme.Authorization
	for range 3 {
		authzs = append(authzs, f.authz(acct.ID, "example.com", false, acme.StatusPending, at(time.Hour)))
	}
	f.order(t, acct.ID, authzs)

	// Move five challenges to processing at different times.
	want := map[string]bool{}
	for i, c := range []*acme.Challenge{
		authzs[0].Challenges[0], authzs[0].Challenges[1], authzs[1].Challenges[2],
		authzs[2].Challenges[0], authzs[2].Challenges[1],
	} {
		c.Status = acme.StatusProcessing
		c.UpdatedAt = at(time.Duration(i) * time.Minute)
		if err := f.s.UpdateChallenge(f.ctx, c, acme.StatusPending); err != nil {
			t.Fatalf("UpdateChallenge: %v", err)
		}
		if i < 4 {
			want[c.ID] = true
		}
	}

	got, err := f.s.ListChallenges(f.ctx, acme.StatusProcessing, at(4*time.Minute), 100)
	if err != nil {
		t.Fatalf("ListChallenges: %v", err)
	}
	if len(got) != len(want) {
		t.Errorf("ListChallenges: got %d challenges, want %d", len(got), len(want))
	}
	for _, c := range got {
		if !want[c.ID] {
			t.Errorf("ListChallenges: got unexpected challenge %s (status %s, updated %v)", c.ID, c.Status, c.UpdatedAt)
		}
		if c.AuthzID == "" {
			t.Errorf("ListChallenges: challenge %s has no AuthzID", c.ID)
		}
	}

	got, err = f.s.ListChallenges(f.ctx, acme.StatusProcessing, at(4*time.Minute), 2)
	if err != nil {
		t.Fatalf("ListChallenges(limit 2): %v", err)
	}
	if len(got) != 2 {
		t.Errorf("ListChallenges(limit 2): got %d challenges, want 2", len(got))
	}
	for _, c := range got {
		if !want[c.ID] {
			t.Errorf("ListChallenges(limit 2): got unexpected challenge %s", c.ID)
		}
	}

	got, err = f.s.ListChallenges(f.ctx, acme.StatusPending, at(time.Hour), 100)
	if err != nil {
		t.Fatalf("ListChallenges(pending): %v", err)
	}
	if len(got) != 4 {
		t.Errorf("ListChallenges(pending): got %d challenges, want 4", len(got))
	}
}
