package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/storage/postgres"
	"github.com/weir-pki/weir/storage/postgres/pgtest"
)

// postgresSchema returns a DSN on a fresh schema of the test server.
func postgresSchema(t *testing.T) string {
	t.Helper()
	_, dsn := pgtest.Schema(t, "weir_e2e_")
	return dsn
}

// TestPostgresEndToEnd: weir on PostgreSQL issues a certificate to an
// x/crypto/acme client, stores it there, revokes it and lists it on the
// CRL.
func TestPostgresEndToEnd(t *testing.T) {
	dsn := postgresSchema(t)
	e := startEnv(t, func(c *Config) {
		c.Storage = StorageConfig{Driver: driverPostgres, DSN: dsn, MaxConns: 8}
	})
	if _, ok := e.srv.store.(*postgres.Store); !ok {
		t.Fatalf("the server's store is a %T, want *postgres.Store", e.srv.store)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	c := e.client(newKey(t))
	if _, err := c.Register(ctx, &xacme.Account{Contact: []string{"mailto:ops@example.org"}}, xacme.AcceptTOS); err != nil {
		t.Fatalf("register: %v", err)
	}
	certKey := newKey(t)
	chain, certURL := e.issue(ctx, c, certKey, "http-01", xacme.DomainIDs("pg.weir.test", "www.pg.weir.test")...)
	leaf := e.verifyChain(chain, "pg.weir.test", "www.pg.weir.test")
	serial := ca.SerialHex(leaf.SerialNumber)

	stored, err := e.srv.store.GetCertificate(ctx, serial)
	if err != nil {
		t.Fatalf("the certificate is not in PostgreSQL: %v", err)
	}
	if !bytes.Equal(stored.DER, chain[0]) {
		t.Error("the stored certificate differs from the one served")
	}
	if fetched, err := c.FetchCert(ctx, certURL, true); err != nil || len(fetched) != 2 || !bytes.Equal(fetched[0], chain[0]) {
		t.Fatalf("fetch cert: %d certs, %v", len(fetched), err)
	}

	if err := c.RevokeCert(ctx, certKey, chain[0], xacme.CRLReasonKeyCompromise); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	if got, ok := e.crlSerials(leaf)[leaf.SerialNumber.String()]; !ok || got != int(xacme.CRLReasonKeyCompromise) {
		t.Errorf("CRL: serial %s with reason %d (listed %v), want keyCompromise", leaf.SerialNumber, got, ok)
	}
	if stored, err = e.srv.store.GetCertificate(ctx, serial); err != nil || !stored.Revoked() {
		t.Errorf("stored certificate after revocation: revoked %v, %v", stored != nil && stored.Revoked(), err)
	}

	// /readyz checks PostgreSQL.
	res, err := e.http.Get(e.base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("/readyz: %d, want 200", res.StatusCode)
	}
}

// TestMigratePostgres: weir migrate reads the DSN from dsn-file, applies
// the migrations once, and says which it applied.
func TestMigratePostgres(t *testing.T) {
	dsn := postgresSchema(t)
	dir := t.TempDir()
	dsnFile := filepath.Join(dir, "dsn")
	if err := os.WriteFile(dsnFile, []byte(dsn+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(dir, "weir.yaml")
	cfg := "data-dir: " + filepath.Join(dir, "data") + "\nstorage: { driver: postgres, dsn-file: " + dsnFile + " }\n"
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	for i, wantNow := range []int{6, 0} { // versions applied by this run
		var stdout, stderr bytes.Buffer
		if code := run([]string{"migrate", "-config", cfgFile}, &stdout, &stderr); code != 0 {
			t.Fatalf("migrate %d: exit %d: %s", i, code, stderr.String())
		}
		out := stdout.String()
		if !strings.HasPrefix(out, "storage postgres (PostgreSQL): schema version 6\n") ||
			!strings.Contains(out, "  0001 init") || !strings.Contains(out, "  0002 nonces") || !strings.Contains(out, "  0003 leases") ||
			!strings.Contains(out, "  0004 finalize_leases") || !strings.Contains(out, "  0005 drop_certificates_account") ||
			!strings.Contains(out, "  0006 issuance_indexes") {
			t.Errorf("migrate %d: output\n%s\nwant schema version 6 with 0001 init, 0002 nonces, 0003 leases, 0004 finalize_leases, 0005 drop_certificates_account and 0006 issuance_indexes", i, out)
		}
		if got := strings.Count(out, "(applied now)"); got != wantNow {
			t.Errorf("migrate %d: %d versions applied now, want %d:\n%s", i, got, wantNow, out)
		}
		if strings.Contains(out, dsn) {
			t.Errorf("migrate %d printed the DSN", i)
		}
	}
}

// TestBackupRefusesPostgres: weir backup has no PostgreSQL snapshot to
// make, so it refuses and points at pg_dump instead of copying a data
// directory that would restore as an empty CA.
func TestBackupRefusesPostgres(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "weir.yaml")
	cfg := "data-dir: " + dir + "\nstorage: { driver: postgres, dsn: \"postgres://weir@db.internal/weir\" }\n"
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "backup")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"backup", "-config", cfgFile, "-out", out}, &stdout, &stderr); code != 1 {
		t.Fatalf("backup with driver postgres: exit %d, want 1", code)
	}
	if !strings.Contains(stderr.String(), "pg_dump") {
		t.Errorf("backup with driver postgres: %q, want a pointer to pg_dump", stderr.String())
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("backup with driver postgres created the output directory")
	}
}
