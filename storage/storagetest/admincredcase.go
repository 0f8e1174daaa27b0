// SPDX-License-Identifier: Apache-2.0

package storagetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// LegacyCredential is a row of admin_credentials a store may hold from
// before credential names were compared without regard to case, and the
// name_lower its migration gives it ("" for NULL).
type LegacyCredential struct {
	Name, NameLower string
	CreatedAt       int64 // nanoseconds, as stored
}

// LegacyCredentials are names equal but for case: the oldest of each
// group (ties by name, byte order: "Bob" before "bob") keeps its
// name_lower, the others get NULL; "ADMIN", alone in the store, keeps
// its own (the admin listener refuses it as the token file's name).
func LegacyCredentials() []LegacyCredential {
	ns := func(s int) int64 { return at(time.Duration(s) * time.Second).UnixNano() }
	return []LegacyCredential{
		{"bob", "", ns(1)}, {"BOB", "", ns(2)}, {"Bob", "bob", ns(1)}, {"carol", "carol", ns(3)}, {"ADMIN", "admin", ns(0)},
	}
}

// LegacyDigest is the token digest of a LegacyCredential's row.
func LegacyDigest(name string) string { return fmt.Sprintf("%064x", []byte(name)) }

// CheckLegacyCredentials checks a store migrated over LegacyCredentials
// (inserted with LegacyDigest): got is each row's name_lower as read
// (nil for NULL); every row is listed still, and a new name equal to one
// but for case is refused.
func CheckLegacyCredentials(t *testing.T, ctx context.Context, cs acme.AdminCredentialStore, got map[string]*string) {
	t.Helper()
	for _, r := range LegacyCredentials() {
		switch g := got[r.Name]; {
		case r.NameLower == "" && g != nil, r.NameLower != "" && (g == nil || *g != r.NameLower):
			t.Errorf("%s: name_lower %v, want %q (empty: NULL)", r.Name, g, r.NameLower)
		}
	}
	l, err := cs.ListAdminCredentials(ctx)
	if err != nil || len(l) != len(LegacyCredentials()) {
		t.Fatalf("ListAdminCredentials after the migration: %d rows, %v; want all %d", len(l), err, len(LegacyCredentials()))
	}
	for _, name := range []string{"BoB", "CAROL", "admin"} {
		c := &acme.AdminCredential{Name: name, Role: "read", SHA256: LegacyDigest("new " + name), CreatedAt: at(time.Hour), CreatedBy: "admin"}
		if err := cs.CreateAdminCredential(ctx, c); !errors.Is(err, acme.ErrConflict) {
			t.Errorf("CreateAdminCredential(%s) after the migration: %v, want ErrConflict", name, err)
		}
	}
	if err := cs.DeleteAdminCredential(ctx, "BOB"); err != nil {
		t.Errorf("revoking a left-out duplicate by its name: %v", err)
	}
}

// Rows is what NameLowers reads: database/sql's rows or pgx's.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
}

// NameLowers reads rows of (name, name_lower) into CheckLegacyCredentials'
// map.
func NameLowers(t *testing.T, rows Rows) map[string]*string {
	t.Helper()
	got := map[string]*string{}
	for rows.Next() {
		var name string
		var lower *string
		if err := rows.Scan(&name, &lower); err != nil {
			t.Fatal(err)
		}
		got[name] = lower
	}
	return got
}
