// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/limits"
	"github.com/weir-pki/weir/ratelimit/sourcetest"
)

const testToken = "the-admin-token-0123456789"

// sessionEnv is an admin Server answering for example.com (httptest's
// Host) on the routes that need no store: login, logout, the config page
// and API.
type sessionEnv struct {
	t     *testing.T
	s     *Server
	h     http.Handler
	clock *sourcetest.Clock
}

func newSessionEnv(t *testing.T, token string, tlsOn bool) *sessionEnv {
	t.Helper()
	c := sourcetest.NewClock(testNow)
	s, err := New(Config{Token: token, Hosts: []string{"example.com"}, TLS: tlsOn,
		Service: &acme.Service{}, Limits: &limits.Adapter{}, Metrics: NewMetrics(MetricsOptions{}),
		Config: func() ConfigInfo { return ConfigInfo{YAML: "admin: {}"} }, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	return &sessionEnv{t: t, s: s, h: s.Handler(), clock: c}
}

// do sends a request with cookie (if not nil) and form (a POST when not
// nil) and returns the response.
func (e *sessionEnv) do(method, path string, cookie *http.Cookie, form url.Values, header ...string) *http.Response {
	e.t.Helper()
	var r *http.Request
	if form != nil {
		r = httptest.NewRequest(method, path, strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		r = httptest.NewRequest(method, path, nil)
	}
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	if cookie != nil {
		r.AddCookie(cookie)
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, r)
	return rec.Result()
}

// login logs in and returns the session cookie and the session's CSRF
// token, as the config page's logout form carries it.
func (e *sessionEnv) login() (*http.Cookie, string) {
	e.t.Helper()
	res := e.do(http.MethodPost, "/login", nil, url.Values{"token": {testToken}})
	c := sessionCookieOf(res)
	if res.StatusCode != http.StatusSeeOther || c == nil {
		e.t.Fatalf("login: %d, cookie %v", res.StatusCode, c)
	}
	page := e.do(http.MethodGet, "/config", c, nil)
	body := readBody(e.t, page)
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(body)
	if page.StatusCode != http.StatusOK || m == nil {
		e.t.Fatalf("config page after login: %d, no csrf field:\n%s", page.StatusCode, body)
	}
	return c, m[1]
}

// wantSession checks whether cookie still opens the dashboard and the API.
func (e *sessionEnv) wantSession(what string, cookie *http.Cookie, live bool) {
	e.t.Helper()
	page := e.do(http.MethodGet, "/config", cookie, nil)
	api := e.do(http.MethodGet, "/api/v1/config", cookie, nil)
	if live && (page.StatusCode != http.StatusOK || api.StatusCode != http.StatusOK) {
		e.t.Errorf("%s: page %d, API %d; want the session to be live (200)", what, page.StatusCode, api.StatusCode)
	}
	if !live && (page.StatusCode != http.StatusSeeOther || page.Header.Get("Location") != "/login" || api.StatusCode != http.StatusUnauthorized) {
		e.t.Errorf("%s: page %d to %q, API %d; want the session ended (303 to /login, 401)", what, page.StatusCode, page.Header.Get("Location"), api.StatusCode)
	}
}

func sessionCookieOf(res *http.Response) *http.Cookie {
	for _, c := range res.Cookies() {
		if c.Name == sessionCookie {
			return c
		}
	}
	return nil
}

func readBody(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wantJSONError checks a refusal: status and a JSON {"error"} body.
func wantJSONError(t *testing.T, what string, res *http.Response, status int) {
	t.Helper()
	var body struct{ Error string }
	err := json.NewDecoder(res.Body).Decode(&body)
	if res.StatusCode != status || err != nil || body.Error == "" || res.Header.Get("Content-Type") != "application/json" {
		t.Errorf("%s: %d %q (%v, %q), want %d with a JSON error", what, res.StatusCode, res.Header.Get("Content-Type"), err, body.Error, status)
	}
}

func TestSessionLoginLogout(t *testing.T) {
	e := newSessionEnv(t, testToken, false)
	res := e.do(http.MethodPost, "/login", nil, url.Values{"token": {"not-the-token-0123456789"}})
	if res.StatusCode != http.StatusUnauthorized || len(res.Cookies()) != 0 {
		t.Fatalf("wrong token: %d, cookies %v; want 401 and none", res.StatusCode, res.Cookies())
	}
	a, csrfA := e.login()
	if !a.HttpOnly || a.SameSite != http.SameSiteStrictMode || a.Path != "/" || a.Secure || a.MaxAge != int(sessionLifetime.Seconds()) {
		t.Errorf("session cookie %+v, want HttpOnly, SameSite=Strict, Path=/, MaxAge %v, not Secure over plain HTTP", a, sessionLifetime)
	}
	if len(a.Value) != 43 || strings.Contains(a.Value, testToken) {
		t.Errorf("session ID %q, want 32 random bytes in base64url", a.Value)
	}
	b, csrfB := e.login()
	if b.Value == a.Value || csrfB == csrfA {
		t.Fatal("two logins share a session ID or a CSRF token")
	}

	// A cookie-authenticated change needs the session's own CSRF token.
	wantJSONError(t, "API POST without CSRF", e.do(http.MethodPost, "/api/v1/ratelimit/reset", a, url.Values{"key": {"x"}}), http.StatusForbidden)
	wantJSONError(t, "logout without CSRF", e.do(http.MethodPost, "/logout", a, url.Values{}), http.StatusForbidden)
	wantJSONError(t, "logout with a wrong CSRF", e.do(http.MethodPost, "/logout", a, url.Values{"csrf": {"0123"}}), http.StatusForbidden)
	wantJSONError(t, "logout with another session's CSRF", e.do(http.MethodPost, "/logout", a, url.Values{"csrf": {csrfB}}), http.StatusForbidden)
	e.wantSession("after refused logouts", a, true)

	res = e.do(http.MethodPost, "/logout", a, url.Values{"csrf": {csrfA}})
	if c := sessionCookieOf(res); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/login" || c == nil || c.MaxAge >= 0 {
		t.Errorf("logout: %d to %q, cookie %v; want 303 to /login clearing the cookie", res.StatusCode, res.Header.Get("Location"), c)
	}
	e.wantSession("the logged-out session", a, false)
	e.wantSession("the other session", b, true)
	// The old cookie's ID is gone, not merely cleared in the browser.
	if n := len(e.s.auth.sessions); n != 1 {
		t.Errorf("%d sessions held after the logout, want 1", n)
	}

	// Logging in again with a live cookie ends that session: IDs are
	// never reused.
	res = e.do(http.MethodPost, "/login", b, url.Values{"token": {testToken}})
	if c := sessionCookieOf(res); res.StatusCode != http.StatusSeeOther || c == nil || c.Value == b.Value {
		t.Fatalf("login over a session: %d, cookie %v; want a new session", res.StatusCode, c)
	}
	e.wantSession("the session replaced by a login", b, false)
}

func TestSessionTokenRotation(t *testing.T) {
	e := newSessionEnv(t, testToken, false)
	a, _ := e.login()
	b, _ := e.login()
	const newToken = "the-new-admin-token-0123456789"
	if err := e.s.SetToken(newToken); err != nil {
		t.Fatal(err)
	}
	e.wantSession("session a after the rotation", a, false)
	e.wantSession("session b after the rotation", b, false)
	for tok, want := range map[string]int{testToken: http.StatusUnauthorized, newToken: http.StatusOK} {
		if res := e.do(http.MethodGet, "/api/v1/config", nil, nil, "Authorization", "Bearer "+tok); res.StatusCode != want {
			t.Errorf("bearer %s after the rotation: %d, want %d", tok, res.StatusCode, want)
		}
	}
	if res := e.do(http.MethodPost, "/login", nil, url.Values{"token": {testToken}}); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("login with the old token: %d, want 401", res.StatusCode)
	}
	if err := e.s.SetToken(""); err == nil {
		t.Error("SetToken(\"\") turned authentication off")
	}

	none := newSessionEnv(t, "", false)
	if err := none.s.SetToken(newToken); err == nil {
		t.Error("SetToken turned authentication on under admin.auth: none")
	}
	if res := none.do(http.MethodGet, "/config", nil, nil); res.StatusCode != http.StatusOK {
		t.Errorf("auth none, GET /config: %d, want 200", res.StatusCode)
	}
	if res := none.do(http.MethodPost, "/login", nil, url.Values{"token": {"x"}}); res.StatusCode != http.StatusSeeOther || len(res.Cookies()) != 0 {
		t.Errorf("auth none, POST /login: %d, cookies %v; want a redirect and no session", res.StatusCode, res.Cookies())
	}
}

func TestSessionExpiry(t *testing.T) {
	t.Run("idle", func(t *testing.T) {
		e := newSessionEnv(t, testToken, false)
		c, _ := e.login()
		for i := range 3 { // each request restarts the idle time
			e.clock.Advance(sessionIdle - time.Minute)
			e.wantSession(fmt.Sprintf("request %d within the idle timeout", i+1), c, true)
		}
		e.clock.Advance(sessionIdle)
		e.wantSession("after the idle timeout", c, false)
		if n := len(e.s.auth.sessions); n != 0 {
			t.Errorf("%d sessions held, want the idle one dropped", n)
		}
	})
	t.Run("absolute", func(t *testing.T) {
		e := newSessionEnv(t, testToken, false)
		c, _ := e.login()
		step := sessionIdle - time.Minute
		used := time.Duration(0)
		for i := 0; used+step < sessionLifetime && i < 100; i++ {
			e.clock.Advance(step)
			used += step
			e.wantSession("a used session at "+used.String(), c, true)
		}
		e.clock.Advance(sessionLifetime - used)
		e.wantSession("a used session at its lifetime", c, false)
	})
}

func TestSessionBound(t *testing.T) {
	e := newSessionEnv(t, testToken, false)
	var cookies []*http.Cookie
	for range maxSessions + 1 {
		e.clock.Advance(time.Millisecond) // distinct creation times
		res := e.do(http.MethodPost, "/login", nil, url.Values{"token": {testToken}})
		cookies = append(cookies, sessionCookieOf(res))
	}
	if n := len(e.s.auth.sessions); n != maxSessions {
		t.Errorf("%d sessions held, want the bound %d", n, maxSessions)
	}
	e.wantSession("the oldest session", cookies[0], false)
	e.wantSession("the second oldest", cookies[1], true)
	e.wantSession("the newest", cookies[maxSessions], true)
}

func TestSessionCookieSecure(t *testing.T) {
	for _, tt := range []struct {
		name       string
		tlsOn, req bool
		want       bool
	}{
		{"plain HTTP", false, false, false},
		{"admin listener with TLS, request through a proxy", true, false, true},
		{"request over TLS", false, true, true},
	} {
		e := newSessionEnv(t, testToken, tt.tlsOn)
		r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(url.Values{"token": {testToken}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if tt.req {
			r.TLS = &tls.ConnectionState{}
		}
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, r)
		c := sessionCookieOf(rec.Result())
		if c == nil || c.Secure != tt.want {
			t.Errorf("%s: session cookie %+v, want Secure = %v", tt.name, c, tt.want)
		}
		rec = httptest.NewRecorder()
		e.s.setFlash(rec, r, "done", false)
		if cs := rec.Result().Cookies(); len(cs) != 1 || cs[0].Secure != tt.want {
			t.Errorf("%s: flash cookie %v, want Secure = %v", tt.name, cs, tt.want)
		}
	}
}

// TestSessionLoginCSRF: a login form posted from another site starts no
// session, so a victim's browser cannot be logged in to one the attacker
// knows.
func TestSessionLoginCSRF(t *testing.T) {
	e := newSessionEnv(t, testToken, false)
	for _, hdr := range [][]string{
		{"Origin", "https://evil.example"},
		{"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"},
		{"Sec-Fetch-Site", "same-site", "Origin", "http://example.com:8080"},
	} {
		res := e.do(http.MethodPost, "/login", nil, url.Values{"token": {testToken}}, hdr...)
		wantJSONError(t, "cross-origin login "+strings.Join(hdr, " "), res, http.StatusForbidden)
		if len(res.Cookies()) != 0 || len(e.s.auth.sessions) != 0 {
			t.Errorf("cross-origin login %v: cookies %v, %d sessions; want none", hdr, res.Cookies(), len(e.s.auth.sessions))
		}
	}
	res := e.do(http.MethodPost, "/login", nil, url.Values{"token": {testToken}}, "Sec-Fetch-Site", "same-origin", "Origin", "http://example.com")
	if res.StatusCode != http.StatusSeeOther || sessionCookieOf(res) == nil {
		t.Errorf("same-origin login: %d, want 303 with a session", res.StatusCode)
	}
}
