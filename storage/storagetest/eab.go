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

// eabStore returns the store's acme.EABStore; every Store must have one.
func (f *fixture) eabStore(t *testing.T) acme.EABStore {
	t.Helper()
	k, ok := f.s.(acme.EABStore)
	if !ok {
		t.Fatalf("%T does not implement acme.EABStore", f.s)
	}
	return k
}

// eabKey creates and returns an unbound EAB key with label, created at d
// after base.
func (f *fixture) eabKey(t *testing.T, label string, d time.Duration) *acme.EABKey {
	t.Helper()
	k := &acme.EABKey{
		ID:        f.id("kid"),
		Label:     label,
		HMACKey:   []byte(f.id("hmac-key-of-32-bytes-or-so-xxxxx")),
		CreatedAt: at(d),
	}
	if err := f.eabStore(t).CreateEABKey(f.ctx, k); err != nil {
		t.Fatalf("CreateEABKey(%s): %v", k.ID, err)
	}
	return k
}

// eabAccount returns a new, unstored valid account that names EAB key
// keyID.
func (f *fixture) eabAccount(keyID string) *acme.Account {
	return &acme.Account{
		Key:           []byte(`{"kty":"EC","crv":"P-256","x":"` + f.id("x") + `"}`),
		KeyThumbprint: acme.Thumbprint(f.id("thumb")),
		Status:        acme.StatusValid,
		CreatedAt:     at(time.Minute),
		CreatedIP:     "192.0.2.7",
		EABKeyID:      keyID,
	}
}

// checkEABKey compares every field of two EAB keys.
func checkEABKey(t *testing.T, what string, got, want *acme.EABKey) {
	t.Helper()
	var d diffs
	add(&d, "ID", got.ID, want.ID)
	add(&d, "Label", got.Label, want.Label)
	add(&d, "Tenant", got.Tenant, want.Tenant)
	add(&d, "HMACKey", string(got.HMACKey), string(want.HMACKey))
	d.addTime("CreatedAt", got.CreatedAt, want.CreatedAt)
	add(&d, "BoundAccount", got.BoundAccount, want.BoundAccount)
	d.addTime("BoundAt", got.BoundAt, want.BoundAt)
	d.addTime("RevokedAt", got.RevokedAt, want.RevokedAt)
	d.report(t, what)
}

// testEAB checks the External Account Binding keys: storage, listing,
// revocation, and the binding CreateAccount makes, exactly once.
func testEAB(t *testing.T, f *fixture) {
	t.Run("CreateGetList", func(t *testing.T) { testEABKeys(t, f) })
	t.Run("Bind", func(t *testing.T) { testEABBind(t, f) })
	t.Run("Revoke", func(t *testing.T) { testEABRevoke(t, f) })
	t.Run("ConcurrentBind", func(t *testing.T) { testEABConcurrentBind(t, f) })
}

