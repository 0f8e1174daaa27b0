// SPDX-License-Identifier: Apache-2.0

package system

import (
	"context"
	"encoding/base64"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/server"
)

// dashLogin logs the browser in to e's dashboard with the admin token.
func dashLogin(t *testing.T, bctx context.Context, e *env) {
	t.Helper()
	step(t, bctx, "log in",
		chromedp.Navigate(e.adminURL+"/login"),
		chromedp.WaitVisible(`#token`, chromedp.ByQuery),
		chromedp.SendKeys(`#token`, e.adminToken(t), chromedp.ByQuery),
		chromedp.Click(`#login-submit`, chromedp.ByQuery),
		chromedp.WaitVisible(`#issuance`, chromedp.ByQuery),
	)
}

// failHTTP01 answers the http-01 challenge of the authorization at
// authzURL with nothing serving its token, and waits for it to fail.
func (e *env) failHTTP01(ctx context.Context, c *xacme.Client, authzURL string) {
	e.t.Helper()
	a, err := c.GetAuthorization(ctx, authzURL)
	if err != nil {
		e.t.Fatal(err)
	}
	i := slices.IndexFunc(a.Challenges, func(ch *xacme.Challenge) bool { return ch.Type == "http-01" })
	if i < 0 {
		e.t.Fatal("no http-01 challenge")
	}
	if _, err := c.Accept(ctx, a.Challenges[i]); err != nil {
		e.t.Fatal(err)
	}
	if _, err := c.WaitAuthorization(ctx, authzURL); err == nil {
		e.t.Fatal("the authorization passed; want it invalid")
	}
}

// TestDashboardFixesBrowser drives the dashboard fixes in Chromium: an
// order whose validation failed shows as invalid in the list and on its
// own page (reached by its link); three identical duplicate-certificate
// 429s make one row with a count of 3; that bucket shows the names it
// covers, in the recent 429s and in the status form; the config page
// shows inherited lifetimes, never null.
func TestDashboardFixesBrowser(t *testing.T) {
	bctx := startBrowser(t)
	e := startEnv(t, func(c *server.Config) {
		dup := &c.RateLimiting.DuplicateCertificate
		dup.Enabled, dup.MaxPerWindow = true, 1
	})
	ctx, key, c, acct := e.Registered(t)
	id := strings.TrimPrefix(acct.URI, e.Base+"/acme/account/")

	// An order whose only challenge fails: nothing serves its token.
	o, err := c.AuthorizeOrder(ctx, xacme.DomainIDs("fails.weir.test"))
	if err != nil {
		t.Fatal(err)
	}
	orderID := o.URI[strings.LastIndex(o.URI, "/")+1:]
	e.failHTTP01(ctx, c, o.AuthzURLs[0])

	// One certificate for a name set, then three refused orders for it.
	names := []string{"dup-a.weir.test", "dup-b.weir.test", "dup-c.weir.test", "dup-d.weir.test"}
	e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.DomainIDs(names...)...)
	dupKey := ratelimit.FQDNSetKey(id, names)
	for range 3 {
		acmeenv.Want429(t, e.RawOrder(key, acct.URI, names...), "duplicate-certificate", dupKey)
	}

	dashLogin(t, bctx, e)

	// 1 and 4: the order list says invalid and links to the order's page.
	row := `#orders-table tr[data-order="` + orderID + `"]`
	var status, detailStatus, authzs string
	step(t, bctx, "orders",
		chromedp.Navigate(e.adminURL+"/orders"),
		chromedp.WaitVisible(row, chromedp.ByQuery),
		chromedp.Text(row+` .badge`, &status, chromedp.ByQuery),
		chromedp.Click(row+` a.order-link`, chromedp.ByQuery),
		chromedp.WaitVisible(`#order-status`, chromedp.ByQuery),
		chromedp.Text(`#order-status`, &detailStatus, chromedp.ByQuery),
		chromedp.Text(`#order-authzs`, &authzs, chromedp.ByQuery),
	)
	if strings.TrimSpace(status) != "invalid" || strings.TrimSpace(detailStatus) != "invalid" {
		t.Errorf("failed order shows %q in the list and %q on its page, want invalid", status, detailStatus)
	}
	if !strings.Contains(authzs, "fails.weir.test") || !strings.Contains(authzs, "http-01") {
		t.Errorf("order page authorizations lack the failed name and challenge:\n%s", authzs)
	}

	// 2 and 3: one grouped row for the three 429s, with the names.
	bucket := "duplicate-certificate:" + dupKey
	rrow := `#recent-429s tr[data-bucket="` + bucket + `"]`
	var nrows int
	var count, shown, title string
	var ok bool
	step(t, bctx, "limiter",
		chromedp.Navigate(e.adminURL+"/limiter"),
		chromedp.WaitVisible(rrow, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('#recent-429s tr[data-bucket="`+bucket+`"]').length`, &nrows),
		chromedp.Text(rrow+` td.count`, &count, chromedp.ByQuery),
		chromedp.Text(rrow+` .names`, &shown, chromedp.ByQuery),
		chromedp.AttributeValue(rrow+` .names`, "title", &title, &ok, chromedp.ByQuery),
	)
	if nrows != 1 || strings.TrimSpace(count) != "3" {
		t.Errorf("recent 429s: %d rows for %s with count %q, want one row counting 3", nrows, bucket, count)
	}
	if !ok || title != strings.Join(names, ", ") || !strings.Contains(shown, "dup-a.weir.test") || !strings.Contains(shown, "+1 more") {
		t.Errorf("duplicate-certificate names: shown %q, title %q; want the first three and +1 more, all four in the title", shown, title)
	}
	var statusNames string
	step(t, bctx, "status of the duplicate-certificate bucket",
		chromedp.SendKeys(`#status_value`, bucket, chromedp.ByQuery),
		chromedp.Click(`#status-submit`, chromedp.ByQuery),
		chromedp.WaitVisible(`#status-result tr[data-bucket="`+bucket+`"] .names`, chromedp.ByQuery),
		chromedp.AttributeValue(`#status-result tr[data-bucket="`+bucket+`"] .names`, "title", &statusNames, &ok, chromedp.ByQuery),
	)
	if statusNames != strings.Join(names, ", ") {
		t.Errorf("status form names %q, want %q", statusNames, strings.Join(names, ", "))
	}

	// 6: inherited lifetimes, never null.
	var yaml string
	step(t, bctx, "config",
		chromedp.Navigate(e.adminURL+"/config"),
		chromedp.WaitVisible(`#config-yaml`, chromedp.ByQuery),
		chromedp.Text(`#config-yaml`, &yaml, chromedp.ByQuery),
	)
	if strings.Contains(yaml, "certificate-lifetime: null") || !strings.Contains(yaml, "# inherited from ca.certificate-lifetime (90d)") {
		t.Errorf("config page lifetimes:\n%s", yaml)
	}
}

