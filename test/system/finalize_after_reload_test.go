// SPDX-License-Identifier: Apache-2.0

package system

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/server"
)

// liveRuleChanges are reloads that no longer admit an order for
// name under the default profile, and the problem type new-order gives.
func liveRuleChanges(name string) []struct {
	name     string
	edit     func(*server.Config)
	wantType acme.ProblemType
} {
	return []struct {
		name     string
		edit     func(*server.Config)
		wantType acme.ProblemType
	}{
		{"ca.policy.denied-domains", func(c *server.Config) { c.CA.Policy.DeniedDomains = []string{name} }, acme.ProbRejectedIdentifier},
		{"ca.profiles identifier-types", func(c *server.Config) {
			p := c.CA.Profiles["tls-server"]
			p.IdentifierTypes = []acme.IdentifierType{acme.IdentifierIP}
			c.CA.Profiles["tls-server"] = p
		}, acme.ProbRejectedIdentifier},
		{"ca.default-profile withdrawn", func(c *server.Config) {
			c.CA.DefaultProfile = "tls-client-server"
			delete(c.CA.Profiles, "tls-server")
		}, acme.ProbInvalidProfile},
	}
}

// TestFinalizeAfterReload: an order made ready, then a live reload that no
// longer admits it (its name denied, its profile's rules changed or the
// profile withdrawn). Its finalize is refused with new-order's problem,
// no certificate is stored, and the order is invalid with that problem.
func TestFinalizeAfterReload(t *testing.T) {
	for _, tc := range liveRuleChanges("gone.weir.test") {
		t.Run(tc.name, func(t *testing.T) {
			e := startEnv(t, nil)
			ctx, key, c, acct := e.Registered(t)
			url, o := e.readyProfileOrder(ctx, c, acct.URI, "", "gone.weir.test")

			e.reloadWith(tc.edit)
			before := snapshotDB(t, e)
			csr := base64.RawURLEncoding.EncodeToString(acmeenv.CSRFor(t, acmeenv.NewKey(t), "gone.weir.test"))
			res := e.PostJWS(key, o.Finalize, []byte(`{"csr":"`+csr+`"}`), acmeenv.SignOpts{KID: acct.URI})
			if typ, detail := res.Problem(); res.Status != http.StatusBadRequest || typ != string(tc.wantType) {
				t.Fatalf("finalize after the reload: %d %s %q, want 400 %s", res.Status, typ, detail, tc.wantType)
			}
			after := snapshotDB(t, e)
			if after.Counts["certificates"] != before.Counts["certificates"] {
				t.Errorf("certificates: %d before the refused finalize, %d after", before.Counts["certificates"], after.Counts["certificates"])
			}
			got := e.getOrder(key, acct.URI, url)
			if got.Status != "invalid" || got.Error == nil || got.Error.Type != tc.wantType || got.Certificate != "" {
				t.Errorf("the order after the refused finalize: %+v, want invalid with a %s error and no certificate", got, tc.wantType)
			}
		})
	}
}

// TestFinalizeTakeoverAfterReload: a replica moved a ready order to
// processing (StartFinalize: its CSR stored, the finalization leased) and
// died; a live reload no longer admits the order. The replica that takes
// the finalization over once the lease ends issues nothing and makes the
// order invalid with new-order's problem.
func TestFinalizeTakeoverAfterReload(t *testing.T) {
	e := startEnv(t, nil)
	ctx, key, c, acct := e.Registered(t)
	url, _ := e.readyProfileOrder(ctx, c, acct.URI, "", "gone.weir.test")
	id := url[strings.LastIndex(url, "/")+1:]

	e.reloadWith(liveRuleChanges("gone.weir.test")[0].edit)
	// The dead replica's lease ended just now, so the next claim (within
	// acme.Config.ClaimInterval, 5 s) takes it over.
	lease := e.srv.Service().Config().ValidationLease
	csr := acmeenv.CSRFor(t, acmeenv.NewKey(t), "gone.weir.test")
	if err := e.srv.Store().StartFinalize(ctx, acme.OrderID(id), "a-dead-replica", csr, time.Now().Add(-lease), lease); err != nil {
		t.Fatalf("StartFinalize as the dead replica: %v", err)
	}
	deadline := time.Now().Add(20 * time.Second)
	var got orderJSON
	for got = e.getOrder(key, acct.URI, url); got.Status == "processing" && time.Now().Before(deadline); got = e.getOrder(key, acct.URI, url) {
		time.Sleep(100 * time.Millisecond)
	}
	if got.Status != "invalid" || got.Error == nil || got.Error.Type != acme.ProbRejectedIdentifier || got.Certificate != "" {
		t.Fatalf("the order taken over after the reload: %+v, want invalid with a rejectedIdentifier error and no certificate", got)
	}
	if n := snapshotDB(t, e).Counts["certificates"]; n != 0 {
		t.Errorf("%d certificates stored, want 0", n)
	}
}
