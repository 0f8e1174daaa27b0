// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"github.com/weir-pki/weir/storage/postgres/pgtest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// dsnEnv names the variable that points the tests at a PostgreSQL server.
const dsnEnv = "WEIR_TEST_POSTGRES_DSN"

// fixedNow is the clock of the stores under test.
func fixedNow() time.Time { return time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC) }

// baseDSN returns the DSN of the test server (pgtest.BaseDSN).
func baseDSN(tb testing.TB) string { return pgtest.BaseDSN(tb) }

// withParams returns dsn with the given run-time parameters added.
func withParams(_ testing.TB, dsn string, params map[string]string) string {
	return pgtest.WithParams(dsn, params)
}

// adminConn connects to the test server as the DSN says, closed when the
// test ends. An unreachable server fails the test: the variable says one
// is there.
func adminConn(tb testing.TB) *pgx.Conn {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, baseDSN(tb))
	if err != nil {
		tb.Fatalf("connecting to %s: %v", dsnEnv, err)
	}
	tb.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// randomName returns prefix and 12 random hex digits: a name no other
// test, nor a concurrent run on the same server, uses.
func randomName(prefix string) string {
	var b [6]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// freshSchema creates a new, empty schema, dropped with everything in it
// when the test ends, and returns its name and a DSN whose search_path is
// it and whose application_name is the schema's name (so that the test's
// connections can be found in pg_stat_activity).
func freshSchema(tb testing.TB) (schema, dsn string) {
	tb.Helper()
	admin := adminConn(tb)
	schema = randomName("weir_test_")
	if _, err := admin.Exec(tb.Context(), "CREATE SCHEMA "+schema); err != nil {
		tb.Fatalf("CREATE SCHEMA %s: %v", schema, err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			tb.Errorf("DROP SCHEMA %s: %v", schema, err)
		}
	})
	return schema, withParams(tb, baseDSN(tb), map[string]string{"search_path": schema, "application_name": schema})
}

// openDSN opens a store on dsn, closed when the test ends (before the
// schema is dropped: cleanups run last in, first out).
func openDSN(tb testing.TB, dsn string) *Store {
	tb.Helper()
	s, err := Open(tb.Context(), Config{DSN: dsn, MaxConns: 8}, fixedNow)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// openFresh opens a store on a fresh schema.
func openFresh(tb testing.TB) *Store {
	tb.Helper()
	_, dsn := freshSchema(tb)
	return openDSN(tb, dsn)
}