// testEABKeys checks CreateEABKey, GetEABKey and ListEABKeys.
func testEABKeys(t *testing.T, f *fixture) {
	keys := f.eabStore(t)
	a := f.eabKey(t, "team-a", time.Second)
	b := f.eabKey(t, "team-b", 2*time.Second)
	c := f.eabKey(t, "team-a", 3*time.Second)

	want := *a
	want.HMACKey = slices.Clone(a.HMACKey)
	a.HMACKey[0] ^= 0xff // the store keeps its own copy
	got, err := keys.GetEABKey(f.ctx, a.ID)
	if err != nil {
		t.Fatalf("GetEABKey(%s): %v", a.ID, err)
	}
	checkEABKey(t, "GetEABKey", got, &want)
	if got.Bound() || got.Revoked() {
		t.Errorf("new key: Bound %v, Revoked %v; want false, false", got.Bound(), got.Revoked())
	}
	got.HMACKey[0] ^= 0xff // returned values are fresh copies
	if again, _ := keys.GetEABKey(f.ctx, a.ID); string(again.HMACKey) != string(want.HMACKey) {
		t.Error("changing a returned key's HMACKey changed the stored one")
	}

	_, err = keys.GetEABKey(f.ctx, "no-such-key")
	wantErr(t, "GetEABKey(unknown)", err, acme.ErrNotFound)
	dup := &acme.EABKey{ID: b.ID, Label: "other", HMACKey: []byte("k"), CreatedAt: at(0)}
	wantErr(t, "CreateEABKey(duplicate ID)", keys.CreateEABKey(f.ctx, dup), acme.ErrConflict)

	ids := func(ks []*acme.EABKey) []string {
		var out []string
		for _, k := range ks {
			out = append(out, k.ID)
		}
		return out
	}
	tests := []struct {
		label string
		want  []string
	}{
		{"", []string{c.ID, b.ID, a.ID}},
		{"team-a", []string{c.ID, a.ID}},
		{"team-b", []string{b.ID}},
		{"team-z", nil},
	}
	for _, tt := range tests {
		got, err := keys.ListEABKeys(f.ctx, tt.label)
		if err != nil {
			t.Fatalf("ListEABKeys(%q): %v", tt.label, err)
		}
		if !slices.Equal(ids(got), tt.want) {
			t.Errorf("ListEABKeys(%q) = %v; want %v (newest first)", tt.label, ids(got), tt.want)
		}
	}
}

