// SPDX-License-Identifier: Apache-2.0

package system

import (
	"context"
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/server"
)

// The helpers of the admin listener's hardening tests: a running weir with
// things to revoke, deactivate and reset, and raw requests as a browser or
// a script sends them.

// adminFixture is a running weir with a certificate to revoke, an account
// to deactivate and a spent bucket to reset; with a token, a logged-in
// dashboard session too.
type adminFixture struct {
	e                      *env
	host                   string // the admin listener's host:port
	serial, victim, bucket string
	key                    *ecdsa.PrivateKey
	kid                    string
	token, csrf            string // "" under admin.auth: none
	session                *http.Cookie
}

// startAdminFixture starts weir with admin.auth auth and makes the
// certificate, the accounts and the spent bucket.
func startAdminFixture(t *testing.T, auth string) *adminFixture {
	t.Helper()
	return startAdminFixtureLog(t, auth, io.Discard)
}

// startAdminFixtureLog is startAdminFixture with the server's log, as
// JSON lines, written to logw.
func startAdminFixtureLog(t *testing.T, auth string, logw io.Writer) *adminFixture {
	t.Helper()
	e := startEnvLog(t, func(c *server.Config) {
		c.Log.Level, c.Log.Format = "info", "json"
		c.Admin.Auth = auth
		c.RateLimiting.OrderCreation = ratelimit.OrderCreationConfig{Enabled: true, OrdersPerAccountPerHour: 20, OrderBurst: 1, SANBudgetPerAccountPerHour: 100}
	}, logw)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	f := adminFixtureOf(t, e)
	f.key = acmeenv.NewKey(t)
	client := e.Client(f.key)
	acct, err := client.Register(ctx, &xacme.Account{}, xacme.AcceptTOS)
	if err != nil {
		t.Fatal(err)
	}
	f.kid = acct.URI
	id := strings.TrimPrefix(acct.URI, e.Base+"/acme/account/")
	f.bucket = "order-creation:" + id
	chain, _ := e.Issue(ctx, client, acmeenv.NewKey(t), "http-01", xacme.DomainIDs("guard.weir.test")...)
	leaf, err := x509.ParseCertificate(chain[0])
	if err != nil {
		t.Fatal(err)
	}
	f.serial = ca.SerialHex(leaf.SerialNumber)
	acmeenv.Want429(t, e.RawOrder(f.key, f.kid, "guard2.weir.test"), "order-creation", id)
	_, victim := e.RawAccount(acmeenv.NewKey(t))
	f.victim = strings.TrimPrefix(victim, e.Base+"/acme/account/")
	return f
}

// adminFixtureOf is the admin side of e: with a token, logged in.
func adminFixtureOf(t *testing.T, e *env) *adminFixture {
	t.Helper()
	u, err := url.Parse(e.adminURL)
	if err != nil {
		t.Fatal(err)
	}
	f := &adminFixture{e: e, host: u.Host}
	if e.cfg.Admin.Auth == "token" {
		f.token = e.adminToken(t)
		f.session, f.csrf = f.login(t)
	}
	return f
}

// adminRes is one answer of the admin listener.
type adminRes struct {
	status int
	header http.Header
	body   string
}

// adminReq describes a request as a browser (or a script) would send it.
type adminReq struct {
	method, path, host string
	header             map[string]string
	cookie             *http.Cookie
	form               url.Values // sent as a form when not nil
	json               string     // sent as JSON when not ""
}

// send sends r to the admin listener, following no redirect.
func (f *adminFixture) send(t *testing.T, r adminReq) adminRes {
	t.Helper()
	var body io.Reader
	switch {
	case r.form != nil:
		body = strings.NewReader(r.form.Encode())
	case r.json != "":
		body = strings.NewReader(r.json)
	}
	req, err := http.NewRequestWithContext(t.Context(), r.method, f.e.adminURL+r.path, body)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case r.form != nil:
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	case r.json != "":
		req.Header.Set("Content-Type", "application/json")
	}
	if r.host != "" {
		req.Host = r.host
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	if r.cookie != nil {
		req.AddCookie(r.cookie)
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: f.e.HTTP.Transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	return adminRes{status: res.StatusCode, header: res.Header, body: string(b)}
}

// login logs in from the dashboard's own login page and returns the
// session cookie and its CSRF token.
func (f *adminFixture) login(t *testing.T) (*http.Cookie, string) {
	t.Helper()
	res := f.send(t, adminReq{method: http.MethodPost, path: "/login", form: url.Values{"token": {f.token}},
		header: map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": f.e.adminURL}})
	var cookie *http.Cookie
	for _, c := range (&http.Response{Header: res.header}).Cookies() {
		if c.Name == "weir_admin" {
			cookie = c
		}
	}
	if res.status != http.StatusSeeOther || cookie == nil {
		t.Fatalf("login: %d, cookie %v:\n%s", res.status, cookie, res.body)
	}
	res = f.send(t, adminReq{method: http.MethodGet, path: "/limiter", cookie: cookie})
	return cookie, csrfOf(t, page(res))
}

// sessionLive reports whether the session cookie still opens the API.
func (f *adminFixture) sessionLive(t *testing.T) bool {
	t.Helper()
	return f.send(t, adminReq{method: http.MethodGet, path: "/api/v1/config", cookie: f.session}).status == http.StatusOK
}

// wantJSONRefusal checks a guard's refusal: status, a JSON error, and
// no cookie set.
func wantJSONRefusal(t *testing.T, what string, res adminRes, status int) {
	t.Helper()
	var body struct{ Error string }
	if res.status != status || json.Unmarshal([]byte(res.body), &body) != nil || body.Error == "" ||
		res.header.Get("Content-Type") != "application/json" {
		t.Errorf("%s: %d %q %s, want %d with a JSON error", what, res.status, res.header.Get("Content-Type"), clip(res.body), status)
	}
	if sc := res.header.Values("Set-Cookie"); len(sc) != 0 {
		t.Errorf("%s: a refusal set cookies %v", what, sc)
	}
}

// clip shortens a body for an error message.
func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// page is one dashboard response.
type page struct {
	status int
	header http.Header
	body   string
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrfOf reads the CSRF token of a page's forms.
func csrfOf(t *testing.T, p page) string {
	t.Helper()
	m := csrfRE.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no csrf field in the page:\n%s", p.body)
	}
	return m[1]
}
