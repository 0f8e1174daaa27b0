// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/migrations"
	"github.com/weir-pki/weir/storage/storagetest"
)

func TestContract(t *testing.T) {
	baseDSN(t) // skip once, not in every sub-test
	storagetest.Run(t, func(t *testing.T) acme.Store { return openFresh(t) })
}

// seed stores an account and an issued certificate and returns them.
func seed(t *testing.T, s *Store) (*acme.Account, *acme.Certificate) {
	t.Helper()
	ctx := t.Context()
	a := &acme.Account{Key: []byte(`{"kty":"EC"}`), KeyThumbprint: acme.Thumbprint(randomName("thumb-")), Status: acme.StatusValid, CreatedAt: fixedNow()}
	if err := s.CreateAccount(ctx, a); err != nil {
		t.Fatalf("CreateAccount: %v", err)
	}
	o := &acme.Order{ID: acme.OrderID(randomName("order-")), AccountID: a.ID, Status: acme.StatusProcessing,
		Identifiers: []acme.Identifier{{Type: acme.IdentifierDNS, Value: "example.com"}},
		Expires:     fixedNow().Add(time.Hour), CreatedAt: fixedNow()}
	if err := s.CreateOrder(ctx, o, nil); err != nil {
		t.Fatalf("CreateOrder: %v", err)
	}
	c := &acme.Certificate{Serial: randomName(""), AccountID: a.ID, OrderID: o.ID, DER: []byte("der"),
		Names: []string{"example.com"}, NotBefore: fixedNow(), NotAfter: fixedNow().Add(time.Hour), IssuedAt: fixedNow()}
	if err := s.FinalizeOrder(ctx, c); err != nil {
		t.Fatalf("FinalizeOrder: %v", err)
	}
	return a, c
}

// knownVersions returns the embedded migrations.
func knownVersions(t *testing.T) []migrations.Migration {
	t.Helper()
	ms, err := migrations.List(migrations.Postgres(), migrations.PostgresDir)
	if err != nil {
		t.Fatalf("migrations.List: %v", err)
	}
	return ms
}

// checkApplied fails t unless s records every embedded migration exactly
// once.
func checkApplied(t *testing.T, what string, s *Store) {
	t.Helper()
	got, err := s.Migrations(t.Context())
	if err != nil {
		t.Fatalf("%s: Migrations: %v", what, err)
	}
	want := knownVersions(t)
	if len(got) != len(want) {
		t.Fatalf("%s: %d migrations recorded (%+v), want %d", what, len(got), got, len(want))
	}
	for i := range want {
		if got[i].Version != want[i].Version || got[i].Name != want[i].Name || !got[i].AppliedAt.Equal(fixedNow()) {
			t.Errorf("%s: migration %d: got %d %s at %v, want %d %s at %v", what, i,
				got[i].Version, got[i].Name, got[i].AppliedAt, want[i].Version, want[i].Name, fixedNow())
		}
	}
}

func TestReopenIsIdempotent(t *testing.T) {
	_, dsn := freshSchema(t)
	s, err := Open(t.Context(), Config{DSN: dsn}, fixedNow)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	a, c := seed(t, s)
	s.Close()
	for i := range 2 {
		s := openDSN(t, dsn)
		checkApplied(t, "reopen", s)
		if _, err := s.GetAccount(t.Context(), a.ID); err != nil {
			t.Errorf("reopen %d: GetAccount: %v", i, err)
		}
		if _, err := s.GetCertificate(t.Context(), c.Serial); err != nil {
			t.Errorf("reopen %d: GetCertificate: %v", i, err)
		}
	}
}

// TestConcurrentOpen: replicas starting at once on a fresh schema all
// start, and each migration is applied once (a second application would
// fail: CREATE TABLE of an existing table, or the version's primary key).
func TestConcurrentOpen(t *testing.T) {
	const n = 4
	schema, dsn := freshSchema(t)
	stores := make([]*Store, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			stores[i], errs[i] = Open(ctx, Config{DSN: dsn, MaxConns: 2}, fixedNow)
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open %d of %d concurrent: %v", i, n, err)
			continue
		}
		t.Cleanup(func() { stores[i].Close() })
	}
	if t.Failed() {
		return
	}
	checkApplied(t, "after concurrent Opens", stores[0])
	var tables int
	if err := adminConn(t).QueryRow(t.Context(),
		`SELECT count(*) FROM information_schema.tables WHERE table_schema = $1`, schema).Scan(&tables); err != nil {
		t.Fatal(err)
	}
	// accounts, orders, authzs, challenges, certificates, eab_keys, nonces,
	// leases, tenants, admin_credentials and schema_migrations;
	// object_counts, cert_expiry_hours, cert_expiry_seconds,
	// cert_issued_hours and cert_search (0008); crl_numbers (0010);
	// plan_removals (0012); log_entries, log_hashes, log_checkpoints and
	// log_state (0016); nonce_keys and nonces_redeemed (0018).
	if tables != 24 {
		t.Errorf("schema %s has %d tables, want 24", schema, tables)
	}
	// Every replica works on the shared schema.
	a, _ := seed(t, stores[1])
	for i, s := range stores {
		if _, err := s.GetAccount(t.Context(), a.ID); err != nil {
			t.Errorf("store %d: GetAccount: %v", i, err)
		}
	}
}