// testEABBind checks that CreateAccount binds the account's EAB key in the
// same transaction, once, and writes nothing when the key is unusable.
func testEABBind(t *testing.T, f *fixture) {
	keys := f.eabStore(t)
	k := f.eabKey(t, "team-bind", 0)
	a := f.eabAccount(k.ID)
	if err := f.s.CreateAccount(f.ctx, a); err != nil {
		t.Fatalf("CreateAccount(with EAB key %s): %v", k.ID, err)
	}
	got, err := f.s.GetAccount(f.ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	checkAccount(t, "GetAccount(EAB-bound)", got, a)
	want := *k
	want.BoundAccount, want.BoundAt = a.ID, a.CreatedAt
	gotKey, err := keys.GetEABKey(f.ctx, k.ID)
	if err != nil {
		t.Fatal(err)
	}
	checkEABKey(t, "GetEABKey(bound)", gotKey, &want)
	if !gotKey.Bound() {
		t.Error("bound key: Bound() = false")
	}

	revoked := f.eabKey(t, "team-bind", 0)
	if err := keys.RevokeEABKey(f.ctx, revoked.ID, at(time.Hour)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		keyID string
	}{
		{"already bound", k.ID},
		{"revoked", revoked.ID},
		{"unknown", "no-such-key"},
	}
	for _, tt := range tests {
		b := f.eabAccount(tt.keyID)
		err := f.s.CreateAccount(f.ctx, b)
		wantErr(t, "CreateAccount(EAB key "+tt.name+")", err, acme.ErrEABUnusable)
		if errors.Is(err, acme.ErrConflict) {
			t.Errorf("CreateAccount(EAB key %s): %v also wraps ErrConflict, which callers take for a lost race on the account key", tt.name, err)
		}
		_, err = f.s.GetAccountByKey(f.ctx, b.KeyThumbprint)
		wantErr(t, "GetAccountByKey after a refused binding ("+tt.name+")", err, acme.ErrNotFound)
	}
	// The refusals left the keys as they were.
	if got, _ := keys.GetEABKey(f.ctx, k.ID); got == nil || got.BoundAccount != a.ID {
		t.Errorf("key %s after refused bindings: %+v; want still bound to %s", k.ID, got, a.ID)
	}
	if got, _ := keys.GetEABKey(f.ctx, revoked.ID); got == nil || got.Bound() {
		t.Errorf("revoked key %s after a refused binding: %+v; want unbound", revoked.ID, got)
	}

	// A duplicate account key is ErrConflict and leaves the EAB key free.
	free := f.eabKey(t, "team-bind", 0)
	dup := f.eabAccount(free.ID)
	dup.KeyThumbprint = a.KeyThumbprint
	wantErr(t, "CreateAccount(duplicate account key, EAB)", f.s.CreateAccount(f.ctx, dup), acme.ErrConflict)
	if got, _ := keys.GetEABKey(f.ctx, free.ID); got == nil || got.Bound() {
		t.Errorf("key %s after a refused account: %+v; want unbound", free.ID, got)
	}
}

// testEABRevoke checks the compare-and-set of RevokeEABKey, also on a
// bound key, which stays bound.
func testEABRevoke(t *testing.T, f *fixture) {
	keys := f.eabStore(t)
	k := f.eabKey(t, "team-rev", 0)
	if err := keys.RevokeEABKey(f.ctx, k.ID, at(time.Hour)); err != nil {
		t.Fatalf("RevokeEABKey: %v", err)
	}
	want := *k
	want.RevokedAt = at(time.Hour)
	got, err := keys.GetEABKey(f.ctx, k.ID)
	if err != nil {
		t.Fatal(err)
	}
	checkEABKey(t, "GetEABKey(revoked)", got, &want)
	wantErr(t, "RevokeEABKey(again)", keys.RevokeEABKey(f.ctx, k.ID, at(2*time.Hour)), acme.ErrConflict)
	wantErr(t, "RevokeEABKey(unknown)", keys.RevokeEABKey(f.ctx, "no-such-key", at(time.Hour)), acme.ErrNotFound)
	if got, _ := keys.GetEABKey(f.ctx, k.ID); got == nil || !got.RevokedAt.Equal(at(time.Hour)) {
		t.Errorf("a second revocation changed the key: %+v", got)
	}

	bound := f.eabKey(t, "team-rev", 0)
	a := f.eabAccount(bound.ID)
	if err := f.s.CreateAccount(f.ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := keys.RevokeEABKey(f.ctx, bound.ID, at(time.Hour)); err != nil {
		t.Fatalf("RevokeEABKey(bound): %v", err)
	}
	got, err = keys.GetEABKey(f.ctx, bound.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.BoundAccount != a.ID || !got.Revoked() {
		t.Errorf("bound key after revocation: %+v; want bound to %s and revoked", got, a.ID)
	}
}

// testEABConcurrentBind: of N concurrent new accounts naming one EAB key,
// exactly one is created and bound; the others fail with ErrEABUnusable
// and leave no account behind.
func testEABConcurrentBind(t *testing.T, f *fixture) {
	const n = 24
	keys := f.eabStore(t)
	k := f.eabKey(t, "team-race", 0)
	accts := make([]*acme.Account, n)
	for i := range accts {
		accts[i] = f.eabAccount(k.ID)
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = f.s.CreateAccount(f.ctx, accts[i])
		}()
	}
	close(start)
	wg.Wait()

	winner := -1
	for i, err := range errs {
		switch {
		case err == nil:
			if winner >= 0 {
				t.Errorf("accounts %d and %d both bound key %s", winner, i, k.ID)
			}
			winner = i
		case !errors.Is(err, acme.ErrEABUnusable):
			t.Errorf("CreateAccount %d: %v; want success or ErrEABUnusable", i, err)
		default:
			if _, err := f.s.GetAccountByKey(f.ctx, accts[i].KeyThumbprint); !errors.Is(err, acme.ErrNotFound) {
				t.Errorf("account %d lost the binding but was stored (GetAccountByKey: %v)", i, err)
			}
		}
	}
	if winner < 0 {
		t.Fatalf("no account bound key %s: %v", k.ID, fmt.Sprint(errs))
	}
	got, err := keys.GetEABKey(f.ctx, k.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.BoundAccount != accts[winner].ID {
		t.Errorf("key bound to account %q; want the winner %q", got.BoundAccount, accts[winner].ID)
	}
}