// TestDashboardEABBrowser: the EAB page creates a key with its form and
// shows the HMAC key once; an account registers with it and the list says
// which; an unused key is revoked with its form.
func TestDashboardEABBrowser(t *testing.T) {
	bctx := startBrowser(t)
	e := startEnv(t, nil)
	ctx, cancel := context.WithTimeout(t.Context(), browserTimeout)
	defer cancel()
	dashLogin(t, bctx, e)

	create := func(label string) (kid, hmac string) {
		t.Helper()
		step(t, bctx, "create an EAB key "+label,
			chromedp.Navigate(e.adminURL+"/eab"),
			chromedp.WaitVisible(`#eab_label`, chromedp.ByQuery),
			chromedp.SendKeys(`#eab_label`, label, chromedp.ByQuery),
			chromedp.Click(`#eab-create-submit`, chromedp.ByQuery),
			chromedp.WaitVisible(`#eab-created-hmac`, chromedp.ByQuery),
			chromedp.Text(`#eab-created-kid`, &kid, chromedp.ByQuery),
			chromedp.Text(`#eab-created-hmac`, &hmac, chromedp.ByQuery),
		)
		return strings.TrimSpace(kid), strings.TrimSpace(hmac)
	}
	kid, hmac := create("team-x")
	other, _ := create("team-y")
	mac, err := base64.RawURLEncoding.DecodeString(hmac)
	if err != nil || len(mac) != 32 {
		t.Fatalf("HMAC key %q shown: %v, %d bytes", hmac, err, len(mac))
	}
	acct, err := e.eabRegister(ctx, acmeenv.NewKey(t), kid, mac)
	if err != nil {
		t.Fatalf("registering with the key the page showed: %v", err)
	}
	acctID := strings.TrimPrefix(acct.URI, e.Base+"/acme/account/")

	// The list: bound to the account, the HMAC key nowhere.
	var used, page string
	step(t, bctx, "list",
		chromedp.Navigate(e.adminURL+"/eab"),
		chromedp.WaitVisible(`#eab-keys`, chromedp.ByQuery),
		chromedp.Text(`#eab-keys tr[data-kid="`+kid+`"] td.account`, &used, chromedp.ByQuery),
		chromedp.OuterHTML(`html`, &page, chromedp.ByQuery),
	)
	if !strings.Contains(used, "account "+acctID) {
		t.Errorf("key %s used by %q, want account %s", kid, used, acctID)
	}
	if strings.Contains(page, hmac) {
		t.Error("the list shows an HMAC key again")
	}

	// Revoke the unused key with its form.
	rrow := `#eab-keys tr[data-kid="` + other + `"]`
	var flash, st string
	step(t, bctx, "revoke",
		chromedp.Click(rrow+` input[name="confirm"]`, chromedp.ByQuery),
		chromedp.Click(rrow+` button`, chromedp.ByQuery),
		chromedp.WaitVisible(`#flash`, chromedp.ByQuery),
		chromedp.Text(`#flash`, &flash, chromedp.ByQuery),
		chromedp.Text(rrow+` td.status`, &st, chromedp.ByQuery),
	)
	if strings.TrimSpace(flash) != "revoked EAB key "+other || strings.TrimSpace(st) != "revoked" {
		t.Errorf("after revoking: flash %q, status %q", flash, st)
	}
	if _, err := e.eabRegister(ctx, acmeenv.NewKey(t), other, mac); err == nil {
		t.Error("a revoked key bound an account")
	}
}
