// SPDX-License-Identifier: Apache-2.0

package pgschema_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weir-pki/weir/storage/postgres/pgschema"
	"github.com/weir-pki/weir/storage/postgres/pgtest"
)

// TestCreateDrop: a schema of one's own takes the tables its DSN's users
// make, counts their connections as its own, and goes with them when
// dropped; a prefix that is not a plain name is refused.
func TestCreateDrop(t *testing.T) {
	base := pgtest.BaseDSN(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := pgschema.Create(ctx, base, "Weir; DROP"); err == nil {
		t.Fatal("Create with prefix \"Weir; DROP\" = nil error")
	}
	s, err := pgschema.Create(ctx, base, "weir_pgschema_")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.Name, "weir_pgschema_") || !strings.Contains(s.DSN, "search_path="+s.Name) {
		t.Errorf("schema %q, DSN %q", s.Name, s.DSN)
	}
	var where string
	if err := pgtest.Scan(ctx, s.DSN, `SELECT current_schema()`, nil, &where); err != nil || where != s.Name {
		t.Errorf("current_schema() through the DSN = %q, %v; want %q", where, err, s.Name)
	}
	conn, err := pgx.Connect(ctx, s.DSN)
	if err != nil {
		t.Fatal(err)
	}
	// The backend of the Scan above ends asynchronously after its client
	// closed: it may still be listed for a moment, so ask again (bounded)
	// until only conn's remains.
	want := []int{int(conn.PgConn().PID())}
	var ours []int
	for i := 0; i < 50; i++ {
		if ours, _, err = s.BackendPIDs(ctx); err != nil || slices.Equal(ours, want) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	conn.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ours, want) {
		t.Errorf("BackendPIDs with one connection of the DSN open = %v; want %v", ours, want)
	}
	if err := s.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := pgtest.Scan(ctx, base, `SELECT count(*) FROM information_schema.schemata WHERE schema_name = $1`, []any{s.Name}, &n); err != nil || n != 0 {
		t.Errorf("schemata named %s after Drop: %d, %v; want 0", s.Name, n, err)
	}
	if _, _, err := s.BackendPIDs(ctx); err == nil {
		t.Error("BackendPIDs after Drop = nil error")
	}
	if err := s.Drop(ctx); err != nil {
		t.Errorf("a second Drop = %v; want nil", err)
	}
}
