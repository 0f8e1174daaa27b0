// SPDX-License-Identifier: Apache-2.0

package system

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/server"
	"github.com/weir-pki/weir/web/admin"
)

// TestTenants: tenants end to end with the CLI and x/crypto/acme. Tenant
// A's account (bound with an EAB key of A) is refused tenant B's names,
// names outside A's zones and A's denied names at new-order, each with
// the tenant and the rule in the detail; ca.policy still refuses what it
// denies inside A's zone; A's certificates are cut to A's max-lifetime;
// after A's policy is narrowed, A's ready order for a now-excluded name
// is refused at finalize. An account without EAB keeps today's rules.
func TestTenants(t *testing.T) {
	e := startEnv(t, func(c *server.Config) {
		c.CA.Policy.DeniedDomains = []string{"global-deny.a.weir.test"}
	})
	ctx := t.Context()

	var a admin.TenantView
	e.cli.JSON(t, &a, "tenant", "create", "team-a", "--allow", ".a.weir.test", "--deny", "secret.a.weir.test", "--max-lifetime", "48h")
	if strings.Join(a.AllowedNames, ",") != ".a.weir.test" || a.MaxLifetime != "48h0m0s" {
		t.Fatalf("weir tenant create: %+v", a)
	}
	e.cli.Run(t, 0, "tenant", "create", "team-b", "--allow", ".b.weir.test")
	if out := e.cli.Run(t, 1, "tenant", "create", "bad", "--allow", "*.x.weir.test,ok.weir.test,no..name"); !strings.Contains(out, "allowed-names[0]") ||
		!strings.Contains(out, "allowed-names[2]") || strings.Contains(out, "allowed-names[1]") {
		t.Errorf("a tenant with bad patterns: %s; want allowed-names[0] and [2] named", out)
	}
	var list admin.Page[admin.TenantView]
	e.cli.JSON(t, &list, "tenant", "list")
	if len(list.Items) != 2 || list.Items[0].Name != "team-a" || list.Items[1].Name != "team-b" {
		t.Fatalf("weir tenant list: %+v; want team-a, team-b", list.Items)
	}

	var k admin.EABKeyView
	e.cli.JSON(t, &k, "eab", "create", "--label", "ops-a", "--tenant", "team-a")
	if k.Tenant != "team-a" {
		t.Fatalf("weir eab create --tenant: %+v", k)
	}
	if out := e.cli.Run(t, 1, "eab", "create", "--label", "x", "--tenant", "no-such"); !strings.Contains(out, "does not exist") {
		t.Errorf("an EAB key of an unknown tenant: %s", out)
	}
	hk, err := base64.RawURLEncoding.DecodeString(k.HMACKey)
	if err != nil {
		t.Fatal(err)
	}
	acctKey := acmeenv.NewKey(t)
	if _, err := e.eabRegister(ctx, acctKey, k.KeyID, hk); err != nil {
		t.Fatalf("register with tenant A's key: %v", err)
	}
	c := e.Client(acctKey)

	refused := []struct{ name, rule string }{
		{"www.b.weir.test", `tenant "team-a" forbids "www.b.weir.test": it matches none of the tenant's allowed-names`},
		{"outside.weir.test", `tenant "team-a" forbids "outside.weir.test": it matches none of the tenant's allowed-names`},
		{"secret.a.weir.test", `tenant "team-a" forbids "secret.a.weir.test": denied-names has "secret.a.weir.test"`},
		{"*.w.a.weir.test", `tenant "team-a" forbids "*.w.a.weir.test": the tenant does not permit wildcards`},
		{"x.global-deny.a.weir.test", `under the denied domain "global-deny.a.weir.test"`}, // ca.policy still applies
	}
	for _, r := range refused {
		_, err := c.AuthorizeOrder(ctx, xacme.DomainIDs(r.name))
		wantACMEError(t, "tenant A's order for "+r.name, err, http.StatusBadRequest, acme.ProbRejectedIdentifier, r.rule)
	}

	// A's own names issue, the certificate cut to A's max-lifetime.
	chain, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.DomainIDs("www.a.weir.test")...)
	leaf := e.VerifyChain(chain, "www.a.weir.test")
	if life := leaf.NotAfter.Sub(leaf.NotBefore); life > 48*time.Hour+time.Minute {
		t.Errorf("tenant A's certificate lives %s; want at most its max-lifetime 48h", life)
	}

	// Narrowing A stops A's ready order for a name it now denies.
	o := e.readyOrder(t, c, "api.a.weir.test")
	e.cli.Run(t, 0, "tenant", "update", "team-a", "--deny", "secret.a.weir.test,api.a.weir.test")
	_, _, err = c.CreateOrderCert(ctx, o.FinalizeURL, acmeenv.CSRFor(t, acmeenv.NewKey(t), "api.a.weir.test"), true)
	wantACMEError(t, "finalizing A's order after the narrowing", err, http.StatusBadRequest, acme.ProbRejectedIdentifier,
		`tenant "team-a" forbids "api.a.weir.test": denied-names has "api.a.weir.test"`)
	if o, err := c.GetOrder(ctx, o.URI); err != nil || o.Status != xacme.StatusInvalid {
		t.Errorf("the refused order: %+v, %v; want invalid", o, err)
	}
	var shown admin.TenantView
	e.cli.JSON(t, &shown, "tenant", "show", "team-a")
	if strings.Join(shown.DeniedNames, ",") != "api.a.weir.test,secret.a.weir.test" || shown.MaxLifetime != "48h0m0s" {
		t.Errorf("weir tenant show after update: %+v; want the new denied names, the rest kept", shown)
	}

	// A tenant with keys cannot be deleted; one without can.
	if out := e.cli.Run(t, 1, "tenant", "delete", "team-a"); !strings.Contains(out, "has EAB keys") {
		t.Errorf("deleting a tenant with keys: %s", out)
	}
	e.cli.Run(t, 0, "tenant", "delete", "team-b")

	// A tenant's challenge types are the only ones its authorizations
	// offer; a wildcard they cannot validate is refused at new-order.
	e.cli.Run(t, 0, "tenant", "create", "team-c", "--allow", ".c.weir.test", "--wildcards", "--challenges", "dns-01")
	e.cli.Run(t, 0, "tenant", "create", "team-h", "--allow", ".h.weir.test", "--wildcards", "--challenges", "http-01")
	cc := e.tenantClient(t, "team-c")
	oc, err := cc.AuthorizeOrder(ctx, xacme.DomainIDs("*.x.c.weir.test", "y.c.weir.test"))
	if err != nil {
		t.Fatalf("team-c's order: %v", err)
	}
	for _, u := range oc.AuthzURLs {
		az, err := cc.GetAuthorization(ctx, u)
		if err != nil || len(az.Challenges) != 1 || az.Challenges[0].Type != "dns-01" {
			t.Errorf("team-c's authorization %s: %+v, %v; want one dns-01 challenge", u, az, err)
		}
	}
	_, err = e.tenantClient(t, "team-h").AuthorizeOrder(ctx, xacme.DomainIDs("*.x.h.weir.test"))
	wantACMEError(t, "a wildcard of an http-01-only tenant", err, http.StatusBadRequest, acme.ProbRejectedIdentifier,
		`tenant "team-h" forbids "*.x.h.weir.test": none of its challenge-types (http-01) can validate it`)

	// An account without EAB is in the default tenant: ca.policy alone.
	other := e.Client(acmeenv.NewKey(t))
	if _, err := other.Register(ctx, &xacme.Account{}, xacme.AcceptTOS); err != nil {
		t.Fatal(err)
	}
	if _, err := other.AuthorizeOrder(ctx, xacme.DomainIDs("www.b.weir.test")); err != nil {
		t.Errorf("an account without a tenant: %v; want today's rules", err)
	}
}

