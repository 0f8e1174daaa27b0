// SPDX-License-Identifier: Apache-2.0

package acme_test

import (
	"testing"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/internal/pgcount"
	"github.com/weir-pki/weir/storage/postgres/pgtest"
)

// pgRoundTrips counts a PostgreSQL client's round trips on the wire
// (internal/pgcount); nil on SQLite.
type pgRoundTrips struct{ p *pgcount.Proxy }

// count returns the round trips so far; 0 without a counter (SQLite).
func (w *pgRoundTrips) count() int64 {
	if w == nil {
		return 0
	}
	return w.p.Trips()
}

// countPostgres starts a counter in front of the server of dsn, a
// postgres:// URL with sslmode=disable, and returns it with the DSN that
// connects through it. The proxy stops when the test ends.
func countPostgres(t *testing.T, dsn string) (*pgRoundTrips, string) {
	t.Helper()
	p, through, err := pgcount.StartDSN(dsn)
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(p.Close)
	return &pgRoundTrips{p}, through
}

// onBothStores runs f on SQLite and on PostgreSQL, whose SQL round trips
// are counted on the wire (wire is nil on SQLite).
func onBothStores(t *testing.T, f func(t *testing.T, st acme.Store, wire *pgRoundTrips)) {
	t.Run("sqlite", func(t *testing.T) { f(t, openSQLite(t), nil) })
	t.Run("postgres", func(t *testing.T) {
		_, dsn := pgtest.Schema(t, "weir_acme_")
		wire, dsn := countPostgres(t, dsn)
		// One connection, so that every statement is prepared on it by
		// the warm-up and each later one is a single round trip.
		f(t, openPostgresDSN(t, dsn, 1), wire)
	})
}
