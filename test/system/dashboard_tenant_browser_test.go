// SPDX-License-Identifier: Apache-2.0

package system

import (
	"crypto/x509"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/web/admin"
)

// TestTenantPageBrowser drives the tenant page in Chromium: logged in with
// the token file's credential (operate), the browser creates a tenant
// through the form and sees its policy, then changes it with the update
// form; an account bound with the
// tenant's EAB key gets a certificate and a refusal, which the tenant
// page then shows (the refusal by rule, the account's buckets, the
// certificate, linked). Logged in with a read credential, the browser is
// told who it is and sees the same page without a form.
func TestTenantPageBrowser(t *testing.T) {
	bctx := startBrowser(t)
	e := startEnv(t, nil)
	var viewer admin.CredentialView
	e.cli.JSON(t, &viewer, "admin", "token", "add", "viewer", "--role", "read")

	var who, role, heading, allowed, maxLife string
	dashLogin(t, bctx, e)
	step(t, bctx, "create a tenant through the form",
		chromedp.Navigate(e.adminURL+"/tenants"),
		chromedp.WaitVisible(`#tenant-create-form`, chromedp.ByQuery),
		chromedp.Text(`#who-name`, &who, chromedp.ByQuery),
		chromedp.Text(`#who-role`, &role, chromedp.ByQuery),
		chromedp.SendKeys(`#tenant_name`, "team-web", chromedp.ByQuery),
		chromedp.SendKeys(`#tenant-create-form #allowed_names`, ".web.weir.test", chromedp.ByQuery),
		chromedp.SendKeys(`#tenant-create-form #max_lifetime`, "48h", chromedp.ByQuery),
		chromedp.Click(`#tenant-create-submit`, chromedp.ByQuery),
		chromedp.WaitVisible(`#tenant-policy`, chromedp.ByQuery),
		chromedp.Text(`#tenant-name`, &heading, chromedp.ByQuery),
		chromedp.Text(`#policy-allowed`, &allowed, chromedp.ByQuery),
		chromedp.Text(`#policy-max-lifetime`, &maxLife, chromedp.ByQuery),
	)
	if who != "admin" || role != "operate" {
		t.Errorf("the header says %q %q; want admin, operate", who, role)
	}
	if heading != "team-web" || allowed != ".web.weir.test" || maxLife != "48h0m0s" {
		t.Fatalf("after the create form: tenant %q, allowed %q, max lifetime %q", heading, allowed, maxLife)
	}

	var denied, delegated, flash string
	step(t, bctx, "change the policy through the update form",
		chromedp.SetValue(`#tenant-update-form #denied_names`, "blocked.web.weir.test", chromedp.ByQuery),
		chromedp.SetValue(`#tenant-update-form #delegated_zones`, ".apps.web.weir.test", chromedp.ByQuery),
		// The create form's flash is still on this page: remove it, so that
		// the wait below is for the page the update form leads to.
		chromedp.Evaluate(`document.getElementById("flash")?.remove()`, nil),
		chromedp.Click(`#tenant-update-submit`, chromedp.ByQuery),
		chromedp.WaitVisible(`#flash`, chromedp.ByQuery),
		chromedp.Text(`#flash`, &flash, chromedp.ByQuery),
		chromedp.Text(`#policy-denied`, &denied, chromedp.ByQuery),
		chromedp.Text(`#policy-allowed`, &allowed, chromedp.ByQuery),
		chromedp.Text(`#policy-delegated`, &delegated, chromedp.ByQuery),
	)
	if flash != "updated tenant team-web" || denied != "blocked.web.weir.test" || allowed != ".web.weir.test" ||
		delegated != ".apps.web.weir.test" {
		t.Errorf("after the update form: flash %q, denied %q, allowed %q, delegated %q", flash, denied, allowed, delegated)
	}

	// An account of the tenant: one certificate, one refusal.
	c := e.tenantClient(t, "team-web")
	chain, _ := e.Issue(t.Context(), c, acmeenv.NewKey(t), "http-01", xacme.DomainIDs("www.web.weir.test")...)
	leaf, err := x509.ParseCertificate(chain[0])
	if err != nil {
		t.Fatal(err)
	}
	serial := ca.SerialHex(leaf.SerialNumber)
	_, err = c.AuthorizeOrder(t.Context(), xacme.DomainIDs("www.other.weir.test"))
	wantACMEError(t, "the tenant's order outside its names", err, http.StatusBadRequest, acme.ProbRejectedIdentifier, "allowed-names")

	var rep admin.TenantReport
	e.cli.JSON(t, &rep, "tenant", "report", "team-web")
	if len(rep.Accounts) != 1 {
		t.Fatalf("the tenant's accounts: %+v", rep.Accounts)
	}
	account := rep.Accounts[0].ID
	var refusals, ident, certHref, bucketRows string
	step(t, bctx, "the tenant page shows the refusal, the usage and the certificate",
		chromedp.Navigate(e.adminURL+"/tenants/team-web"),
		chromedp.WaitVisible(`#refusals-by-rule tr[data-rule="allowed-names"]`, chromedp.ByQuery),
		chromedp.Text(`#refusals-by-rule tr[data-rule="allowed-names"] td.num`, &refusals, chromedp.ByQuery),
		chromedp.Text(`#tenant-recent-refusals tr[data-rule="allowed-names"] td.mono + td + td + td`, &ident, chromedp.ByQuery),
		chromedp.AttributeValue(`#tenant-certs tr[data-serial="`+serial+`"] a`, "href", &certHref, nil, chromedp.ByQuery),
		chromedp.Text(`#tenant-accounts table.buckets`, &bucketRows, chromedp.ByQuery),
	)
	if refusals != "1" || ident != "www.other.weir.test" || certHref != "/certs/"+serial || !strings.Contains(bucketRows, "order-creation") {
		t.Errorf("tenant page: refusals %q, identifier %q, certificate link %q, buckets %q", refusals, ident, certHref, bucketRows)
	}
	var certHeading string
	step(t, bctx, "the certificate link opens its page",
		chromedp.Click(`#tenant-certs tr[data-serial="`+serial+`"] a`, chromedp.ByQuery),
		chromedp.WaitVisible(`#revoke`, chromedp.ByQuery),
		chromedp.Text(`main h1`, &certHeading, chromedp.ByQuery),
	)
	if !strings.Contains(certHeading, serial) {
		t.Errorf("the certificate page's heading %q does not name %s", certHeading, serial)
	}

	// The read credential: told who it is, no form but the logout.
	var posts int
	step(t, bctx, "log out, log in as the read credential, open the tenant page",
		chromedp.Click(`form.logout button`, chromedp.ByQuery),
		chromedp.WaitVisible(`#token`, chromedp.ByQuery),
		chromedp.SendKeys(`#token`, viewer.Token, chromedp.ByQuery),
		chromedp.Click(`#login-submit`, chromedp.ByQuery),
		chromedp.WaitVisible(`#issuance`, chromedp.ByQuery),
		chromedp.Navigate(e.adminURL+"/tenants/team-web"),
		chromedp.WaitVisible(`#tenant-policy`, chromedp.ByQuery),
		chromedp.Text(`#who-name`, &who, chromedp.ByQuery),
		chromedp.Text(`#who-role`, &role, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('form[method="post"]:not(.logout)').length`, &posts),
	)
	if who != "viewer" || role != "read" || posts != 0 {
		t.Errorf("as the read credential: %q %q, %d POST forms; want viewer, read, none", who, role, posts)
	}
	// Each page opens (the element waited for is the page's own, not the
	// error page's) and has no form that changes state.
	for page, sel := range map[string]string{"/tenants": "#tenants-table", "/certs/" + serial: "#cert-pem",
		"/limiter": "#recent-429s", "/eab": "#eab-keys", "/accounts/" + account: "#account-buckets"} {
		step(t, bctx, "open "+page+" as the read credential",
			chromedp.Navigate(e.adminURL+page),
			chromedp.WaitVisible(sel, chromedp.ByQuery),
			chromedp.Evaluate(`document.querySelectorAll('form[method="post"]:not(.logout)').length`, &posts),
		)
		if posts != 0 {
			t.Errorf("%s as the read credential: %d POST forms; want none", page, posts)
		}
	}
}