// tenantClient registers a new account bound with a new EAB key of tenant
// (labelled as the tenant) and returns its client.
func (e *env) tenantClient(t *testing.T, tenant string) *xacme.Client {
	t.Helper()
	return e.eabKeyClient(t, tenant, tenant)
}

// eabKeyClient registers a new account bound with a new EAB key of label
// and tenant and returns its client.
func (e *env) eabKeyClient(t *testing.T, label, tenant string) *xacme.Client {
	t.Helper()
	c, _, _ := e.eabKeyAccount(t, label, tenant)
	return c
}

// eabKeyAccount is eabKeyClient, which also returns the EAB key the
// account is bound with and its HMAC key, decoded.
func (e *env) eabKeyAccount(t *testing.T, label, tenant string) (*xacme.Client, admin.EABKeyView, []byte) {
	t.Helper()
	var k admin.EABKeyView
	e.cli.JSON(t, &k, "eab", "create", "--label", label, "--tenant", tenant)
	hk, err := base64.RawURLEncoding.DecodeString(k.HMACKey)
	if err != nil {
		t.Fatal(err)
	}
	key := acmeenv.NewKey(t)
	if _, err := e.eabRegister(t.Context(), key, k.KeyID, hk); err != nil {
		t.Fatalf("register with a key of tenant %s: %v", tenant, err)
	}
	return e.Client(key), k, hk
}
