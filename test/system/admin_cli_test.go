// SPDX-License-Identifier: Apache-2.0

package system

import (
	"context"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/internal/systest"
	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/server"
	"github.com/weir-pki/weir/web/admin"
)

func bucketOf(t *testing.T, bs []admin.BucketView, key string) admin.BucketView {
	t.Helper()
	for _, b := range bs {
		if b.Bucket == key {
			return b
		}
	}
	t.Fatalf("no bucket %s in %+v", key, bs)
	return admin.BucketView{}
}

// TestAdminCLIRateLimit: after a spend, ratelimit status shows it,
// explain predicts the next 429 (limit and Retry-After), and reset clears
// the bucket so the next order passes; on the SQLite and Redis backends.
func TestAdminCLIRateLimit(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		testAdminCLIRateLimit(t, func(c *server.Config) { c.RateLimiting.Backend = "sqlite" })
	})
	t.Run("redis", func(t *testing.T) {
		r := systest.StartRedis(t)
		testAdminCLIRateLimit(t, func(c *server.Config) {
			c.RateLimiting.Backend = "redis"
			c.RateLimiting.Redis.Addrs = []string{r.Addr()}
		})
	})
}

func testAdminCLIRateLimit(t *testing.T, backend func(*server.Config)) {
	e := startEnv(t, func(c *server.Config) {
		backend(c)
		c.RateLimiting.OrderCreation = ratelimit.OrderCreationConfig{Enabled: true, OrdersPerAccountPerHour: 20, OrderBurst: 2, SANBudgetPerAccountPerHour: 100}
		c.RateLimiting.PendingAuthorizations = ratelimit.PendingConfig{Enabled: true, Max: 30}
	})
	key := acmeenv.NewKey(t)
	_, kid := e.RawAccount(key)
	id := strings.TrimPrefix(kid, e.Base+"/acme/account/")
	bucket := "order-creation:" + id

	// Before any order: a full bucket.
	var st struct{ Buckets []admin.BucketView }
	e.cli.JSON(t, &st, "ratelimit", "status", "--account", id)
	if b := bucketOf(t, st.Buckets, bucket); b.Remaining != 2 || b.Capacity != 2 {
		t.Fatalf("fresh %s = %d/%d, want 2/2", bucket, b.Remaining, b.Capacity)
	}
	for i := range 2 {
		acmeenv.WantStatus(t, e.RawOrder(key, kid, "o"+strconv.Itoa(i)+".weir.test"), http.StatusCreated)
	}

	// status shows the spend: no order token left, 2 pending authorizations,
	// 2 of 100 SANs, and the failed-validation buckets of the names ordered.
	e.cli.JSON(t, &st, "ratelimit", "status", "--account", id)
	if b := bucketOf(t, st.Buckets, bucket); b.Remaining != 0 || b.NextAt == nil || b.FullAt == nil {
		t.Errorf("%s after 2 orders = %+v, want 0 left with a next and a full time", bucket, b)
	}
	if b := bucketOf(t, st.Buckets, "pending-authorizations:"+id); b.Remaining != 28 {
		t.Errorf("pending-authorizations = %d left, want 28", b.Remaining)
	}
	if b := bucketOf(t, st.Buckets, "san-budget:"+id); b.Remaining != 98 {
		t.Errorf("san-budget = %d left, want 98", b.Remaining)
	}
	bucketOf(t, st.Buckets, "failed-validation:"+id+":o1.weir.test")
	table := e.cli.Run(t, 0, "ratelimit", "status", "--account", id)
	if !strings.Contains(table, bucket) || !strings.Contains(table, "0/2") || !strings.Contains(table, "20 per 1h, burst 2") {
		t.Errorf("status table does not show %s at 0/2:\n%s", bucket, table)
	}
	// By bucket key too.
	e.cli.JSON(t, &st, "ratelimit", "status", bucket)
	if len(st.Buckets) != 1 || st.Buckets[0].Remaining != 0 {
		t.Errorf("status %s = %+v", bucket, st.Buckets)
	}

	// explain predicts the 429 the next order gets: same limit, same wait.
	var ex admin.ExplainView
	e.cli.JSON(t, &ex, "ratelimit", "explain", "--account", id, "--names", "next.weir.test")
	if ex.Allowed || ex.Limit != "order-creation" || ex.Key != id || ex.PassesAt == nil {
		t.Fatalf("explain = %+v, want a denial by order-creation:%s", ex, id)
	}
	res := e.RawOrder(key, kid, "next.weir.test")
	ra := acmeenv.Want429(t, res, "order-creation", id)
	predicted := float64(ex.RetryAfterMS) / 1000
	if got := float64(ra); got < math.Ceil(predicted)-1 || got > math.Ceil(predicted)+1 {
		t.Errorf("the 429's Retry-After is %ds, explain predicted %.3fs", ra, predicted)
	}
	text := e.cli.Run(t, 0, "ratelimit", "explain", "--account", id, "--names", "next.weir.test")
	if !strings.Contains(text, "would be refused (429) by "+bucket) {
		t.Errorf("explain table:\n%s", text)
	}
	// A name the order limit would not refuse on its own still is, and an
	// allowed prediction says so once the bucket is reset.
	out := e.cli.Run(t, 0, "ratelimit", "reset", bucket)
	if !strings.Contains(out, "reset "+bucket) {
		t.Errorf("reset output: %s", out)
	}
	e.cli.JSON(t, &st, "ratelimit", "status", bucket)
	if st.Buckets[0].Remaining != 2 {
		t.Errorf("after reset %s has %d left, want 2", bucket, st.Buckets[0].Remaining)
	}
	e.cli.JSON(t, &ex, "ratelimit", "explain", "--account", id, "--names", "next.weir.test")
	if !ex.Allowed || ex.FreshAuthzs != 1 {
		t.Errorf("explain after reset = %+v, want allowed with 1 new authorization", ex)
	}
	acmeenv.WantStatus(t, e.RawOrder(key, kid, "next.weir.test"), http.StatusCreated)

	// Bad input is refused with the reason and exit code 1.
	if out := e.cli.Run(t, 1, "ratelimit", "reset", "orders:"+id); !strings.Contains(out, "unknown limit") && !strings.Contains(out, "not") {
		t.Errorf("reset of a bad key: %s", out)
	}
	if out := e.cli.Run(t, 1, "ratelimit", "status", "--account", "999"); !strings.Contains(out, "does not exist") {
		t.Errorf("status of an unknown account: %s", out)
	}
	e.cli.Run(t, 2, "ratelimit", "status")
}

