// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestImportTarget: the import names the database, server and schema it
// writes to, as the DSN says, and not the password.
func TestImportTarget(t *testing.T) {
	schema, dsn := freshSchema(t)
	dsn = withParams(t, dsn, map[string]string{"password": "hunter2"})
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(t.Context(), Config{DSN: dsn}, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	im, err := s.BeginImport(t.Context(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer im.Close()
	want := fmt.Sprintf("PostgreSQL (database %q on %s:%d, schema %q)", cfg.Database, cfg.Host, cfg.Port, schema)
	if got := im.Target(); got != want || strings.Contains(got, "hunter2") {
		t.Errorf("Target() = %q; want %q", got, want)
	}
}
