// SPDX-License-Identifier: Apache-2.0

package server

import (
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"
)

// TestAdminTokenRotation: a new token in admin.token-file (read on SIGHUP
// or when the file changes) ends every dashboard session and the old
// token; an unchanged or invalid file ends nothing.
func TestAdminTokenRotation(t *testing.T) {
	e := startEnv(t, nil)
	f := adminFixtureOf(t, e)
	other, _ := f.login(t)
	bearer := func(tok string) int {
		return f.send(t, adminReq{method: http.MethodGet, path: "/api/v1/config", header: map[string]string{"Authorization": "Bearer " + tok}}).status
	}
	live := func(c *http.Cookie) bool {
		return f.send(t, adminReq{method: http.MethodGet, path: "/api/v1/config", cookie: c}).status == http.StatusOK
	}
	path := adminTokenPath(e.cfg)

	// SIGHUP with the same token, then with a file that is no token.
	if err := e.srv.rotateAdminToken("test"); err != nil {
		t.Fatalf("unchanged token: %v", err)
	}
	if err := os.WriteFile(path, []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := e.srv.rotateAdminToken("test"); err == nil {
		t.Error("a token file holding no valid token was taken")
	}
	if !live(f.session) || !live(other) || bearer(f.token) != http.StatusOK {
		t.Fatal("an unchanged or invalid token file ended sessions or the token")
	}

	// A rotation, as SIGHUP does it.
	const next = "rotated-admin-token-0123456789abcdef"
	if err := os.WriteFile(path, []byte(next+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := e.srv.rotateAdminToken("test"); err != nil {
		t.Fatal(err)
	}
	if live(f.session) || live(other) {
		t.Error("a session of the old token outlived the rotation")
	}
	if got := bearer(f.token); got != http.StatusUnauthorized {
		t.Errorf("old token after the rotation: %d, want 401", got)
	}
	if got := bearer(next); got != http.StatusOK {
		t.Errorf("new token: %d, want 200", got)
	}

	// A rotation the running server finds by itself (it polls the file).
	f.token = next
	f.session, f.csrf = f.login(t)
	const third = "third-admin-token-0123456789abcdef"
	if err := os.WriteFile(path, []byte(third+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The poll is every second; the bound is for a loaded machine.
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; live(f.session) && i < 400; i++ {
		if time.Now().After(deadline) {
			t.Fatal("the server did not take the changed token file within 20 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := bearer(third); got != http.StatusOK {
		t.Errorf("the polled token: %d, want 200", got)
	}
}

// TestAdminTLSSession: with admin.tls, the session cookie is Secure, and
// the listener answers for its certificate's names.
func TestAdminTLSSession(t *testing.T) {
	e := startEnv(t, func(c *Config) { c.Admin.TLS = true })
	if !strings.HasPrefix(e.adminURL, "https://") {
		t.Fatalf("admin URL %s, want https", e.adminURL)
	}
	f := adminFixtureOf(t, e)
	if !f.session.Secure || !f.session.HttpOnly || f.session.SameSite != http.SameSiteStrictMode || f.session.Path != "/" {
		t.Errorf("session cookie over TLS %+v, want Secure, HttpOnly, SameSite=Strict, Path=/", f.session)
	}
	_, port, _ := net.SplitHostPort(f.host)
	leaf := e.srv.tlsCert.Leaf
	for _, name := range append(leaf.DNSNames, "127.0.0.1") {
		host := net.JoinHostPort(name, port)
		res := f.send(t, adminReq{method: http.MethodGet, path: "/api/v1/config", host: host, cookie: f.session})
		if res.status != http.StatusOK {
			t.Errorf("Host %s (a name of the listener's certificate): %d, want 200", host, res.status)
		}
	}
	// Logout over TLS needs the CSRF token too, and ends the session.
	res := f.send(t, adminReq{method: http.MethodPost, path: "/logout", cookie: f.session, form: url.Values{},
		header: map[string]string{"Sec-Fetch-Site": "same-origin"}})
	wantJSONRefusal(t, "logout without the CSRF token", res, http.StatusForbidden)
	res = f.send(t, adminReq{method: http.MethodPost, path: "/logout", cookie: f.session, form: url.Values{"csrf": {f.csrf}},
		header: map[string]string{"Sec-Fetch-Site": "same-origin"}})
	if res.status != http.StatusSeeOther {
		t.Fatalf("logout: %d, want 303", res.status)
	}
	if page := f.send(t, adminReq{method: http.MethodGet, path: "/", cookie: f.session}); page.status != http.StatusSeeOther || page.header.Get("Location") != "/login" {
		t.Errorf("the logged-out cookie: %d to %q, want the login redirect", page.status, page.header.Get("Location"))
	}
}
