// SPDX-License-Identifier: Apache-2.0

package system

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/server"
)

// TestTenantDelegatedZones: a name under a zone delegated to tenant D
// issues to D's account with no challenge (its authorization is valid
// when created, with an empty challenges list, and the issuance's audit
// record names the zone); a name of D outside the zone still needs one; a
// wildcard under a zone needs the tenant's wildcards;
// a delegated zone outside D's allowed zones is refused; removing the
// delegation refuses D's ready order at finalize, and the name needs a
// challenge again.
func TestTenantDelegatedZones(t *testing.T) {
	e := startEnv(t, nil)
	ctx := t.Context()

	refusals := []struct{ args, want string }{
		{"--allow .x.weir.test --delegated-zone .y.weir.test", `delegated-zones[0]: ".y.weir.test" lies within none of the tenant's allowed zones`},
		{"--allow host.x.weir.test --delegated-zone .host.x.weir.test", `delegated-zones[0]: ".host.x.weir.test" lies within none of the tenant's allowed zones`},
		{"--allow .x.weir.test --delegated-zone h.x.weir.test", `delegated-zones[0]: "h.x.weir.test" is a name, not a zone`},
		{"--allow .x.weir.test --delegated-zone *.x.weir.test", `delegated-zones[0]: "*.x.weir.test": write a zone as`},
	}
	for _, r := range refusals {
		out := e.cli.Run(t, 1, append([]string{"tenant", "create", "bad"}, strings.Fields(r.args)...)...)
		if !strings.Contains(out, r.want) {
			t.Errorf("weir tenant create bad %s: %s; want %q", r.args, out, r.want)
		}
	}
	e.cli.Run(t, 0, "tenant", "create", "team-d", "--allow", ".d.weir.test", "--delegated-zone", ".auto.d.weir.test")
	if out := e.cli.Run(t, 0, "tenant", "list"); !strings.Contains(out, "DELEGATED ZONES") || !strings.Contains(out, ".auto.d.weir.test") {
		t.Errorf("weir tenant list: %s; want the delegated zone shown", out)
	}
	if out := e.cli.Run(t, 0, "tenant", "show", "team-d"); !strings.Contains(out, "delegated zones:  .auto.d.weir.test") {
		t.Errorf("weir tenant show: %s; want the delegated zone shown", out)
	}
	c := e.tenantClient(t, "team-d")

	// A delegated name: ready at once, its authorization valid with no
	// challenge; the certificate issues and the audit record says how.
	o, err := c.AuthorizeOrder(ctx, xacme.DomainIDs("www.auto.d.weir.test"))
	if err != nil || o.Status != xacme.StatusReady {
		t.Fatalf("order of a delegated name: %+v, %v; want ready", o, err)
	}
	az, err := c.GetAuthorization(ctx, o.AuthzURLs[0])
	if err != nil || az.Status != xacme.StatusValid || len(az.Challenges) != 0 {
		t.Fatalf("its authorization: %+v, %v; want valid with no challenge", az, err)
	}
	chain, _, err := c.CreateOrderCert(ctx, o.FinalizeURL, acmeenv.CSRFor(t, acmeenv.NewKey(t), "www.auto.d.weir.test"), true)
	if err != nil {
		t.Fatalf("finalizing the delegated order: %v", err)
	}
	e.VerifyChain(chain, "www.auto.d.weir.test")
	var rec *auditLine
	for _, l := range readAudit(t, server.AuditPath(e.cfg)) {
		if l.Type == "issuance" {
			rec = &l
		}
	}
	if rec == nil {
		t.Fatal("no issuance in the audit trail")
	}
	if v := auditValidations(t, rec); len(v) != 1 || v[0].Name != "www.auto.d.weir.test" || v[0].Method != "delegated-zone:.auto.d.weir.test" {
		t.Errorf("the issuance's audit record: %+v; want www.auto.d.weir.test validated by delegated-zone:.auto.d.weir.test", rec.Data)
	}

	// D's names outside the zone need a challenge: an order mixing both
	// has one valid authorization and one pending with challenges.
	o, err = c.AuthorizeOrder(ctx, xacme.DomainIDs("m.auto.d.weir.test", "m.d.weir.test"))
	if err != nil || o.Status != xacme.StatusPending {
		t.Fatalf("a mixed order: %+v, %v; want pending", o, err)
	}
	for _, u := range o.AuthzURLs {
		az, err := c.GetAuthorization(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		delegated := az.Identifier.Value == "m.auto.d.weir.test"
		if delegated != (az.Status == xacme.StatusValid) || delegated != (len(az.Challenges) == 0) {
			t.Errorf("authorization of %s: status %s, %d challenges", az.Identifier.Value, az.Status, len(az.Challenges))
		}
	}

	// A wildcard under the zone still needs the tenant's wildcards.
	_, err = c.AuthorizeOrder(ctx, xacme.DomainIDs("*.w.auto.d.weir.test"))
	wantACMEError(t, "a delegated wildcard of a tenant without wildcards", err, http.StatusBadRequest, acme.ProbRejectedIdentifier,
		`tenant "team-d" forbids "*.w.auto.d.weir.test": the tenant does not permit wildcards`)

	// With wildcards permitted, one under the zone needs no challenge,
	// even of a tenant whose challenge types could not validate it.
	e.cli.Run(t, 0, "tenant", "create", "team-w", "--allow", ".w.weir.test", "--wildcards", "--challenges", "http-01",
		"--delegated-zone", ".auto.w.weir.test")
	if o, err := e.tenantClient(t, "team-w").AuthorizeOrder(ctx, xacme.DomainIDs("*.x.auto.w.weir.test")); err != nil || o.Status != xacme.StatusReady {
		t.Errorf("a delegated wildcard of a tenant with wildcards: %+v, %v; want ready", o, err)
	}

	// Removing the delegation stops D's ready order at finalize, and the
	// name needs a challenge again.
	o, err = c.AuthorizeOrder(ctx, xacme.DomainIDs("late.auto.d.weir.test"))
	if err != nil || o.Status != xacme.StatusReady {
		t.Fatalf("order of a delegated name: %+v, %v; want ready", o, err)
	}
	e.cli.Run(t, 0, "tenant", "update", "team-d", "--delegated-zone", "")
	_, _, err = c.CreateOrderCert(ctx, o.FinalizeURL, acmeenv.CSRFor(t, acmeenv.NewKey(t), "late.auto.d.weir.test"), true)
	wantACMEError(t, "finalizing after the delegation was removed", err, http.StatusBadRequest, acme.ProbRejectedIdentifier,
		`tenant "team-d" no longer delegates "late.auto.d.weir.test"`)
	if o, err := c.GetOrder(ctx, o.URI); err != nil || o.Status != xacme.StatusInvalid {
		t.Errorf("the refused order: %+v, %v; want invalid", o, err)
	}
	o, err = c.AuthorizeOrder(ctx, xacme.DomainIDs("late.auto.d.weir.test"))
	if err != nil || o.Status != xacme.StatusPending {
		t.Fatalf("the name once the delegation is gone: %+v, %v; want a pending order", o, err)
	}
	if az, err := c.GetAuthorization(ctx, o.AuthzURLs[0]); err != nil || az.Status != xacme.StatusPending || len(az.Challenges) == 0 {
		t.Errorf("its authorization: %+v, %v; want pending with challenges", az, err)
	}
	e.readyOrder(t, c, "late.auto.d.weir.test")
}

// TestTenantRateLimits: an account bound with a key of tenant T takes the
// "tenant:T" overrides; one whose key's label has an override takes the
// label's; an account of no tenant keeps the default. weir check-config
// warns of the override while the running weir has no tenant T.
func TestTenantRateLimits(t *testing.T) {
	e := startEnv(t, func(c *server.Config) {
		c.RateLimiting.OrderCreation = ratelimit.OrderCreationConfig{Enabled: true, OrdersPerAccountPerHour: 20, OrderBurst: 2, SANBudgetPerAccountPerHour: 100}
		c.RateLimiting.Overrides = []ratelimit.Override{
			{Limit: "order-creation", Key: "tenant:team-r", OrderBurst: new(int64(4))},
			{Limit: "order-creation", Key: "eab:fast", OrderBurst: new(int64(6))},
		}
	})
	// check-config warns of a tenant:NAME override whose tenant the
	// running weir does not have, and is silent once it does.
	const unknown = `rate-limiting.overrides[0]: tenant "team-r" does not exist in the running weir's store`
	if out := e.weirCLIArgs(t, 0, "check-config", e.cli.Config); !strings.Contains(out, unknown) {
		t.Errorf("weir check-config before the tenant exists: %s; want %q", out, unknown)
	}
	e.cli.Run(t, 0, "tenant", "create", "team-r", "--allow", ".r.weir.test")
	// Then it warns only that the tenant's names are not its accounts'
	// alone while new accounts need no EAB key.
	out := e.weirCLIArgs(t, 0, "check-config", e.cli.Config)
	if strings.Contains(out, "does not exist") || strings.Count(out, "warning") != 1 ||
		!strings.Contains(out, "warning: tenants exist but acme.external-account-binding.required is false: an account made without an EAB key") {
		t.Errorf("weir check-config once the tenant exists: %s; want the one warning of EAB not required", out)
	}
	// admitted counts the orders c places before its first 429, which it
	// does not retry.
	admitted := func(c *xacme.Client) int {
		c.RetryBackoff = noRetry
		n := 0
		for i := range 10 {
			_, err := c.AuthorizeOrder(t.Context(), xacme.DomainIDs(strings.Repeat("n", i+1)+".r.weir.test"))
			if isRateLimited(err) {
				break
			}
			if err != nil {
				t.Fatalf("order %d: %v", i, err)
			}
			n++
		}
		return n
	}
	if got := admitted(e.tenantClient(t, "team-r")); got != 4 {
		t.Errorf("an account of tenant team-r: %d orders in a row; want its tenant's burst 4", got)
	}
	fast := e.eabKeyClient(t, "fast", "team-r")
	if got := admitted(fast); got != 6 {
		t.Errorf("an account of label fast, tenant team-r: %d orders in a row; want its label's burst 6", got)
	}
	other := e.Client(acmeenv.NewKey(t))
	if _, err := other.Register(t.Context(), &xacme.Account{}, xacme.AcceptTOS); err != nil {
		t.Fatal(err)
	}
	if got := admitted(other); got != 2 {
		t.Errorf("an account of no tenant: %d orders in a row; want the default burst 2", got)
	}
}

// weirCLIArgs runs a weir command line as given (no -config added) and
// returns its stdout and stderr; an exit code other than wantCode fails t.
func (e *env) weirCLIArgs(t *testing.T, wantCode int, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := builder.Run(t, args, &stdout, &stderr); code != wantCode {
		t.Fatalf("weir %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, wantCode, stdout.String(), stderr.String())
	}
	return stdout.String() + stderr.String()
}
