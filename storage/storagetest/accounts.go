// SPDX-License-Identifier: Apache-2.0

package storagetest

import (
	"testing"

	"github.com/weir-pki/weir/acme"
)

// testAccounts checks CreateAccount, GetAccount and GetAccountByKey.
func testAccounts(t *testing.T, f *fixture) {
	a := f.account(t)
	if a.ID == "" {
		t.Fatal("CreateAccount left ID empty")
	}
	want := *a
	want.Contact = append([]string(nil), a.Contact...)
	want.Key = append([]byte(nil), a.Key...)
	// The store must not keep the caller's slices.
	a.Contact[0] = "mailto:changed@example.org"
	a.Key[0] = 'X'

	got, err := f.s.GetAccount(f.ctx, want.ID)
	if err != nil {
		t.Fatalf("GetAccount(%s): %v", want.ID, err)
	}
	checkAccount(t, "GetAccount", got, &want)

	// Returned values are fresh copies.
	got.Contact[0] = "mailto:mutated@example.org"
	got.Key[0] = 'Y'
	got.Status = acme.StatusRevoked
	byKey, err := f.s.GetAccountByKey(f.ctx, want.KeyThumbprint)
	if err != nil {
		t.Fatalf("GetAccountByKey(%s): %v", want.KeyThumbprint, err)
	}
	checkAccount(t, "GetAccountByKey", byKey, &want)

	b := f.account(t)
	if b.ID == want.ID {
		t.Errorf("second account got the first's ID %s", b.ID)
	}

	dup := &acme.Account{Key: []byte(`{}`), KeyThumbprint: want.KeyThumbprint, Status: acme.StatusValid, CreatedAt: at(0)}
	wantErr(t, "CreateAccount(duplicate key)", f.s.CreateAccount(f.ctx, dup), acme.ErrConflict)

	// An account without contacts.
	c := &acme.Account{Key: []byte(`{"k":1}`), KeyThumbprint: acme.Thumbprint(f.id("thumb")), Status: acme.StatusValid, CreatedAt: at(0)}
	if err := f.s.CreateAccount(f.ctx, c); err != nil {
		t.Fatalf("CreateAccount(no contact): %v", err)
	}
	got, err = f.s.GetAccount(f.ctx, c.ID)
	if err != nil {
		t.Fatalf("GetAccount(%s): %v", c.ID, err)
	}
	checkAccount(t, "GetAccount(no contact)", got, c)
}

// testAccountUpdate checks the compare-and-set of UpdateAccount.
func testAccountUpdate(t *testing.T, f *fixture) {
	a := f.account(t)
	other := f.account(t)

	a.Contact = []string{"mailto:new@example.com"}
	a.Status = acme.StatusDeactivated
	if err := f.s.UpdateAccount(f.ctx, a, acme.StatusValid); err != nil {
		t.Fatalf("UpdateAccount(valid->deactivated): %v", err)
	}
	got, err := f.s.GetAccount(f.ctx, a.ID)
	if err != nil {
		t.Fatalf("GetAccount: %v", err)
	}
	checkAccount(t, "after UpdateAccount", got, a)

	stale := *a
	stale.Contact = []string{"mailto:stale@example.com"}
	stale.Status = acme.StatusRevoked
	wantErr(t, "UpdateAccount(from valid, now deactivated)",
		f.s.UpdateAccount(f.ctx, &stale, acme.StatusValid), acme.ErrConflict)
	got, err = f.s.GetAccount(f.ctx, a.ID)
	if err != nil {
		t.Fatalf("GetAccount: %v", err)
	}
	checkAccount(t, "after failed UpdateAccount", got, a)

	// The other account is untouched.
	gotOther, err := f.s.GetAccount(f.ctx, other.ID)
	if err != nil {
		t.Fatalf("GetAccount: %v", err)
	}
	checkAccount(t, "other account", gotOther, other)

	missing := *a
	missing.ID = "999999999"
	wantErr(t, "UpdateAccount(unknown)", f.s.UpdateAccount(f.ctx, &missing, acme.StatusDeactivated), acme.ErrNotFound)
}

// testAccountKeyChange checks ChangeAccountKey.
func testAccountKeyChange(t *testing.T, f *fixture) {
	a := f.account(t)
	b := f.account(t)
	oldThumb := a.KeyThumbprint
	newThumb := acme.Thumbprint(f.id("thumb"))
	newKey := []byte(`{"kty":"OKP","crv":"Ed25519","x":"new"}`)

	if err := f.s.ChangeAccountKey(f.ctx, a.ID, oldThumb, newThumb, newKey); err != nil {
		t.Fatalf("ChangeAccountKey: %v", err)
	}
	a.KeyThumbprint, a.Key = newThumb, newKey
	got, err := f.s.GetAccountByKey(f.ctx, newThumb)
	if err != nil {
		t.Fatalf("GetAccountByKey(new): %v", err)
	}
	checkAccount(t, "GetAccountByKey(new)", got, a)
	_, err = f.s.GetAccountByKey(f.ctx, oldThumb)
	wantErr(t, "GetAccountByKey(old)", err, acme.ErrNotFound)

	// The old key no longer matches.
	wantErr(t, "ChangeAccountKey(stale old key)",
		f.s.ChangeAccountKey(f.ctx, a.ID, oldThumb, acme.Thumbprint(f.id("thumb")), []byte(`{}`)), acme.ErrConflict)

	// The new key belongs to another account.
	wantErr(t, "ChangeAccountKey(key of another account)",
		f.s.ChangeAccountKey(f.ctx, a.ID, newThumb, b.KeyThumbprint, b.Key), acme.ErrConflict)
	got, err = f.s.GetAccount(f.ctx, a.ID)
	if err != nil {
		t.Fatalf("GetAccount: %v", err)
	}
	checkAccount(t, "after failed ChangeAccountKey", got, a)
	got, err = f.s.GetAccountByKey(f.ctx, b.KeyThumbprint)
	if err != nil {
		t.Fatalf("GetAccountByKey(b): %v", err)
	}
	checkAccount(t, "other account after failed ChangeAccountKey", got, b)

	wantErr(t, "ChangeAccountKey(unknown account)",
		f.s.ChangeAccountKey(f.ctx, "999999999", "x", acme.Thumbprint(f.id("thumb")), []byte(`{}`)), acme.ErrNotFound)
}
