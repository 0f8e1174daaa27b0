// SPDX-License-Identifier: Apache-2.0

package system

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/web/admin"
)

// TestTenantChallengeTypesNarrowed: tenant tc allows every challenge
// type. Its account has an order whose authorization is pending and
// offers http-01, and an order that http-01 made ready. The operator
// narrows tc to dns-01 through the admin API (PUT, 200). Answering the
// pending http-01 challenge is then refused (403 unauthorized naming the
// rule) and leaves it pending; finalizing the ready order is refused the
// same way and the order is invalid, with no certificate; a new order for
// the name does not reuse the authorization http-01 made valid, and
// offers dns-01 alone. The tenant report counts both refusals under
// challenge-types.
func TestTenantChallengeTypesNarrowed(t *testing.T) {
	e := startEnv(t, nil)
	ctx := t.Context()
	e.cli.Run(t, 0, "tenant", "create", "tc", "--allow", ".tc.weir.test")
	c := e.tenantClient(t, "tc")
	http01 := offered(t, c, "p.tc.weir.test", "http-01")
	ready := e.readyOrder(t, c, "v.tc.weir.test")

	e.putTenant(t, admin.TenantView{Name: "tc", AllowedNames: []string{".tc.weir.test"}, ChallengeTypes: []string{"dns-01"}})

	const rule = `challenge type http-01 is no longer allowed for tenant "tc" (its challenge-types: dns-01)`
	ka, _ := c.HTTP01ChallengeResponse(http01.Token)
	e.Tokens.Store(http01.Token, ka)
	_, err := c.Accept(ctx, http01)
	wantACMEError(t, "answering http-01 after the narrowing", err, http.StatusForbidden, acme.ProbUnauthorized, rule)
	if ch, err := c.GetChallenge(ctx, http01.URI); err != nil || ch.Status != xacme.StatusPending {
		t.Errorf("the refused challenge: %+v, %v; want pending", ch, err)
	}

	_, _, err = c.CreateOrderCert(ctx, ready.FinalizeURL, acmeenv.CSRFor(t, acmeenv.NewKey(t), "v.tc.weir.test"), true)
	wantACMEError(t, "finalizing the order http-01 made ready", err, http.StatusForbidden, acme.ProbUnauthorized,
		`the authorization of "v.tc.weir.test" was fulfilled by http-01, and `+rule)
	if o, err := c.GetOrder(ctx, ready.URI); err != nil || o.Status != xacme.StatusInvalid || o.CertURL != "" {
		t.Errorf("the refused order: %+v, %v; want invalid, with no certificate", o, err)
	}

	again, err := c.AuthorizeOrder(ctx, xacme.DomainIDs("v.tc.weir.test"))
	if err != nil {
		t.Fatal(err)
	}
	if again.AuthzURLs[0] == ready.AuthzURLs[0] {
		t.Errorf("the new order reuses the authorization http-01 made valid (%s)", again.AuthzURLs[0])
	}
	fresh, err := c.GetAuthorization(ctx, again.AuthzURLs[0])
	if err != nil || fresh.Status != xacme.StatusPending || len(fresh.Challenges) != 1 || fresh.Challenges[0].Type != "dns-01" {
		t.Errorf("the new order's authorization: %+v, %v; want pending, offering dns-01 alone", fresh, err)
	}

	var rep admin.TenantReport
	e.cli.JSON(t, &rep, "tenant", "report", "tc")
	if n := rep.RefusalsByRule[acme.TenantRuleChallengeTypes]; n != 2 {
		t.Errorf("challenge-types refusals %d (%v); want 2: the challenge and the finalize", n, rep.RefusalsByRule)
	}
}

// offered makes an order of c for name and returns the challenge of type
// typ its authorization offers.
func offered(t *testing.T, c *xacme.Client, name, typ string) *xacme.Challenge {
	t.Helper()
	o, err := c.AuthorizeOrder(t.Context(), xacme.DomainIDs(name))
	if err != nil {
		t.Fatal(err)
	}
	az, err := c.GetAuthorization(t.Context(), o.AuthzURLs[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range az.Challenges {
		if ch.Type == typ {
			return ch
		}
	}
	t.Fatalf("the authorization of %s offers %+v; want %s among them", name, az.Challenges, typ)
	return nil
}

// putTenant replaces a tenant's policy through the admin API.
func (e *env) putTenant(t *testing.T, v admin.TenantView) {
	t.Helper()
	body, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, e.adminURL+"/api/v1/tenants/"+v.Name, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.adminToken(t))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("PUT /api/v1/tenants/%s: %d %s; want 200", v.Name, res.StatusCode, b)
	}
}
