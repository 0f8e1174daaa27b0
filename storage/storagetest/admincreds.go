// SPDX-License-Identifier: Apache-2.0

package storagetest

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// testAdminCredentials checks CreateAdminCredential, ListAdminCredentials
// and DeleteAdminCredential: every field kept, a name or digest given
// twice refused, a bad row refused with nothing written, and a deleted
// credential gone.
func testAdminCredentials(t *testing.T, f *fixture) {
	cs, ok := f.s.(acme.AdminCredentialStore)
	if !ok {
		t.Fatalf("%T does not implement acme.AdminCredentialStore", f.s)
	}
	list := func() []*acme.AdminCredential {
		t.Helper()
		l, err := cs.ListAdminCredentials(f.ctx)
		if err != nil {
			t.Fatalf("ListAdminCredentials: %v", err)
		}
		return l
	}
	if l := list(); len(l) != 0 {
		t.Fatalf("a new store lists %d admin credentials", len(l))
	}
	ci := &acme.AdminCredential{Name: "ci", Role: "read", SHA256: strings.Repeat("ab", 32), CreatedAt: at(time.Second), CreatedBy: "admin"}
	ops := &acme.AdminCredential{Name: "alice", Role: "operate", SHA256: strings.Repeat("0c", 32), CreatedAt: at(2 * time.Second), CreatedBy: "ci"}
	for _, c := range []*acme.AdminCredential{ci, ops} {
		if err := cs.CreateAdminCredential(f.ctx, c); err != nil {
			t.Fatalf("CreateAdminCredential(%s): %v", c.Name, err)
		}
	}
	dupName := *ci
	dupName.SHA256 = strings.Repeat("cd", 32)
	wantErr(t, "CreateAdminCredential(same name)", cs.CreateAdminCredential(f.ctx, &dupName), acme.ErrConflict)
	// Names are compared without regard to case.
	for _, name := range []string{"CI", "Ci", "ALICE"} {
		c := *ci
		c.Name, c.SHA256 = name, strings.Repeat("cd", 32)
		wantErr(t, "CreateAdminCredential("+name+")", cs.CreateAdminCredential(f.ctx, &c), acme.ErrConflict)
	}
	dupDigest := *ci
	dupDigest.Name = "other"
	wantErr(t, "CreateAdminCredential(same digest)", cs.CreateAdminCredential(f.ctx, &dupDigest), acme.ErrConflict)
	for _, bad := range []struct {
		name string
		edit func(c *acme.AdminCredential)
	}{
		{"empty name", func(c *acme.AdminCredential) { c.Name = "" }},
		{"empty role", func(c *acme.AdminCredential) { c.Role = "" }},
		{"short digest", func(c *acme.AdminCredential) { c.SHA256 = "abc" }},
		{"upper-case digest", func(c *acme.AdminCredential) { c.SHA256 = strings.Repeat("AB", 32) }},
		{"zero time", func(c *acme.AdminCredential) { c.CreatedAt = time.Time{} }},
	} {
		c := &acme.AdminCredential{Name: "bad", Role: "read", SHA256: strings.Repeat("ef", 32), CreatedAt: at(0), CreatedBy: "admin"}
		bad.edit(c)
		if err := cs.CreateAdminCredential(f.ctx, c); err == nil {
			t.Errorf("CreateAdminCredential(%s) accepted it", bad.name)
		}
	}
	l := list()
	if len(l) != 2 {
		t.Fatalf("ListAdminCredentials: %d credentials; want alice, ci", len(l))
	}
	for i, want := range []*acme.AdminCredential{ops, ci} {
		got := *l[i]
		if !got.CreatedAt.Equal(want.CreatedAt) {
			t.Errorf("ListAdminCredentials[%d].CreatedAt = %v, want %v", i, got.CreatedAt, want.CreatedAt)
		}
		got.CreatedAt = want.CreatedAt
		if !reflect.DeepEqual(got, *want) {
			t.Errorf("ListAdminCredentials[%d] = %+v, want %+v", i, got, *want)
		}
	}

	if err := cs.DeleteAdminCredential(f.ctx, "ci"); err != nil {
		t.Fatalf("DeleteAdminCredential: %v", err)
	}
	wantErr(t, "DeleteAdminCredential(again)", cs.DeleteAdminCredential(f.ctx, "ci"), acme.ErrNotFound)
	wantErr(t, "DeleteAdminCredential(unknown)", cs.DeleteAdminCredential(f.ctx, "nobody"), acme.ErrNotFound)
	if l := list(); len(l) != 1 || l[0].Name != "alice" {
		t.Fatalf("after the delete: %v; want alice alone", l)
	}
	// A revoked name and its digest may be added again (a new token), in
	// any case.
	upper := *ci
	upper.Name = "CI"
	if err := cs.CreateAdminCredential(f.ctx, &upper); err != nil {
		t.Fatalf("CreateAdminCredential(after the delete): %v", err)
	}
	if l := list(); len(l) != 2 || l[0].Name != "CI" {
		t.Fatalf("after adding CI: %v; want CI, alice (the name as given)", l)
	}
}
