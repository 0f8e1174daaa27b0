// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"testing"

	"github.com/weir-pki/weir/migrations"
	"github.com/weir-pki/weir/storage/storagetest"
)

// TestMigrateCaseDuplicateCredentials: migration 0018 applies to a store
// holding credential names equal but for case, keeping every row and
// giving the oldest of each group its name_lower (storagetest).
func TestMigrateCaseDuplicateCredentials(t *testing.T) {
	db, path := openRaw(t)
	ms, err := migrations.List(migrations.SQLite(), migrations.SQLiteDir)
	if err != nil {
		t.Fatal(err)
	}
	var before []migrations.Migration
	for _, m := range ms {
		if m.Version < 18 {
			before = append(before, m)
		}
	}
	if err := applyMigrations(t.Context(), db, path, before, fixedNow); err != nil {
		t.Fatal(err)
	}
	for _, r := range storagetest.LegacyCredentials() {
		if _, err := db.ExecContext(t.Context(), `INSERT INTO admin_credentials (name, role, sha256, created_at, created_by) VALUES (?, 'operate', ?, ?, 'admin')`,
			r.Name, storagetest.LegacyDigest(r.Name), r.CreatedAt); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	s, err := Open(t.Context(), path, fixedNow)
	if err != nil {
		t.Fatalf("Open over names equal but for case: %v", err)
	}
	defer s.Close()
	rows, err := s.r.QueryContext(t.Context(), `SELECT name, name_lower FROM admin_credentials`)
	if err != nil {
		t.Fatal(err)
	}
	got := storagetest.NameLowers(t, rows)
	rows.Close()
	storagetest.CheckLegacyCredentials(t, t.Context(), s, got)
}
