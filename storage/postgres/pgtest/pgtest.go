// SPDX-License-Identifier: Apache-2.0

// Package pgtest gives tests a PostgreSQL schema of their own on the server
// named by WEIR_TEST_POSTGRES_DSN, so that parallel tests and the shared
// server never collide.
package pgtest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weir-pki/weir/storage/postgres/pgschema"
)

// EnvDSN is the variable naming the test server.
const EnvDSN = "WEIR_TEST_POSTGRES_DSN"

// BaseDSN returns the DSN of WEIR_TEST_POSTGRES_DSN. Without it the test is
// skipped with a message saying how to run it, except under CI=true, where
// it fails.
func BaseDSN(tb testing.TB) string {
	tb.Helper()
	base := os.Getenv(EnvDSN)
	if base == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatal(EnvDSN + " must be set in CI")
		}
		tb.Skip("set " + EnvDSN + "=postgres://postgres@127.0.0.1:5432/test?sslmode=disable to run the PostgreSQL tests")
	}
	return base
}

// Schema creates a new schema named prefix plus random hex
// (pgschema.Create), dropped with its tables when the test ends, and
// returns it with a DSN whose search_path is it and whose
// application_name is the schema (so a test can find its own connections
// in pg_stat_activity).
func Schema(tb testing.TB, prefix string) (schema, dsn string) {
	tb.Helper()
	base := BaseDSN(tb)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := pgschema.Create(ctx, base, prefix)
	if err != nil {
		tb.Fatalf("%s: %v", EnvDSN, err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.Drop(ctx); err != nil {
			tb.Error(err)
		}
	})
	return s.Name, s.DSN
}

// WithParams sets connection parameters on a URL or keyword/value DSN
// (pgschema.WithParams).
func WithParams(dsn string, params map[string]string) string { return pgschema.WithParams(dsn, params) }

// Scan reads what weir stored, for a test that checks it: it connects to
// the database of dsn, runs query with args, scans its one row into dest
// and closes the connection.
func Scan(ctx context.Context, dsn, query string, args []any, dest ...any) error {
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	return c.QueryRow(ctx, query, args...).Scan(dest...)
}
