// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/migrations"
	"github.com/weir-pki/weir/storage/storagetest"
)

// fixedNow is the clock of the stores under test.
func fixedNow() time.Time { return time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC) }

// openAt opens the store at path and closes it when the test ends.
func openAt(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(t.Context(), path, fixedNow)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// openTemp opens a store in a new file of a temporary directory.
func openTemp(t *testing.T) *Store {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "weir.db"))
}

func TestContract(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) acme.Store { return openTemp(t) })
}

// seed stores an account and an issued certificate and returns them.
func seed(t *testing.T, s *Store) (*acme.Account, *acme.Certificate) {
	t.Helper()
	ctx := t.Context()
	a := &acme.Account{Key: []byte(`{"kty":"EC"}`), KeyThumbprint: "thumb", Status: acme.StatusValid, CreatedAt: fixedNow()}
	if err := s.CreateAccount(ctx, a); err != nil {
		t.Fatalf("CreateAccount: %v", err)
	}
	o := &acme.Order{ID: "order-1", AccountID: a.ID, Status: acme.StatusProcessing,
		Identifiers: []acme.Identifier{{Type: acme.IdentifierDNS, Value: "example.com"}},
		Expires:     fixedNow().Add(time.Hour), CreatedAt: fixedNow()}
	if err := s.CreateOrder(ctx, o, nil); err != nil {
		t.Fatalf("CreateOrder: %v", err)
	}
	c := &acme.Certificate{Serial: "01", AccountID: a.ID, OrderID: o.ID, DER: []byte("der"),
		Names: []string{"example.com"}, NotBefore: fixedNow(), NotAfter: fixedNow().Add(time.Hour), IssuedAt: fixedNow()}
	if err := s.FinalizeOrder(ctx, c); err != nil {
		t.Fatalf("FinalizeOrder: %v", err)
	}
	return a, c
}

// knownVersions returns the number of embedded migrations.
func knownVersions(t *testing.T) int {
	t.Helper()
	ms, err := migrations.List(migrations.SQLite(), migrations.SQLiteDir)
	if err != nil {
		t.Fatalf("migrations.List: %v", err)
	}
	return len(ms)
}