// TestAdminCLIInventory: accounts, certs and crl through the admin API.
func TestAdminCLIInventory(t *testing.T) {
	e := startEnv(t, nil)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	c := e.Client(acmeenv.NewKey(t))
	acct, err := c.Register(ctx, &xacme.Account{Contact: []string{"mailto:team-x@weir.test"}}, xacme.AcceptTOS)
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimPrefix(acct.URI, e.Base+"/acme/account/")
	chain, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.DomainIDs("inv.weir.test")...)
	leaf := e.VerifyChain(chain, "inv.weir.test")
	serial := ca.SerialHex(leaf.SerialNumber)

	var accts admin.Page[admin.AccountView]
	e.cli.JSON(t, &accts, "accounts", "list", "-q", "team-x")
	if len(accts.Items) != 1 || accts.Items[0].ID != id {
		t.Fatalf("accounts list -q team-x = %+v, want account %s", accts.Items, id)
	}
	if out := e.cli.Run(t, 0, "accounts", "show", id); !strings.Contains(out, "mailto:team-x@weir.test") || !strings.Contains(out, serial) {
		t.Errorf("accounts show:\n%s", out)
	}
	var certs admin.Page[admin.CertView]
	e.cli.JSON(t, &certs, "certs", "list", "-q", "inv.weir")
	if len(certs.Items) != 1 || certs.Items[0].Serial != serial || certs.Items[0].State != "active" {
		t.Fatalf("certs list = %+v", certs.Items)
	}
	if out := e.cli.Run(t, 0, "certs", "show", serial, "--pem"); !strings.Contains(out, "BEGIN CERTIFICATE") {
		t.Errorf("certs show --pem:\n%s", out)
	}
	// Flags after the serial, as operators type them.
	if out := e.cli.Run(t, 0, "certs", "revoke", serial, "--reason", "keyCompromise"); !strings.Contains(out, "revoked "+serial+" (keyCompromise)") {
		t.Errorf("certs revoke: %s", out)
	}
	e.cli.Run(t, 1, "certs", "revoke", serial, "--reason", "keyCompromise") // already revoked
	e.cli.Run(t, 1, "certs", "revoke", "00ff", "--reason", "nonsense")
	if got := e.CRLSerials(leaf); got[leaf.SerialNumber.String()] != 1 {
		t.Errorf("the served CRL lists %v, want %s with reason 1", got, serial)
	}
	derPath := t.TempDir() + "/crl.der"
	var crl admin.CRLView
	e.cli.JSON(t, &crl, "crl", "-out", derPath)
	if len(crl.Entries) != 1 || crl.Entries[0].Serial != serial || crl.Entries[0].Reason != "keyCompromise" {
		t.Errorf("crl = %+v", crl)
	}
	if b, err := os.ReadFile(derPath); err != nil || len(b) < 100 {
		t.Errorf("crl -out wrote %d bytes, %v", len(b), err)
	}
	e.cli.JSON(t, &certs, "certs", "list", "-state", "revoked")
	if len(certs.Items) != 1 || certs.Items[0].Reason != "keyCompromise" {
		t.Errorf("certs list -state revoked = %+v", certs.Items)
	}
	if out := e.cli.Run(t, 0, "accounts", "deactivate", id); !strings.Contains(out, "deactivated") {
		t.Errorf("accounts deactivate: %s", out)
	}
	if _, err := c.AuthorizeOrder(ctx, xacme.DomainIDs("after.weir.test")); err == nil {
		t.Error("a deactivated account could still order")
	}
}

