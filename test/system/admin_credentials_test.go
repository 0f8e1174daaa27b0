// SPDX-License-Identifier: Apache-2.0

package system

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weir-pki/weir/server"
	"github.com/weir-pki/weir/web/admin"
)

// credentialsPollLimit is the generous upper bound within which a replica
// must follow a credential added or revoked on another; the design's
// bound is admin.CredentialsMaxAge.
const credentialsPollLimit = 15 * time.Second

// TestAdminCredentialsAcrossReplicas: two replicas on one PostgreSQL
// schema. A read credential added through A works on B (its role too: an
// operate action is refused there); revoked through A, its bearer token is
// refused on B and its dashboard session on B ends, each within the bound.
// The token file of each replica stays its own.
func TestAdminCredentialsAcrossReplicas(t *testing.T) {
	dsn := postgresSchema(t)
	pg := func(c *server.Config) {
		c.Storage = server.StorageConfig{Driver: server.DriverPostgres, DSN: dsn, MaxConns: 4}
	}
	a, b := startEnv(t, pg), startEnv(t, pg)
	fb := &adminFixture{e: b}
	whoami := func(e *env, tok string) int { t.Helper(); return bearerStatus(t, e, tok, "/api/v1/whoami") }

	var ci admin.CredentialView
	a.cli.JSON(t, &ci, "admin", "token", "add", "ci", "--role", "read")
	if ci.Token == "" || ci.Role != admin.RoleRead {
		t.Fatalf("weir admin token add on A: %+v", ci)
	}
	if c := whoami(a, ci.Token); c != http.StatusOK {
		t.Fatalf("the new token on A: %d, want 200 at once", c)
	}
	waitCredentials(t, "the token added on A works on B", func() bool { return whoami(b, ci.Token) == http.StatusOK })
	if c := bearerStatus(t, b, ci.Token, "/api/v1/crl/regenerate"); c != http.StatusForbidden {
		t.Errorf("an operate action with the read credential on B: %d, want 403", c)
	}
	if out := b.cli.Run(t, 0, "admin", "token", "list"); !strings.Contains(out, "ci") {
		t.Errorf("weir admin token list on B lacks ci:\n%s", out)
	}
	fb.token = ci.Token
	fb.session, _ = fb.login(t)
	if !fb.sessionLive(t) {
		t.Fatal("ci's dashboard session on B does not open the API")
	}

	a.cli.Run(t, 0, "admin", "token", "revoke", "ci")
	if c := whoami(a, ci.Token); c != http.StatusUnauthorized {
		t.Errorf("the revoked token on A: %d, want 401 at once", c)
	}
	waitCredentials(t, "the token revoked on A is refused on B", func() bool { return whoami(b, ci.Token) == http.StatusUnauthorized })
	if fb.sessionLive(t) {
		t.Error("ci's dashboard session on B outlived the revocation")
	}
	// Each replica's token file is its own credential, never in the store.
	for _, e := range []*env{a, b} {
		tok := e.adminToken(t)
		if c := whoami(e, tok); c != http.StatusOK {
			t.Errorf("the token file's token on %s: %d, want 200", e.adminURL, c)
		}
	}
}

// TestAdminCredentialsStoreDown: weir on PostgreSQL whose credentials
// table cannot be read (renamed away, so every read of it fails while the
// rest of the store works). A named credential is refused within the
// bound (fail closed), the token file's still gets in, listing the
// credentials says why it cannot; once the table is back, the named one
// works again.
func TestAdminCredentialsStoreDown(t *testing.T) {
	dsn := postgresSchema(t)
	e := startEnv(t, func(c *server.Config) {
		c.Storage = server.StorageConfig{Driver: server.DriverPostgres, DSN: dsn, MaxConns: 4}
	})
	var ci admin.CredentialView
	e.cli.JSON(t, &ci, "admin", "token", "add", "ci", "--role", "read")
	whoami := func(tok string) int { t.Helper(); return bearerStatus(t, e, tok, "/api/v1/whoami") }
	if c := whoami(ci.Token); c != http.StatusOK {
		t.Fatalf("the new token: %d, want 200", c)
	}
	ddl := func(sql string) {
		t.Helper()
		conn, err := pgx.Connect(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.WithoutCancel(t.Context()))
		if _, err := conn.Exec(t.Context(), sql); err != nil {
			t.Fatal(err)
		}
	}
	ddl(`ALTER TABLE admin_credentials RENAME TO admin_credentials_away`)
	waitCredentials(t, "a named credential is refused while its table cannot be read", func() bool { return whoami(ci.Token) == http.StatusUnauthorized })
	if c := whoami(e.adminToken(t)); c != http.StatusOK {
		t.Errorf("the token file's token while the credentials cannot be read: %d, want 200", c)
	}
	if out := e.cli.Run(t, 1, "admin", "token", "list"); !strings.Contains(out, "cannot be read or written in the store") {
		t.Errorf("weir admin token list while the credentials cannot be read:\n%s", out)
	}
	ddl(`ALTER TABLE admin_credentials_away RENAME TO admin_credentials`)
	waitCredentials(t, "the named credential works again once its table is back", func() bool { return whoami(ci.Token) == http.StatusOK })
}

// waitCredentials polls cond every 50 ms until it holds, failing the test if it
// does not within credentialsPollLimit (and 400 tries); it logs how long
// it took.
func waitCredentials(t *testing.T, what string, cond func() bool) {
	t.Helper()
	start := time.Now()
	for i := 0; ; i++ {
		if cond() {
			t.Logf("%s after %v", what, time.Since(start).Round(time.Millisecond))
			return
		}
		if i == 400 || time.Since(start) > credentialsPollLimit {
			t.Fatalf("%s: not within %v", what, credentialsPollLimit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
