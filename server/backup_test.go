// SPDX-License-Identifier: Apache-2.0

package server

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/web/admin"
)

// TestBackupRestore: weir backup copies a running server's data directory,
// and a server started on the copy has the same CA and HTTPS certificate,
// serves the certificates issued before the backup to the same account,
// and keeps the limiter's state.
func TestBackupRestore(t *testing.T) {
	orders := ratelimit.OrderCreationConfig{Enabled: true, OrdersPerAccountPerHour: 20, OrderBurst: 3, SANBudgetPerAccountPerHour: 100}
	e := startEnv(t, func(c *Config) { c.RateLimiting.OrderCreation = orders })
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	acctKey := acmeenv.NewKey(t)
	c := e.Client(acctKey)
	if _, err := c.Register(ctx, &xacme.Account{}, xacme.AcceptTOS); err != nil {
		t.Fatal(err)
	}
	chain, certURL := e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.DomainIDs("backup.weir.test")...)
	var cred admin.CredentialView // a named admin credential: in weir.db, so in its snapshot
	e.cli.JSON(t, &cred, "admin", "token", "add", "ci-backup", "--role", "operate")

	out := filepath.Join(t.TempDir(), "backup")
	var stdout, stderr bytes.Buffer
	if code := builder.Run(t, []string{"backup", "-config", e.srv.configPath, "-out", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("backup: exit %d: %s", code, stderr.String())
	}
	for _, w := range []string{fileCAIntKey, fileTLSKey, "admin-token", "weir.db (snapshot)", "ratelimit.db (snapshot)"} {
		if !strings.Contains(stdout.String(), "  "+w+"\n") {
			t.Errorf("backup output does not list %s:\n%s", w, stdout.String())
		}
	}
	for name, mode := range map[string]os.FileMode{fileCARootKey: 0o600, fileCAIntKey: 0o600, fileTLSKey: 0o600, "admin-token": 0o600, "weir.db": 0o600, "ratelimit.db": 0o600, fileRootPEM: 0o644, fileCARootCRL: 0o644} {
		st, err := os.Stat(dataPath(out, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
		} else if st.Mode().Perm() != mode {
			t.Errorf("%s: mode %04o, want %04o", name, st.Mode().Perm(), mode)
		}
	}
	if code := builder.Run(t, []string{"backup", "-config", e.srv.configPath, "-out", out}, &stdout, &stderr); code != 1 {
		t.Errorf("backup into a non-empty directory: exit %d, want 1", code)
	}

	// Restore: a server on the copy.
	r := startEnv(t, func(c *Config) {
		c.DataDir = out
		c.RateLimiting.OrderCreation = orders
	})
	if r.srv.rootFP != e.srv.rootFP {
		t.Errorf("restored root %s, want %s", r.srv.rootFP, e.srv.rootFP)
	}
	if !r.srv.svc.CA().Hierarchy().Intermediate.Equal(e.srv.svc.CA().Hierarchy().Intermediate) {
		t.Error("the restored server has another intermediate")
	}
	if !r.srv.serving.leaf().Equal(e.srv.serving.leaf()) {
		t.Error("the restored server issued itself a new HTTPS certificate")
	}
	rc := r.Client(acctKey)
	fetched, err := rc.FetchCert(ctx, r.Base+strings.TrimPrefix(certURL, e.Base), true)
	if err != nil {
		t.Fatalf("fetching the certificate from the restored server: %v", err)
	}
	if len(fetched) != len(chain) || !bytes.Equal(fetched[0], chain[0]) {
		t.Errorf("the restored server serves another certificate")
	}
	if c := bearerStatus(t, r, cred.Token, "/api/v1/whoami"); c != http.StatusOK {
		t.Errorf("the admin credential made before the backup, on the restored server: %d, want 200", c)
	}
	// The limiter's state came along: one order of the burst of 3 was spent.
	_, kid := r.RawAccount(acctKey)
	acmeenv.WantStatus(t, r.RawOrder(acctKey, kid, "r1.weir.test"), 201)
	acmeenv.WantStatus(t, r.RawOrder(acctKey, kid, "r2.weir.test"), 201)
	acmeenv.Want429(t, r.RawOrder(acctKey, kid, "r3.weir.test"), "order-creation", strings.TrimPrefix(kid, r.Base+"/acme/account/"))
}
