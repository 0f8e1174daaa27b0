// SPDX-License-Identifier: Apache-2.0

package system

import (
	"crypto/x509"
	"net/http"
	"strings"
	"testing"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/server"
	"github.com/weir-pki/weir/web/admin"
)

// TestTenantReport: weir tenant report, as a table and as JSON, shows a
// tenant's key, its account with its buckets, its certificate, and its
// refusals by rule: one at new-order (allowed-names) and one at finalize
// after a narrowing (denied-names). A ratelimit explain of a name the
// tenant refuses is not a refusal and is not counted.
func TestTenantReport(t *testing.T) {
	e := startEnv(t, func(c *server.Config) {
		c.RateLimiting.OrderCreation = ratelimit.OrderCreationConfig{Enabled: true, OrdersPerAccountPerHour: 20, OrderBurst: 10, SANBudgetPerAccountPerHour: 100}
	})
	ctx := t.Context()
	e.cli.Run(t, 0, "tenant", "create", "team-r", "--allow", ".r.weir.test")
	c := e.tenantClient(t, "team-r")
	chain, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.DomainIDs("www.r.weir.test")...)
	leaf, err := x509.ParseCertificate(chain[0])
	if err != nil {
		t.Fatal(err)
	}
	serial := ca.SerialHex(leaf.SerialNumber)
	_, err = c.AuthorizeOrder(ctx, xacme.DomainIDs("www.elsewhere.weir.test"))
	wantACMEError(t, "an order outside the tenant", err, http.StatusBadRequest, acme.ProbRejectedIdentifier, "allowed-names")
	o := e.readyOrder(t, c, "api.r.weir.test")
	e.cli.Run(t, 0, "tenant", "update", "team-r", "--deny", "api.r.weir.test")
	_, _, err = c.CreateOrderCert(ctx, o.FinalizeURL, acmeenv.CSRFor(t, acmeenv.NewKey(t), "api.r.weir.test"), true)
	wantACMEError(t, "finalizing after the narrowing", err, http.StatusBadRequest, acme.ProbRejectedIdentifier, "denied-names")

	var rep admin.TenantReport
	e.cli.JSON(t, &rep, "tenant", "report", "team-r")
	if len(rep.EABKeys) != 1 || len(rep.Accounts) != 1 || rep.Accounts[0].ID != rep.EABKeys[0].BoundAccount || len(rep.Accounts[0].Buckets) == 0 {
		t.Fatalf("report: keys %+v, accounts %+v; want the one key and its account with buckets", rep.EABKeys, rep.Accounts)
	}
	account := rep.Accounts[0].ID
	if b := bucketOf(t, rep.Accounts[0].Buckets, "order-creation:"+account); !b.Enabled || b.Capacity != 10 || b.Remaining >= 10 {
		t.Errorf("the account's order-creation bucket %+v; want enabled, capacity 10, spent from", b)
	}
	e.cli.Run(t, 0, "ratelimit", "explain", "--account", account, "--names", "www.elsewhere.weir.test")
	e.cli.JSON(t, &rep, "tenant", "report", "team-r")
	if rep.RefusalsByRule["allowed-names"] != 1 || rep.RefusalsByRule["denied-names"] != 1 || len(rep.RefusalsByRule) != 2 {
		t.Errorf("refusals by rule %v; want allowed-names 1, denied-names 1 (the explain not counted)", rep.RefusalsByRule)
	}
	if len(rep.Refusals) != 2 || rep.Refusals[0].Action != "finalize" || rep.Refusals[0].Identifier != "api.r.weir.test" ||
		rep.Refusals[1].Action != "new-order" || rep.Refusals[1].Account != account || !strings.Contains(rep.Refusals[1].Detail, "allowed-names") {
		t.Errorf("recent refusals %+v; want the finalize's, then the new-order's", rep.Refusals)
	}
	if len(rep.Certificates) != 1 || rep.Certificates[0].Serial != serial {
		t.Errorf("certificates %+v; want %s", rep.Certificates, serial)
	}
	out := e.cli.Run(t, 0, "tenant", "report", "team-r")
	for _, want := range []string{"allowed names:", ".r.weir.test", "EAB keys:", "Usage against limits:", "order-creation:" + account + "  ",
		"Refusals by rule:", "denied-names", "Recent certificates:", serial, "www.r.weir.test"} {
		if !strings.Contains(out, want) {
			t.Errorf("weir tenant report lacks %q:\n%s", want, out)
		}
	}
	if out := e.cli.Run(t, 1, "tenant", "report", "no-such"); !strings.Contains(out, "does not exist") {
		t.Errorf("the report of an unknown tenant: %s", out)
	}
	var deleted map[string]string
	e.cli.Run(t, 0, "tenant", "create", "team-gone")
	e.cli.JSON(t, &deleted, "tenant", "delete", "team-gone")
	if deleted["deleted"] != "team-gone" {
		t.Errorf("weir tenant delete --json: %v", deleted)
	}
}