func TestNewerSchemaIsRefused(t *testing.T) {
	_, dsn := freshSchema(t)
	s := openDSN(t, dsn)
	if _, err := s.pool.Exec(t.Context(),
		`INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, 'from_the_future', now())`); err != nil {
		t.Fatalf("inserting a future migration: %v", err)
	}
	s2, err := Open(t.Context(), Config{DSN: dsn}, fixedNow)
	if err == nil {
		s2.Close()
		t.Fatal("Open of a schema newer than the binary succeeded")
	}
	var tooNew *SchemaTooNewError
	if !errors.As(err, &tooNew) {
		t.Fatalf("Open: got %v, want a *SchemaTooNewError", err)
	}
	if want := len(knownVersions(t)); tooNew.Database != 9999 || tooNew.Known != want {
		t.Errorf("SchemaTooNewError: got database %d, known %d; want 9999, %d", tooNew.Database, tooNew.Known, want)
	}
}

func TestApplyMigrationRollsBack(t *testing.T) {
	_, dsn := freshSchema(t)
	s := openDSN(t, dsn)
	conn, err := s.pool.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	ms := append(knownVersions(t), migrations.Migration{Version: 99, Name: "bad",
		SQL: `CREATE TABLE half (x integer); SELECT nonsense FROM nowhere;`})
	err = applyMigrations(t.Context(), conn.Conn(), "test", ms, fixedNow)
	if err == nil || !strings.Contains(err.Error(), "migration 99 (bad)") {
		t.Fatalf("applying a failing migration: got %v, want an error naming it", err)
	}
	var half int
	if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'half'`).Scan(&half); err != nil {
		t.Fatal(err)
	}
	if half != 0 {
		t.Error("the failing migration's first statement was kept")
	}
	checkApplied(t, "after a failing migration", s)
}

func TestMissingSchema(t *testing.T) {
	dsn := withParams(t, baseDSN(t), map[string]string{"search_path": randomName("weir_missing_")})
	adminConn(t) // the server is reachable
	s, err := Open(t.Context(), Config{DSN: dsn}, fixedNow)
	if err == nil {
		s.Close()
		t.Fatal("Open with a search_path naming no schema succeeded")
	}
	if !strings.Contains(err.Error(), "search_path") {
		t.Errorf("Open: got %v, want an error about search_path", err)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want []string // substrings of the error; none for a valid config
	}{
		{"valid URL", Config{DSN: "postgres://weir@db.internal:5432/weir?sslmode=verify-full"}, nil},
		{"valid key=value", Config{DSN: "host=db.internal user=weir dbname=weir", MaxConns: 10, MinConns: 2}, nil},
		{"empty", Config{}, []string{"DSN is empty"}},
		{"every problem", Config{DSN: "postgres://weir:secret@db:notaport/weir", MaxConns: 2, MinConns: 3, ConnectTimeout: -time.Second},
			[]string{"the DSN", "min connections 3 exceed", "connect timeout"}},
		{"negative", Config{DSN: "host=x", MaxConns: -1, MinConns: -1}, []string{"max connections -1", "min connections -1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Errorf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want errors containing %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %v, want it to contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("Validate() = %v shows the password", err)
			}
		})
	}
}

// TestInvalidKeys: keys PostgreSQL cannot hold as text (not UTF-8, or
// with NUL), as a client may put in a URL, are simply not found.
func TestInvalidKeys(t *testing.T) {
	s := openFresh(t)
	ctx := t.Context()
	for _, key := range []string{"\xff\xfe", "a\x00b"} {
		for name, call := range map[string]func() error{
			"GetOrder":        func() error { _, err := s.GetOrder(ctx, acme.OrderID(key)); return err },
			"GetAuthz":        func() error { _, err := s.GetAuthz(ctx, acme.AuthzID(key)); return err },
			"GetChallenge":    func() error { _, err := s.GetChallenge(ctx, acme.ChallengeID(key)); return err },
			"GetCertificate":  func() error { _, err := s.GetCertificate(ctx, key); return err },
			"GetAccountByKey": func() error { _, err := s.GetAccountByKey(ctx, acme.Thumbprint(key)); return err },
			"GetEABKey":       func() error { _, err := s.GetEABKey(ctx, key); return err },
			"ReplacingOrder":  func() error { _, err := s.ReplacingOrder(ctx, key); return err },
			"RevokeCertificate": func() error {
				return s.RevokeCertificate(ctx, key, 0, fixedNow(), nil)
			},
		} {
			if err := call(); !errors.Is(err, acme.ErrNotFound) {
				t.Errorf("%s(%q): got %v, want an error wrapping %v", name, key, err, acme.ErrNotFound)
			}
		}
		if accts, _, err := s.ListAccounts(ctx, acme.AccountQuery{Search: key}); err != nil || len(accts) != 0 {
			t.Errorf("ListAccounts(search %q) = %v, %v; want none", key, accts, err)
		}
	}
}

// TestSurvivesConnectionKill: when the server ends the store's
// connections (a restart, a failover, an administrator), calls fail with
// plain errors, never ErrNotFound or ErrConflict, until the pool has
// replaced them; then everything works again without reopening the store.
func TestSurvivesConnectionKill(t *testing.T) {
	schema, dsn := freshSchema(t)
	s := openDSN(t, dsn)
	ctx := t.Context()
	a, c := seed(t, s)
	// Open several connections, so that the kill hits idle ones too.
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { s.GetAccount(ctx, a.ID) })
	}
	wg.Wait()

	var killed int
	if err := adminConn(t).QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = $1 AND pid <> pg_backend_pid()`, schema).Scan(&killed); err != nil {
		t.Fatalf("terminating the store's connections: %v", err)
	}
	if killed == 0 {
		t.Fatal("found no connection of the store to terminate")
	}

	// Bounded retry in the test, not in the store: at most 100 attempts
	// over 20 seconds.
	deadline := time.Now().Add(20 * time.Second)
	var (
		err      error
		failures int
	)
	for attempt := 0; attempt < 100 && time.Now().Before(deadline); attempt++ {
		_, err = s.GetCertificate(ctx, c.Serial)
		if err == nil {
			break
		}
		failures++
		t.Logf("attempt %d after killing %d connections: %v", attempt, killed, err)
		if errors.Is(err, acme.ErrNotFound) || errors.Is(err, acme.ErrConflict) {
			t.Fatalf("after the kill: GetCertificate: %v, which wraps a sentinel; want a plain error", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("the store did not recover from the killed connections: %v", err)
	}
	t.Logf("recovered after %d failed calls", failures)
	// Every kind of call works again: reads, transactions, CAS.
	if err := s.Ping(ctx); err != nil {
		t.Errorf("Ping after recovery: %v", err)
	}
	b, c2 := seed(t, s)
	if err := s.RevokeCertificate(ctx, c2.Serial, 1, fixedNow(), nil); err != nil {
		t.Errorf("RevokeCertificate after recovery: %v", err)
	}
	if got, err := s.GetAccount(ctx, b.ID); err != nil || got.KeyThumbprint != b.KeyThumbprint {
		t.Errorf("GetAccount after recovery = %v, %v", got, err)
	}
}

// TestPingFailsWhenClosed: /readyz reports a closed pool.
func TestPingFailsWhenClosed(t *testing.T) {
	s := openFresh(t)
	if err := s.Ping(t.Context()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	s.Close()
	if err := s.Ping(t.Context()); err == nil {
		t.Error("Ping after Close: nil, want an error")
	}
	if _, err := s.GetAccount(t.Context(), "1"); err == nil || errors.Is(err, acme.ErrNotFound) {
		t.Errorf("GetAccount after Close: %v, want a plain error", err)
	}
}

// TestStoreStats: the pool's figures as the metrics read them. MaxConns is
// the configured cap; a connection held by a transaction is in use, and a
// query that finds all of them busy waits and is counted.
func TestStoreStats(t *testing.T) {
	s := openFresh(t)
	ctx := t.Context()
	if st := s.StoreStats(); st.MaxConns != 8 || st.ConnsInUse != 0 || st.QueuedWrites != 0 {
		t.Fatalf("StoreStats of an idle store = %+v, want MaxConns 8 and nothing in use", st)
	}
	// A ping waits while every connection is held; how soon it gets to
	// wait is up to the scheduler, so a few tries give it longer.
	for try, pause := range []time.Duration{20 * time.Millisecond, 200 * time.Millisecond, time.Second} {
		var held []pgx.Tx
		for range 8 {
			tx, err := s.pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			held = append(held, tx)
		}
		st := s.StoreStats()
		if st.ConnsInUse != 8 || st.Conns != 8 {
			t.Errorf("StoreStats with 8 transactions open = %+v, want 8 connections, all in use", st)
		}
		done := make(chan error, 1)
		go func() { done <- s.Ping(ctx) }()
		time.Sleep(pause)
		for _, tx := range held {
			if err := tx.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if err := <-done; err != nil {
			t.Fatalf("Ping: %v", err)
		}
		after := s.StoreStats()
		if after.ConnsInUse != 0 {
			t.Errorf("StoreStats after the transactions ended = %+v, want nothing in use", after)
		}
		if after.ConnWaits == st.ConnWaits+1 && after.ConnWait > st.ConnWait {
			return
		}
		t.Logf("try %d: the ping did not wait (ConnWaits %d, then %d)", try+1, st.ConnWaits, after.ConnWaits)
	}
	t.Error("a ping made while every connection was held was never counted as waiting")
}
