// SPDX-License-Identifier: Apache-2.0

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
		ID:         acme.AuthzID(f.id("authz")),
		AccountID:  acct.ID,
		Identifier: acme.Identifier{Type: acme.IdentifierIP, Value: "2001:db8::1"},
		Status:     acme.StatusPending,
		Expires:    at(time.Hour),
		CreatedAt:  at(0),
		Challenges: []*acme.Challenge{{
			ID: acme.ChallengeID(f.id("chall")), Type: acme.ChallengeHTTP01, Token: "tok", Status: acme.StatusPending, UpdatedAt: at(0),
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

	// An update that lists only the challenge that changed leaves the
	// others as they are.
	b := f.authz(acct.ID, "b.example.com", false, acme.StatusPending, at(time.Hour))
	f.order(t, acct.ID, []*acme.Authorization{b})
	b.Status = acme.StatusValid
	b.Challenges[2].Status, b.Challenges[2].Validated, b.Challenges[2].UpdatedAt = acme.StatusValid, at(3*time.Minute), at(3*time.Minute)
	only := *b
	only.Challenges = []*acme.Challenge{b.Challenges[2]}
	if err := f.s.UpdateAuthz(f.ctx, &only, acme.StatusPending); err != nil {
		t.Fatalf("UpdateAuthz(one challenge): %v", err)
	}
	got, err = f.s.GetAuthz(f.ctx, b.ID)
	if err != nil {
		t.Fatalf("GetAuthz: %v", err)
	}
	checkAuthz(t, "GetAuthz after UpdateAuthz of one challenge", got, b)
}

// testChallenges checks GetChallenge, and the outcome of one challenge
// written with its authorization (UpdateAuthz), as a validation writes
// it.
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

	if err := f.s.StartChallenge(f.ctx, c.ID, "worker", at(time.Minute), time.Minute); err != nil {
		t.Fatalf("StartChallenge(pending->processing): %v", err)
	}
	c.Status, c.UpdatedAt = acme.StatusProcessing, at(time.Minute)
	wantErr(t, "StartChallenge(from pending, now processing)",
		f.s.StartChallenge(f.ctx, c.ID, "worker", at(time.Minute), time.Minute), acme.ErrConflict)

	c.Status = acme.StatusValid
	c.Validated = at(2 * time.Minute)
	c.UpdatedAt = at(2 * time.Minute)
	c.Error = &acme.Problem{Type: acme.ProbDNS, Detail: "a transient error that was overcome"}
	f.settle(t, c)
	got, err = f.s.GetChallenge(f.ctx, c.ID)
	if err != nil {
		t.Fatalf("GetChallenge: %v", err)
	}
	checkChallenge(t, "GetChallenge after its outcome", got, c)

	// The other challenges are untouched.
	authz, err := f.s.GetAuthz(f.ctx, a.ID)
	if err != nil {
		t.Fatalf("GetAuthz: %v", err)
	}
	checkAuthz(t, "GetAuthz after one challenge's outcome", authz, a)

	missing := *c
	missing.ID = "no-such-challenge"
	only := *a
	only.Challenges = []*acme.Challenge{&missing}
	wantErr(t, "UpdateAuthz(unknown challenge)", f.s.UpdateAuthz(f.ctx, &only, acme.StatusPending), acme.ErrNotFound)
}
