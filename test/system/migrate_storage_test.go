// SPDX-License-Identifier: Apache-2.0

package system

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/server"
	"github.com/weir-pki/weir/storage/postgres"
	"github.com/weir-pki/weir/storage/postgres/pgtest"
	"github.com/weir-pki/weir/storage/sqlite"
	"github.com/weir-pki/weir/storage/transfer"
	"github.com/weir-pki/weir/web/admin"
)

// migrateStorageRun runs weir migrate-storage with args and returns its
// exit code and output.
func migrateStorageRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := builder.Run(t, append([]string{"migrate-storage"}, args...), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// copiedCounts reads the per-table rows that weir migrate-storage printed.
func copiedCounts(t *testing.T, out string) transfer.Counts {
	t.Helper()
	c := transfer.Counts{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		for _, tbl := range transfer.Tables() {
			if f[0] == string(tbl) {
				n, err := strconv.ParseInt(f[1], 10, 64)
				if err != nil {
					t.Fatalf("output line %q: %v", line, err)
				}
				c[tbl] = n
			}
		}
	}
	if len(c) != len(transfer.Tables()) {
		t.Fatalf("weir migrate-storage printed the rows of %d tables, want %d:\n%s", len(c), len(transfer.Tables()), out)
	}
	return c
}

// sqliteCounts counts the rows of every table of the SQLite file at path.
func sqliteCounts(t *testing.T, path string) transfer.Counts {
	t.Helper()
	s, err := sqlite.Open(t.Context(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := transfer.Counts{}
	for _, tbl := range transfer.Tables() {
		var n int64
		if err := s.DB().QueryRowContext(t.Context(), "SELECT COUNT(*) FROM "+string(tbl)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		c[tbl] = n
	}
	return c
}

// postgresCounts counts the rows of every table in the schema of dsn.
func postgresCounts(t *testing.T, dsn string) transfer.Counts {
	t.Helper()
	c := transfer.Counts{}
	for _, tbl := range transfer.Tables() {
		var n int64
		if err := pgtest.Scan(t.Context(), dsn, "SELECT COUNT(*) FROM "+string(tbl), nil, &n); err != nil {
			t.Fatal(err)
		}
		c[tbl] = n
	}
	return c
}

// schemaTables counts the tables of the schema of dsn's search_path.
func schemaTables(t *testing.T, dsn string) int {
	t.Helper()
	var n int
	if err := pgtest.Scan(t.Context(), dsn, `SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema()`, nil, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// crlOn fetches e's CRL (at the path of the leaf's distribution point)
// and returns its entries, serial → reason.
func (e *env) crlOn(leaf *x509.Certificate) map[string]int {
	return e.CRLAt(e.onBase(leaf.CRLDistributionPoints[0]))
}

// issueOrder issues a certificate for name (http-01) and returns its
// chain, its URL and its order's URL.
func (e *env) issueOrder(ctx context.Context, c *xacme.Client, name string) ([][]byte, string, string) {
	e.t.Helper()
	o, err := c.AuthorizeOrder(ctx, xacme.DomainIDs(name))
	if err != nil {
		e.t.Fatalf("new-order: %v", err)
	}
	for _, u := range o.AuthzURLs {
		e.Solve(ctx, c, u, "http-01")
	}
	if o, err = c.WaitOrder(ctx, o.URI); err != nil {
		e.t.Fatalf("wait order: %v", err)
	}
	chain, certURL, err := c.CreateOrderCert(ctx, o.FinalizeURL, acmeenv.CSRFor(e.t, acmeenv.NewKey(e.t), name), true)
	if err != nil {
		e.t.Fatalf("finalize: %v", err)
	}
	return chain, certURL, o.URI
}

// TestMigrateStorage: a SQLite-backed weir with two accounts (one bound
// with EAB), certificates (one revoked), a renewal candidate and a pending
// order is stopped and moved to PostgreSQL with weir migrate-storage
// (refused while it runs); weir then starts on PostgreSQL with the same
// data directory and every client carries on: the old account keys find
// their accounts under the same IDs, their orders and certificates; a
// certificate of before the move is revoked through ACME and is on the
// CRL beside the one revoked before; one is renewed with ARI's replaces;
// the pending order completes; and every table holds as many rows as the
// SQLite file did.
func TestMigrateStorage(t *testing.T) {
	dsn := postgresSchema(t)
	dataDir := t.TempDir()
	cfgFile := filepath.Join(dataDir, "weir.yaml") // startEnv writes the server's config there
	var (
		rootFP                          string
		keyA, keyB                      *ecdsa.PrivateKey
		acctA, acctB                    string // account URLs
		eabKeyID                        string
		keepChain, revokedChain, bChain [][]byte
		keepCertURL, keepOrderURL       string
		pendingOrderURL                 string
		cred                            admin.CredentialView // a named admin credential, which moves too
	)
	t.Run("sqlite", func(t *testing.T) {
		e := startEnv(t, func(c *server.Config) { c.DataDir = dataDir })
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		rootFP = rootFingerprint(t, e.srv.RootPEM())
		keyA, keyB = acmeenv.NewKey(t), acmeenv.NewKey(t)
		clientA := e.Client(keyA)
		a, err := clientA.Register(ctx, &xacme.Account{Contact: []string{"mailto:a@example.org"}}, xacme.AcceptTOS)
		if err != nil {
			t.Fatal(err)
		}
		acctA = a.URI
		// Account B is in a tenant, which moves with its key.
		e.cli.Run(t, 0, "tenant", "create", "team-move", "--allow", ".move.weir.test")
		var k admin.EABKeyView
		e.cli.JSON(t, &k, "eab", "create", "--label", "team-move", "--tenant", "team-move")
		hmacKey, err := base64.RawURLEncoding.DecodeString(k.HMACKey)
		if err != nil {
			t.Fatal(err)
		}
		eabKeyID = k.KeyID
		e.cli.JSON(t, &cred, "admin", "token", "add", "ci-move", "--role", "read")
		b, err := e.eabRegister(ctx, keyB, k.KeyID, hmacKey)
		if err != nil {
			t.Fatal(err)
		}
		acctB = b.URI
		clientB := e.Client(keyB)

		keepChain, keepCertURL, keepOrderURL = e.issueOrder(ctx, clientA, "keep.move.weir.test")
		o, err := clientA.AuthorizeOrder(ctx, xacme.DomainIDs("later.move.weir.test"))
		if err != nil {
			t.Fatal(err)
		}
		pendingOrderURL = o.URI
		revokedChain, _ = e.Issue(ctx, clientA, acmeenv.NewKey(t), "dns-01", xacme.DomainIDs("gone.move.weir.test")...)
		if err := clientA.RevokeCert(ctx, nil, revokedChain[0], xacme.CRLReasonKeyCompromise); err != nil {
			t.Fatal(err)
		}
		bChain, _ = e.Issue(ctx, clientB, acmeenv.NewKey(t), "http-01", xacme.DomainIDs("renew.move.weir.test")...)

		// Refused while weir runs, before the target is touched.
		code, _, stderr := migrateStorageRun(t, "-config", cfgFile, "--from", "sqlite", "--to", "postgres", "--to-dsn", dsn)
		if code != 1 || !strings.Contains(stderr, "in use") || !strings.Contains(stderr, "stop weir") {
			t.Errorf("migrate-storage while weir runs: exit %d, %q; want 1 and an in-use error", code, stderr)
		}
		if n := schemaTables(t, dsn); n != 0 {
			t.Errorf("the refused migrate-storage created %d tables in the target", n)
		}
	})
	if t.Failed() {
		t.FailNow()
	}

	// weir is stopped: move it.
	code, out, stderr := migrateStorageRun(t, "-config", cfgFile, "--from", "sqlite", "--to", "postgres", "--to-dsn", dsn)
	if code != 0 {
		t.Fatalf("migrate-storage: exit %d\n%s%s", code, out, stderr)
	}
	t.Logf("weir migrate-storage:\n%s", out)
	for _, want := range []string{"verified", "driver: postgres", "dsn:", "data-dir " + dataDir} {
		if !strings.Contains(out, want) {
			t.Errorf("migrate-storage output lacks %q:\n%s", want, out)
		}
	}
	printed := copiedCounts(t, out)
	inSQLite := sqliteCounts(t, filepath.Join(dataDir, "weir.db"))
	inPostgres := postgresCounts(t, dsn)
	if err := transfer.Compare(inSQLite, printed); err != nil {
		t.Errorf("printed counts against SQLite: %v", err)
	}
	if err := transfer.Compare(inSQLite, inPostgres); err != nil {
		t.Errorf("PostgreSQL against SQLite: %v", err)
	}
	if inSQLite[transfer.Accounts] != 2 || inSQLite[transfer.EABKeys] != 1 || inSQLite[transfer.Certificates] != 3 || inSQLite[transfer.Orders] != 4 {
		t.Errorf("SQLite counts %v: want 2 accounts, 1 EAB key, 4 orders, 3 certificates", inSQLite)
	}

	// weir on PostgreSQL, same data directory.
	e := startEnv(t, func(c *server.Config) {
		c.DataDir = dataDir
		c.Storage = server.StorageConfig{Driver: server.DriverPostgres, DSN: dsn, MaxConns: 8}
	})
	if _, ok := e.srv.Store().(*postgres.Store); !ok {
		t.Fatalf("the server's store is a %T, want *postgres.Store", e.srv.Store())
	}
	if fp := rootFingerprint(t, e.srv.RootPEM()); fp != rootFP {
		t.Errorf("root %s after the move, want %s (the CA files stay in data-dir)", fp, rootFP)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	// The old keys find their accounts, with the same IDs.
	clientA := e.Client(keyA)
	a, err := clientA.GetReg(ctx, "")
	if err != nil {
		t.Fatalf("account A after the move: %v", err)
	}
	if a.URI != e.onBase(acctA) || a.Status != xacme.StatusValid || len(a.Contact) != 1 || a.Contact[0] != "mailto:a@example.org" {
		t.Errorf("account A after the move: %s %s %v; want %s, valid, its contact", a.URI, a.Status, a.Contact, e.onBase(acctA))
	}
	clientB := e.Client(keyB)
	if b, err := clientB.GetReg(ctx, ""); err != nil || b.URI != e.onBase(acctB) {
		t.Errorf("account B after the move: %v, %v; want %s", b, err, e.onBase(acctB))
	}
	if k, err := e.srv.Store().GetEABKey(ctx, eabKeyID); err != nil || string(k.BoundAccount) != e.accountID(e.onBase(acctB)) || k.Tenant != "team-move" {
		t.Errorf("EAB key after the move: %+v, %v; want bound to account B, of tenant team-move", k, err)
	}
	if tn, err := e.srv.Service().GetTenant(ctx, "team-move"); err != nil || len(tn.AllowedNames) != 1 || tn.AllowedNames[0] != ".move.weir.test" {
		t.Errorf("tenant after the move: %+v, %v; want its policy", tn, err)
	}
	// The admin credential moved with its role, its digest and its author.
	if c := bearerStatus(t, e, cred.Token, "/api/v1/whoami"); c != http.StatusOK {
		t.Errorf("the admin credential made before the move: %d, want 200", c)
	}
	if c := bearerStatus(t, e, cred.Token, "/api/v1/crl/regenerate"); c != http.StatusForbidden {
		t.Errorf("the read credential made before the move, an operate action: %d, want 403", c)
	}
	if l, err := e.srv.Store().ListAdminCredentials(ctx); err != nil || len(l) != 1 || l[0].CreatedBy != admin.RootName || l[0].Role != "read" {
		t.Errorf("the admin credentials after the move: %+v, %v", l, err)
	}
	// The old order and certificate, fetched as before.
	o, err := clientA.GetOrder(ctx, e.onBase(keepOrderURL))
	if err != nil || o.Status != xacme.StatusValid || o.CertURL != e.onBase(keepCertURL) {
		t.Fatalf("the old order after the move: %+v, %v", o, err)
	}
	fetched, err := clientA.FetchCert(ctx, o.CertURL, true)
	if err != nil || !bytes.Equal(fetched[0], keepChain[0]) {
		t.Fatalf("the old certificate after the move: %v", err)
	}

	// The certificate of before the move is revoked through ACME and is on
	// the CRL with the one revoked before the move.
	if err := clientA.RevokeCert(ctx, nil, keepChain[0], xacme.CRLReasonSuperseded); err != nil {
		t.Fatalf("revoking the old certificate: %v", err)
	}
	keepLeaf := e.VerifyChain(keepChain, "keep.move.weir.test")
	revokedLeaf, err := x509.ParseCertificate(revokedChain[0])
	if err != nil {
		t.Fatal(err)
	}
	crl := e.crlOn(keepLeaf)
	if r, ok := crl[keepLeaf.SerialNumber.String()]; !ok || r != int(xacme.CRLReasonSuperseded) {
		t.Errorf("CRL: the certificate revoked after the move: listed %v, reason %d; want superseded", ok, r)
	}
	if r, ok := crl[revokedLeaf.SerialNumber.String()]; !ok || r != int(xacme.CRLReasonKeyCompromise) {
		t.Errorf("CRL: the certificate revoked before the move: listed %v, reason %d; want keyCompromise", ok, r)
	}
	if len(crl) != 2 {
		t.Errorf("CRL lists %d certificates, want 2", len(crl))
	}

	// A renewal of B's certificate with replaces: its ARI certID resolves,
	// the authorization of before the move is reused, and the renewal
	// issues and is recorded as the replacement.
	bLeaf := e.VerifyChain(bChain, "renew.move.weir.test")
	certID := acme.CertID(bLeaf)
	if res, start, _ := e.RenewalInfo(t, certID); res.Status != http.StatusOK || start.IsZero() {
		t.Errorf("renewal-info of the old certificate: %d %s", res.Status, res.Body)
	}
	res := e.RawOrderReplaces(keyB, e.onBase(acctB), certID, "renew.move.weir.test")
	acmeenv.WantStatus(t, res, http.StatusCreated)
	var ro struct{ Status, Finalize, Replaces string }
	if err := json.Unmarshal(res.Body, &ro); err != nil || ro.Status != "ready" || ro.Replaces != certID {
		t.Fatalf("renewal order %+v (%v): want ready (the old authorization reused) replacing %s", ro, err, certID)
	}
	renewed, _, err := clientB.CreateOrderCert(ctx, ro.Finalize, acmeenv.CSRFor(t, acmeenv.NewKey(t), "renew.move.weir.test"), true)
	if err != nil {
		t.Fatalf("finalizing the renewal: %v", err)
	}
	e.VerifyChain(renewed, "renew.move.weir.test")
	if r, err := e.srv.Store().ReplacingOrder(ctx, certID); err != nil || r.Replaces != certID {
		t.Errorf("ReplacingOrder(%s): %+v, %v", certID, r, err)
	}

	// The pending order of before the move completes.
	po, err := clientA.GetOrder(ctx, e.onBase(pendingOrderURL))
	if err != nil || po.Status != xacme.StatusPending {
		t.Fatalf("the pending order after the move: %+v, %v", po, err)
	}
	for _, u := range po.AuthzURLs {
		e.Solve(ctx, clientA, u, "http-01")
	}
	if po, err = clientA.WaitOrder(ctx, po.URI); err != nil || po.Status != xacme.StatusReady {
		t.Fatalf("the pending order after solving: %+v, %v", po, err)
	}
	if _, _, err := clientA.CreateOrderCert(ctx, po.FinalizeURL, acmeenv.CSRFor(t, acmeenv.NewKey(t), "later.move.weir.test"), true); err != nil {
		t.Fatalf("finalizing the order of before the move: %v", err)
	}

	// New accounts are numbered after the old ones.
	c, err := e.Client(acmeenv.NewKey(t)).Register(ctx, &xacme.Account{}, xacme.AcceptTOS)
	if err != nil || e.accountID(c.URI) != "3" {
		t.Errorf("a new account after the move: %v, %v; want ID 3", c, err)
	}
}

// TestMigrateStorageRefusals: the flags it refuses; a missing SQLite file
// (not created); a target that already holds ACME state (and -force,
// which empties it first); and the target taken from a config that says
// driver postgres with dsn-file.
func TestMigrateStorageRefusals(t *testing.T) {
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	sqliteCfg := filepath.Join(dir, "sqlite.yaml")
	if err := os.WriteFile(sqliteCfg, []byte("data-dir: "+dataDir+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--from", "postgres", "--to", "sqlite", "--to-dsn", "postgres://x@127.0.0.1/y"}, "only --from sqlite --to postgres"},
		{[]string{}, "no target"},
		{[]string{"--to-dsn", "postgres://x@127.0.0.1/y", "--to-dsn-file", "f"}, "not both"},
		{[]string{"--to-dsn", "postgres://x@127.0.0.1/y"}, "no such file"}, // no weir.db yet
	} {
		code, _, stderr := migrateStorageRun(t, append([]string{"-config", sqliteCfg}, tc.args...)...)
		if code != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("migrate-storage %v: exit %d, %q; want 1 and %q", tc.args, code, stderr, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dataDir, "weir.db")); !os.IsNotExist(err) {
		t.Errorf("migrate-storage created the missing SQLite file (%v)", err)
	}

	dsn := postgresSchema(t)
	s, err := sqlite.Open(t.Context(), filepath.Join(dataDir, "weir.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateAccount(t.Context(), &acme.Account{Key: []byte(`{}`), KeyThumbprint: "t1", Status: acme.StatusValid, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	dsnFile := filepath.Join(dir, "dsn")
	if err := os.WriteFile(dsnFile, []byte(dsn+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pgCfg := filepath.Join(dir, "postgres.yaml")
	if err := os.WriteFile(pgCfg, []byte("data-dir: "+dataDir+"\nstorage: { driver: postgres, dsn-file: "+dsnFile+" }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := migrateStorageRun(t, "-config", pgCfg, "--from", "sqlite", "--to", "postgres")
	if code != 0 || !strings.Contains(out, "dsn-file: "+dsnFile) || strings.Contains(out, dsn) {
		t.Fatalf("migrate-storage to the config's dsn-file: exit %d\n%s%s\nwant success naming the dsn-file, not the DSN", code, out, stderr)
	}
	if c := copiedCounts(t, out); c[transfer.Accounts] != 1 {
		t.Errorf("copied %v, want 1 account", c)
	}

	// Again: the target holds the account now.
	code, out, stderr = migrateStorageRun(t, "-config", sqliteCfg, "--to-dsn-file", dsnFile)
	if code != 1 || !strings.Contains(stderr, "already holds ACME state (accounts 1)") || !strings.Contains(stderr, "-force") {
		t.Errorf("migrate-storage into a non-empty target: exit %d\n%s%s\nwant 1, the counts and a pointer to -force", code, out, stderr)
	}
	code, out, stderr = migrateStorageRun(t, "-config", sqliteCfg, "--to-dsn-file", dsnFile, "-force")
	if code != 0 || !strings.Contains(out, "emptied the target's tables first (accounts 1)") {
		t.Errorf("migrate-storage -force: exit %d\n%s%s", code, out, stderr)
	}
	if c := postgresCounts(t, dsn); c[transfer.Accounts] != 1 {
		t.Errorf("after -force the target holds %v, want the 1 account of the source", c)
	}
}
