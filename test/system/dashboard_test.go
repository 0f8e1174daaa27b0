// SPDX-License-Identifier: Apache-2.0

package system

import (
	"context"
	"crypto/x509"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
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

// dashClient is a browser-like client of the admin dashboard: it keeps
// cookies and does not follow redirects, so the tests see them.
type dashClient struct {
	t    *testing.T
	base string
	http *http.Client
}

func newDashClient(t *testing.T, base string) *dashClient {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	t.Cleanup(c.CloseIdleConnections)
	return &dashClient{t: t, base: base, http: c}
}

func (d *dashClient) do(req *http.Request) page {
	d.t.Helper()
	res, err := d.http.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 4<<20))
	if err != nil {
		d.t.Fatal(err)
	}
	return page{status: res.StatusCode, header: res.Header, body: string(b)}
}

func (d *dashClient) get(path string) page {
	d.t.Helper()
	req, err := http.NewRequest(http.MethodGet, d.base+path, nil)
	if err != nil {
		d.t.Fatal(err)
	}
	return d.do(req)
}

func (d *dashClient) post(path string, form url.Values) page {
	d.t.Helper()
	req, err := http.NewRequest(http.MethodPost, d.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		d.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return d.do(req)
}

// postFollow posts a form, expects the redirect back (303) and returns
// the page it leads to.
func (d *dashClient) postFollow(path string, form url.Values) page {
	d.t.Helper()
	p := d.post(path, form)
	if p.status != http.StatusSeeOther {
		d.t.Fatalf("POST %s: status %d, want 303:\n%s", path, p.status, p.body)
	}
	return d.get(p.header.Get("Location"))
}

// wantPage checks a page's status and that it contains every string of
// want, as markup or as text (HTML-escaped as the templates write it).
func wantPage(t *testing.T, what string, p page, status int, want ...string) {
	t.Helper()
	if p.status != status {
		t.Fatalf("%s: status %d, want %d:\n%s", what, p.status, status, p.body)
	}
	for _, w := range want {
		if !strings.Contains(p.body, w) && !strings.Contains(p.body, html.EscapeString(w)) {
			t.Errorf("%s: page lacks %q", what, w)
		}
	}
}

// bucketRemaining reads remaining and capacity of bucket from a bucket
// table of the page; ok is false when the page has no such row.
func bucketRemaining(body, tableID, bucket string) (remaining, capacity string, ok bool) {
	i := strings.Index(body, `id="`+tableID+`"`)
	if i < 0 {
		return "", "", false
	}
	body = body[i:]
	if j := strings.Index(body, "</table>"); j >= 0 {
		body = body[:j]
	}
	re := regexp.MustCompile(`data-bucket="` + regexp.QuoteMeta(html.EscapeString(bucket)) + `"[^>]*>(?s:.*?)data-remaining="(\d+)" data-capacity="(\d+)"`)
	m := re.FindStringSubmatch(body)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// TestDashboardPages drives the dashboard over HTTP against a running
// weir: login, every page with real data, the forms (reset, explain,
// status, revoke, deactivate), CSRF, errors and logout.
func TestDashboardPages(t *testing.T) {
	e := startEnv(t, func(c *server.Config) {
		c.RateLimiting.OrderCreation = ratelimit.OrderCreationConfig{Enabled: true, OrdersPerAccountPerHour: 20, OrderBurst: 1, SANBudgetPerAccountPerHour: 100}
	})
	if e.adminURL == "" {
		t.Fatal("the harness started no admin listener")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	// One certificate, which spends the account's only order token; then a
	// second order is refused.
	key := acmeenv.NewKey(t)
	client := e.Client(key)
	acct, err := client.Register(ctx, &xacme.Account{Contact: []string{"mailto:dash@weir.test"}}, xacme.AcceptTOS)
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimPrefix(acct.URI, e.Base+"/acme/account/")
	bucket := "order-creation:" + id
	chain, _ := e.Issue(ctx, client, acmeenv.NewKey(t), "http-01", xacme.DomainIDs("dash.weir.test")...)
	leaf, err := x509.ParseCertificate(chain[0])
	if err != nil {
		t.Fatal(err)
	}
	serial := ca.SerialHex(leaf.SerialNumber)
	acmeenv.Want429(t, e.RawOrder(key, acct.URI, "dash2.weir.test"), "order-creation", id)

	d := newDashClient(t, e.adminURL)
	token := e.adminToken(t)

	t.Run("login", func(t *testing.T) {
		p := d.get("/")
		if p.status != http.StatusSeeOther || p.header.Get("Location") != "/login" {
			t.Fatalf("GET / unauthenticated: %d to %q, want 303 to /login", p.status, p.header.Get("Location"))
		}
		p = d.get("/login")
		wantPage(t, "login page", p, http.StatusOK, `type="password"`, `name="token"`, `action="/login"`)
		p = d.post("/login", url.Values{"token": {"not-the-token-0123456789"}})
		wantPage(t, "wrong token", p, http.StatusUnauthorized, "That token is not an admin credential.")
		if len(p.header.Values("Set-Cookie")) != 0 {
			t.Errorf("a refused login set cookies: %v", p.header.Values("Set-Cookie"))
		}
		p = d.post("/login", url.Values{"token": {token}})
		if p.status != http.StatusSeeOther {
			t.Fatalf("login: %d, want 303", p.status)
		}
		var cookie *http.Cookie
		for _, c := range (&http.Response{Header: p.header}).Cookies() {
			if c.Name == "weir_admin" {
				cookie = c
			}
		}
		if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Value == "" || strings.Contains(cookie.Value, token) {
			t.Fatalf("session cookie %+v, want HttpOnly, SameSite=Strict, not the token itself", cookie)
		}
	})

	t.Run("pages", func(t *testing.T) {
		for _, tc := range []struct {
			path string
			want []string
		}{
			{"/", []string{"Overview", "Certificates issued, last 48 hours", "days left", "order-creation", `<svg class="chart"`, `data-value="1"`}},
			{"/limiter", []string{"Recent 429s", "new-order", bucket, "Configured limits", "20 per 1h, burst 1", `action="/limiter/reset"`}},
			{"/accounts", []string{"mailto:dash@weir.test", `href="/accounts/` + id + `"`}},
			{"/accounts?q=dash@weir", []string{"mailto:dash@weir.test"}},
			{"/accounts/" + id, []string{"Account " + id, serial, "dash.weir.test", bucket, "Limiter buckets", `action="/accounts/` + id + `/deactivate"`}},
			{"/certs", []string{serial, "dash.weir.test", "active"}},
			{"/certs?state=active&q=dash", []string{serial}},
			{"/certs/" + serial, []string{"-----BEGIN CERTIFICATE-----", leaf.Issuer.String(), "keyCompromise", `action="/certs/` + serial + `/revoke"`}},
			{"/orders", []string{"dash.weir.test", "valid", serial}},
			{"/orders?status=valid&account=" + id, []string{"dash.weir.test"}},
			{"/config", []string{"weir.yaml", "order-creation", "no reload since the start"}},
		} {
			p := d.get(tc.path)
			wantPage(t, "GET "+tc.path, p, http.StatusOK, tc.want...)
			if ct := p.header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
				t.Errorf("GET %s: Content-Type %q", tc.path, ct)
			}
			if csp := p.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
				t.Errorf("GET %s: CSP %q", tc.path, csp)
			}
		}
		if p := d.get("/certs?state=revoked"); strings.Contains(p.body, serial) {
			t.Error("the state filter shows an active certificate among the revoked")
		}
		p := d.get("/static/weir.css")
		if p.status != http.StatusOK || !strings.HasPrefix(p.header.Get("Content-Type"), "text/css") {
			t.Errorf("stylesheet: %d %q", p.status, p.header.Get("Content-Type"))
		}
	})

	t.Run("errors", func(t *testing.T) {
		wantPage(t, "unknown account", d.get("/accounts/987654"), http.StatusNotFound, "account 987654 does not exist")
		wantPage(t, "unknown certificate", d.get("/certs/abcdef"), http.StatusNotFound, "certificate abcdef does not exist")
		wantPage(t, "bad state", d.get("/certs?state=bogus"), http.StatusBadRequest, `state "bogus" is not one of active, revoked, expired`)
		wantPage(t, "bad ip", d.get("/limiter?status_by=ip&status=not-an-ip"), http.StatusBadRequest, `ip "not-an-ip" is not an IP address`, "Recent 429s")
	})

	t.Run("status and explain", func(t *testing.T) {
		p := d.get("/limiter?status_by=account&status=" + id)
		wantPage(t, "status by account", p, http.StatusOK, "Status of account")
		if rem, capacity, ok := bucketRemaining(p.body, "status-result", bucket); !ok || rem != "0" || capacity != "1" {
			t.Errorf("status by account: %s = %s/%s (found %v), want 0/1", bucket, rem, capacity, ok)
		}
		p = d.get("/limiter?explain_account=" + id + "&explain_names=x1.weir.test,+x2.weir.test")
		wantPage(t, "explain", p, http.StatusOK, "Denied by", "order-creation", "x1.weir.test", `id="explain-denied"`)
	})

	t.Run("csrf", func(t *testing.T) {
		// A cookie-authenticated POST without the CSRF token changes nothing.
		p := d.post("/limiter/reset", url.Values{"key": {bucket}})
		if p.status != http.StatusForbidden {
			t.Fatalf("reset without csrf: %d, want 403", p.status)
		}
		p = d.post("/limiter/reset", url.Values{"key": {bucket}, "csrf": {"0123"}})
		if p.status != http.StatusForbidden {
			t.Fatalf("reset with a wrong csrf: %d, want 403", p.status)
		}
		if rem, _, _ := bucketRemaining(d.get("/limiter?status_by=key&status="+bucket).body, "status-result", bucket); rem != "0" {
			t.Errorf("after refused resets %s has %s left, want 0", bucket, rem)
		}
		acmeenv.WantStatus(t, e.RawOrder(key, acct.URI, "dash3.weir.test"), http.StatusTooManyRequests)
	})

	csrf := csrfOf(t, d.get("/limiter"))

	t.Run("reset", func(t *testing.T) {
		p := d.post("/limiter/reset", url.Values{"key": {bucket}, "csrf": {csrf}, "back": {"/limiter?status_by=key&status=" + bucket}})
		if p.status != http.StatusSeeOther || p.header.Get("Location") != "/limiter?status_by=key&status="+bucket {
			t.Fatalf("reset: %d to %q, want 303 back to the status", p.status, p.header.Get("Location"))
		}
		p = d.get(p.header.Get("Location"))
		wantPage(t, "after reset", p, http.StatusOK, "reset "+bucket, `id="flash"`)
		if rem, capacity, ok := bucketRemaining(p.body, "status-result", bucket); !ok || rem != "1" || capacity != "1" {
			t.Errorf("after reset %s = %s/%s, want 1/1", bucket, rem, capacity)
		}
		// The flash is shown once.
		if p := d.get("/limiter"); strings.Contains(p.body, `id="flash"`) {
			t.Error("the flash message is shown twice")
		}
		// The bucket is really free: the next order passes.
		acmeenv.WantStatus(t, e.RawOrder(key, acct.URI, "dash4.weir.test"), http.StatusCreated)

		// An off-site back is ignored; a bad key is told in the flash.
		p = d.post("/limiter/reset", url.Values{"key": {"no-such-limit:1"}, "csrf": {csrf}, "back": {"//evil.example/"}})
		if p.status != http.StatusSeeOther || p.header.Get("Location") != "/limiter" {
			t.Fatalf("bad reset: %d to %q, want 303 to /limiter", p.status, p.header.Get("Location"))
		}
		p = d.get("/limiter")
		wantPage(t, "bad reset", p, http.StatusOK, "flash-err", "no-such-limit")
	})

	t.Run("revoke", func(t *testing.T) {
		p := d.postFollow("/certs/"+serial+"/revoke", url.Values{"csrf": {csrf}, "reason": {"keyCompromise"}})
		wantPage(t, "revoke without confirmation", p, http.StatusOK, "tick the confirmation box", "flash-err")
		p = d.postFollow("/certs/"+serial+"/revoke", url.Values{"csrf": {csrf}, "reason": {"keyCompromise"}, "confirm": {"yes"}})
		wantPage(t, "revoke", p, http.StatusOK, "revoked certificate "+serial+" (keyCompromise)", "badge-revoked")
		if strings.Contains(p.body, `action="/certs/`+serial+`/revoke"`) {
			t.Error("a revoked certificate still offers the revoke form")
		}
		p = d.postFollow("/certs/"+serial+"/revoke", url.Values{"csrf": {csrf}, "reason": {"superseded"}, "confirm": {"yes"}})
		wantPage(t, "revoke twice", p, http.StatusOK, "already revoked", "flash-err")
		wantPage(t, "revoked list", d.get("/certs?state=revoked"), http.StatusOK, serial, "keyCompromise")
	})

	t.Run("deactivate and paging", func(t *testing.T) {
		var ids []string
		for range 3 {
			_, kid := e.RawAccount(acmeenv.NewKey(t))
			ids = append(ids, strings.TrimPrefix(kid, e.Base+"/acme/account/"))
		}
		// Newest first, one per page: the pager walks back through them.
		p := d.get("/accounts?limit=1")
		seen := map[string]bool{}
		for i := 0; i < 10; i++ {
			m := regexp.MustCompile(`data-account="([^"]+)"`).FindAllStringSubmatch(p.body, -1)
			if len(m) > 1 {
				t.Fatalf("page %d has %d accounts, want 1", i, len(m))
			}
			if len(m) == 1 {
				seen[m[0][1]] = true
			}
			next := regexp.MustCompile(`id="next-page" href="([^"]+)"`).FindStringSubmatch(p.body)
			if next == nil {
				break
			}
			p = d.get(html.UnescapeString(next[1]))
			wantPage(t, "next page", p, http.StatusOK, "first page")
		}
		if len(seen) != 4 || !seen[ids[2]] || !seen[ids[1]] || !seen[ids[0]] || !seen[id] {
			t.Errorf("paged through %v, want the 4 accounts", seen)
		}

		victim := ids[0]
		p = d.postFollow("/accounts/"+victim+"/deactivate", url.Values{"csrf": {csrf}})
		wantPage(t, "deactivate without confirmation", p, http.StatusOK, "tick the confirmation box", "badge-valid")
		p = d.postFollow("/accounts/"+victim+"/deactivate", url.Values{"csrf": {csrf}, "confirm": {"yes"}})
		wantPage(t, "deactivate", p, http.StatusOK, "deactivated account "+victim, "badge-deactivated")
		wantPage(t, "deactivated filter", d.get("/accounts?status=deactivated"), http.StatusOK, `data-account="`+victim+`"`)
	})

	t.Run("logout", func(t *testing.T) {
		p := d.post("/logout", url.Values{"csrf": {csrf}})
		if p.status != http.StatusSeeOther {
			t.Fatalf("logout: %d", p.status)
		}
		if p := d.get("/"); p.status != http.StatusSeeOther || p.header.Get("Location") != "/login" {
			t.Errorf("after logout GET /: %d to %q, want the login page", p.status, p.header.Get("Location"))
		}
	})
}
