// SPDX-License-Identifier: Apache-2.0

package server

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The admin side of a running weir for the tests that stay in package
// server (TestAdminTokenRotation, and bearerStatus's users); the admin
// listener's own tests are in test/system (admin_fixture_test.go).

// adminFixture is the admin side of a running weir; with a token, a
// logged-in dashboard session too.
type adminFixture struct {
	e           *testEnv
	host        string // the admin listener's host:port
	token, csrf string // "" under admin.auth: none
	session     *http.Cookie
}

// adminFixtureOf is the admin side of e: with a token, logged in.
func adminFixtureOf(t *testing.T, e *testEnv) *adminFixture {
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

// bearerStatus is the status of a request (GET, or POST for a path
// ending in an action) to e's admin listener with the bearer token tok.
func bearerStatus(t *testing.T, e *testEnv, tok, path string) int {
	t.Helper()
	method := http.MethodGet
	if strings.HasSuffix(path, "/regenerate") {
		method = http.MethodPost
	}
	return (&adminFixture{e: e}).send(t, adminReq{method: method, path: path, header: map[string]string{"Authorization": "Bearer " + tok}}).status
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

func (e *testEnv) adminToken(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(adminTokenPath(e.cfg))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
