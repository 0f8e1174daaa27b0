// SPDX-License-Identifier: Apache-2.0

package pgcount_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/weir-pki/weir/internal/pgcount"
)

// TestCounts drives pgx through the proxy and checks what it counted: a
// statement prepared once and run three times counts three, a batch of
// two statements is one round trip, and a simple query is one of each.
func TestCounts(t *testing.T) {
	dsn := os.Getenv("WEIR_TEST_POSTGRES_DSN")
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true: WEIR_TEST_POSTGRES_DSN must name a PostgreSQL server")
		}
		t.Skip("set WEIR_TEST_POSTGRES_DSN=postgres://postgres@127.0.0.1:5432/test?sslmode=disable to run")
	}
	p, through, err := pgcount.StartDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, through)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

	const sel = "SELECT $1::int + 1"
	before := p.Counts()
	for i := range 3 {
		var n int
		if err := conn.QueryRow(ctx, sel, i).Scan(&n); err != nil || n != i+1 {
			t.Fatalf("%s with %d = %d, %v", sel, i, n, err)
		}
	}
	got := p.Counts().Sub(before)
	// The first run prepares (a Parse and Describe, one round trip) and
	// then runs it; the others only run it.
	if got.Statements[sel] != 3 || got.Total() != 3 || got.Trips != 4 {
		t.Errorf("three runs of a prepared statement: %+v; want 3 statements %q in 4 round trips", got, sel)
	}

	before = p.Counts()
	var b pgx.Batch
	b.Queue(sel, 1)
	b.Queue("SELECT $1::text", "x")
	if err := conn.SendBatch(ctx, &b).Close(); err != nil {
		t.Fatal(err)
	}
	got = p.Counts().Sub(before)
	if got.Statements[sel] != 1 || got.Statements["SELECT $1::text"] != 1 || got.Total() != 2 {
		t.Errorf("a batch: %+v; want one run of each statement", got)
	}

	before = p.Counts()
	if _, err := conn.Exec(ctx, "SELECT   1"); err != nil {
		t.Fatal(err)
	}
	got = p.Counts().Sub(before)
	if got.Statements["SELECT 1"] != 1 || got.Trips != 1 {
		t.Errorf("a simple query: %+v; want \"SELECT 1\" once in one round trip", got)
	}
}

// TestRefusesTLS: a DSN that asks for TLS cannot be counted.
func TestRefusesTLS(t *testing.T) {
	if _, _, err := pgcount.StartDSN("postgres://u@127.0.0.1:5432/db?sslmode=require"); err == nil {
		t.Error("StartDSN with sslmode=require: no error")
	}
	if _, _, err := pgcount.StartDSN("mysql://u@127.0.0.1/db?sslmode=disable"); err == nil {
		t.Error("StartDSN of a mysql:// URL: no error")
	}
}