// TestAdminAuth: the admin API and /metrics refuse requests without the
// token; health endpoints need none; the token file is 0600.
func TestAdminAuth(t *testing.T) {
	e := startEnv(t, nil)
	tok, err := os.ReadFile(server.AdminTokenFile(e.cfg))
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(server.AdminTokenFile(e.cfg)); st.Mode().Perm() != 0o600 {
		t.Errorf("admin-token mode %04o, want 0600", st.Mode().Perm())
	}
	token := strings.TrimSpace(string(tok))
	for _, tc := range []struct {
		path, auth string
		want       int
	}{
		{"/api/v1/overview", "", http.StatusUnauthorized},
		{"/api/v1/overview", "Bearer wrong-token-0123456789", http.StatusUnauthorized},
		{"/api/v1/overview", "Basic " + token, http.StatusUnauthorized},
		{"/metrics", "", http.StatusUnauthorized},
		{"/api/v1/ratelimit/status?key=order-creation:1", "", http.StatusUnauthorized},
		{"/healthz", "", http.StatusOK},
		{"/readyz", "", http.StatusOK},
		{"/api/v1/overview", "Bearer " + token, http.StatusOK},
		{"/metrics", "Bearer " + token, http.StatusOK},
		{"/", "", http.StatusSeeOther},
	} {
		req, _ := http.NewRequest(http.MethodGet, e.adminURL+tc.path, nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.want {
			t.Errorf("GET %s (%q): %d, want %d", tc.path, tc.auth, res.StatusCode, tc.want)
		}
		if tc.want == http.StatusUnauthorized && !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("GET %s: 401 without a Bearer challenge", tc.path)
		}
	}
	// A POST without the token changes nothing.
	req, _ := http.NewRequest(http.MethodPost, e.adminURL+"/api/v1/ratelimit/reset", strings.NewReader(`{"key":"order-creation:1"}`))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("unauthenticated reset: %d, want 401", res.StatusCode)
	}
}