func TestReopenIsIdempotent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weir.db")
	s, err := Open(t.Context(), path, fixedNow)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	a, c := seed(t, s)
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	for i := range 2 {
		s := openAt(t, path)
		var n int
		if err := s.DB().QueryRowContext(t.Context(), `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil {
			t.Fatalf("counting migrations: %v", err)
		}
		if want := knownVersions(t); n != want {
			t.Errorf("reopen %d: got %d rows in schema_migrations, want %d", i, n, want)
		}
		if _, err := s.GetAccount(t.Context(), a.ID); err != nil {
			t.Errorf("reopen %d: GetAccount: %v", i, err)
		}
		if _, err := s.GetCertificate(t.Context(), c.Serial); err != nil {
			t.Errorf("reopen %d: GetCertificate: %v", i, err)
		}
		if err := s.Close(); err != nil { // releases the lock for the next Open
			t.Fatalf("reopen %d: Close: %v", i, err)
		}
	}
}

func TestFileMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weir.db")
	s := openAt(t, path)
	seed(t, s)
	for _, p := range []string{path, path + "-wal", path + "-shm", path + ".lock"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatalf("Stat: %v", err)
		}
		if got := fi.Mode().Perm(); got != 0o600 {
			t.Errorf("mode of %s: got %v, want %v", filepath.Base(p), got, os.FileMode(0o600))
		}
	}
}

func TestPragmas(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	for pragma, want := range map[string]string{"journal_mode": "wal", "busy_timeout": "5000", "query_only": "1"} {
		var got string
		if err := s.DB().QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&got); err != nil {
			t.Fatalf("PRAGMA %s: %v", pragma, err)
		}
		if got != want {
			t.Errorf("reader PRAGMA %s: got %q, want %q", pragma, got, want)
		}
	}
	for pragma, want := range map[string]string{"synchronous": "2", "foreign_keys": "1", "busy_timeout": "5000"} {
		var got string
		if err := s.w.QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&got); err != nil {
			t.Fatalf("PRAGMA %s: %v", pragma, err)
		}
		if got != want {
			t.Errorf("writer PRAGMA %s: got %q, want %q", pragma, got, want)
		}
	}
	if _, err := s.DB().ExecContext(ctx, `DELETE FROM accounts`); err == nil {
		t.Error("DELETE on the reader pool succeeded, want a query-only error")
	}
}

func TestNewerSchemaIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weir.db")
	s, err := Open(t.Context(), path, fixedNow)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if _, err := s.w.ExecContext(t.Context(),
		`INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, 'from_the_future', 'x')`); err != nil {
		t.Fatalf("inserting a future migration: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	s, err = Open(t.Context(), path, fixedNow)
	if err == nil {
		s.Close()
		t.Fatal("Open of a database with a newer schema succeeded")
	}
	var tooNew *SchemaTooNewError
	if !errors.As(err, &tooNew) {
		t.Fatalf("Open: got %v, want a *SchemaTooNewError", err)
	}
	if tooNew.Database != 9999 || tooNew.Known != knownVersions(t) {
		t.Errorf("SchemaTooNewError: got database %d, known %d; want 9999, %d", tooNew.Database, tooNew.Known, knownVersions(t))
	}
}

func TestBackup(t *testing.T) {
	dir := t.TempDir()
	s := openAt(t, filepath.Join(dir, "weir.db"))
	a, c := seed(t, s)
	dest := filepath.Join(dir, "backup.db")
	if err := s.Backup(t.Context(), dest); err != nil {
		t.Fatalf("Backup: %v", err)
	}
	fi, err := os.Stat(dest)
	if err != nil {
		t.Fatalf("Stat: %v", err)
	}
	if got := fi.Mode().Perm(); got != 0o600 {
		t.Errorf("backup mode: got %v, want %v", got, os.FileMode(0o600))
	}

	// The store stays usable, and later writes are not in the backup.
	later := &acme.Account{Key: []byte(`{}`), KeyThumbprint: "later", Status: acme.StatusValid, CreatedAt: fixedNow()}
	if err := s.CreateAccount(t.Context(), later); err != nil {
		t.Fatalf("CreateAccount after Backup: %v", err)
	}

	b := openAt(t, dest)
	got, err := b.GetAccount(t.Context(), a.ID)
	if err != nil {
		t.Fatalf("backup: GetAccount: %v", err)
	}
	if got.KeyThumbprint != a.KeyThumbprint {
		t.Errorf("backup: account key: got %q, want %q", got.KeyThumbprint, a.KeyThumbprint)
	}
	cert, err := b.GetCertificate(t.Context(), c.Serial)
	if err != nil {
		t.Fatalf("backup: GetCertificate: %v", err)
	}
	if string(cert.DER) != string(c.DER) {
		t.Errorf("backup: certificate DER: got %q, want %q", cert.DER, c.DER)
	}
	if _, err := b.GetAccountByKey(t.Context(), later.KeyThumbprint); !errors.Is(err, acme.ErrNotFound) {
		t.Errorf("backup: account created after Backup: got %v, want an error wrapping %v", err, acme.ErrNotFound)
	}

	if err := s.Backup(t.Context(), dest); err == nil {
		t.Error("Backup onto an existing file succeeded, want an error")
	}
}

func TestTimesKeepNanoseconds(t *testing.T) {
	s := openTemp(t)
	created := time.Date(2031, 5, 6, 7, 8, 9, 123456789, time.FixedZone("X", -5*3600))
	a := &acme.Account{Key: []byte(`{}`), KeyThumbprint: "t", Status: acme.StatusValid, CreatedAt: created}
	if err := s.CreateAccount(t.Context(), a); err != nil {
		t.Fatalf("CreateAccount: %v", err)
	}
	got, err := s.GetAccount(t.Context(), a.ID)
	if err != nil {
		t.Fatalf("GetAccount: %v", err)
	}
	if !got.CreatedAt.Equal(created) || got.CreatedAt.Location() != time.UTC {
		t.Errorf("CreatedAt: got %v, want %v in UTC", got.CreatedAt, created)
	}

	far := &acme.Account{Key: []byte(`{}`), KeyThumbprint: "far", Status: acme.StatusValid,
		CreatedAt: time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)}
	if err := s.CreateAccount(t.Context(), far); err == nil {
		t.Error("CreateAccount with a time in year 9999 succeeded, want an out-of-range error")
	}
}

func TestCreateOrderChecksReusedAuthzs(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	var accts [2]*acme.Account
	for i := range accts {
		accts[i] = &acme.Account{Key: []byte(`{}`), KeyThumbprint: acme.Thumbprint(rune('a' + i)), Status: acme.StatusValid, CreatedAt: fixedNow()}
		if err := s.CreateAccount(ctx, accts[i]); err != nil {
			t.Fatalf("CreateAccount: %v", err)
		}
	}
	az := &acme.Authorization{ID: "az", AccountID: accts[0].ID, Status: acme.StatusValid,
		Identifier: acme.Identifier{Type: acme.IdentifierDNS, Value: "example.com"}, Expires: fixedNow().Add(time.Hour)}
	if err := s.CreateOrder(ctx, &acme.Order{ID: "o1", AccountID: accts[0].ID, AuthzIDs: []acme.AuthzID{"az"}, Status: acme.StatusPending, Expires: fixedNow()},
		[]*acme.Authorization{az}); err != nil {
		t.Fatalf("CreateOrder: %v", err)
	}

	for name, o := range map[string]*acme.Order{
		"unknown authorization":           {ID: "o2", AccountID: accts[0].ID, AuthzIDs: []acme.AuthzID{"nope"}, Status: acme.StatusPending},
		"another account's authorization": {ID: "o3", AccountID: accts[1].ID, AuthzIDs: []acme.AuthzID{"az"}, Status: acme.StatusPending},
		"unknown account":                 {ID: "o4", AccountID: "12345", Status: acme.StatusPending},
	} {
		if err := s.CreateOrder(ctx, o, nil); !errors.Is(err, acme.ErrNotFound) {
			t.Errorf("CreateOrder(%s): got %v, want an error wrapping %v", name, err, acme.ErrNotFound)
		}
		if _, err := s.GetOrder(ctx, o.ID); !errors.Is(err, acme.ErrNotFound) {
			t.Errorf("GetOrder after CreateOrder(%s) failed: got %v, want an error wrapping %v", name, err, acme.ErrNotFound)
		}
	}
}

// TestZeroTimeIsNull checks the stored form of the zero time and of an
// unrevoked certificate, which operations tooling may query directly.
func TestZeroTimeIsNull(t *testing.T) {
	s := openTemp(t)
	_, c := seed(t, s)
	var revokedAt sql.NullInt64
	if err := s.DB().QueryRowContext(t.Context(),
		`SELECT revoked_at FROM certificates WHERE serial = ?`, c.Serial).Scan(&revokedAt); err != nil {
		t.Fatalf("reading revoked_at: %v", err)
	}
	if revokedAt.Valid {
		t.Errorf("revoked_at of an unrevoked certificate: got %d, want NULL", revokedAt.Int64)
	}
}

// TestOneStorePerFile: while a store has the file open, a second Open of
// it (another process, in production) is refused, writing nothing, since
// the object cache is only true while its writer is the only one; once
// the first is closed, the file opens again with what was written.
func TestOneStorePerFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weir.db")
	s1, err := Open(t.Context(), path, fixedNow)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	a, c := seed(t, s1)
	s2, err := Open(t.Context(), path, fixedNow)
	if err == nil {
		s2.Close()
		t.Fatal("a second Open of an open database succeeded")
	}
	if !strings.Contains(err.Error(), "in use by another process") {
		t.Errorf("second Open: got %v, want an error saying the database is in use", err)
	}
	if _, err := s1.GetAccount(t.Context(), a.ID); err != nil {
		t.Errorf("the first store after the refused Open: GetAccount: %v", err)
	}
	if err := s1.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s3 := openAt(t, path)
	if _, err := s3.GetCertificate(t.Context(), c.Serial); err != nil {
		t.Errorf("reopened after Close: GetCertificate: %v", err)
	}
}
