// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/weir-pki/weir/migrations"
	"github.com/weir-pki/weir/storage/storagetest"
)

// TestMigrateCaseDuplicateCredentials: migration 0014 applies to a schema
// holding credential names equal but for case, as in sqlite
// (storagetest).
func TestMigrateCaseDuplicateCredentials(t *testing.T) {
	schema, dsn := freshSchema(t)
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	var before []migrations.Migration
	for _, m := range knownVersions(t) {
		if m.Version < 14 {
			before = append(before, m)
		}
	}
	if err := applyMigrations(t.Context(), conn, schema, before, fixedNow); err != nil {
		t.Fatal(err)
	}
	for _, r := range storagetest.LegacyCredentials() {
		if _, err := conn.Exec(t.Context(), `INSERT INTO admin_credentials (name, role, sha256, created_at, created_by) VALUES ($1, 'operate', $2, $3, 'admin')`,
			r.Name, storagetest.LegacyDigest(r.Name), r.CreatedAt); err != nil {
			t.Fatal(err)
		}
	}
	s := openDSN(t, dsn)
	rows, err := conn.Query(t.Context(), `SELECT name, name_lower FROM admin_credentials`)
	if err != nil {
		t.Fatal(err)
	}
	got := storagetest.NameLowers(t, rows)
	rows.Close()
	storagetest.CheckLegacyCredentials(t, t.Context(), s, got)
}
