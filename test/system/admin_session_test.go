// SPDX-License-Identifier: Apache-2.0

package system

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/weir-pki/weir/server"
)

// TestAdminTLSSession: with admin.tls, the session cookie is Secure, and
// the listener answers for its certificate's names.
func TestAdminTLSSession(t *testing.T) {
	e := startEnv(t, func(c *server.Config) { c.Admin.TLS = true })
	if !strings.HasPrefix(e.adminURL, "https://") {
		t.Fatalf("admin URL %s, want https", e.adminURL)
	}
	f := adminFixtureOf(t, e)
	if !f.session.Secure || !f.session.HttpOnly || f.session.SameSite != http.SameSiteStrictMode || f.session.Path != "/" {
		t.Errorf("session cookie over TLS %+v, want Secure, HttpOnly, SameSite=Strict, Path=/", f.session)
	}
	_, port, _ := net.SplitHostPort(f.host)
	leaf := adminLeaf(t, f)
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

// adminLeaf is the certificate the admin listener presents, as a client
// that trusts weir's root sees it in the handshake.
func adminLeaf(t *testing.T, f *adminFixture) *x509.Certificate {
	t.Helper()
	host, _, _ := net.SplitHostPort(f.host)
	conn, err := tls.Dial("tcp", f.host, &tls.Config{RootCAs: f.e.Roots, ServerName: host})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0]
}
