// SPDX-License-Identifier: Apache-2.0

package system

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/internal/acmeenv"
)

// The admin listener's guards, over HTTP without a browser: what a hostile
// page can make a browser send (a cross-origin form POST, or any request
// to the listener under a name rebound to it) is refused in every
// admin.auth mode, and changes nothing.

// stateChanging are the endpoints a hostile page would aim at: revoke a
// certificate, deactivate an account, reset a bucket (each through the
// dashboard's form and the JSON API), log in and log out.
func (f *adminFixture) stateChanging() []adminReq {
	csrf := map[string]string{}
	if f.csrf != "" {
		csrf["X-CSRF-Token"] = f.csrf
	}
	loginToken := f.token
	if loginToken == "" {
		loginToken = "anything-0123456789"
	}
	return []adminReq{
		{path: "/certs/" + f.serial + "/revoke", form: url.Values{"csrf": {f.csrf}, "reason": {"keyCompromise"}, "confirm": {"yes"}}},
		{path: "/api/v1/certs/" + f.serial + "/revoke", json: `{"reason":"keyCompromise"}`, header: csrf},
		{path: "/accounts/" + f.victim + "/deactivate", form: url.Values{"csrf": {f.csrf}, "confirm": {"yes"}}},
		{path: "/api/v1/accounts/" + f.victim + "/deactivate", json: `{}`, header: csrf},
		{path: "/limiter/reset", form: url.Values{"csrf": {f.csrf}, "key": {f.bucket}}},
		{path: "/api/v1/ratelimit/reset", json: `{"key":"` + f.bucket + `"}`, header: csrf},
		{path: "/login", form: url.Values{"token": {loginToken}}},
		{path: "/logout", form: url.Values{"csrf": {f.csrf}}},
	}
}

// TestAdminCrossOrigin: in both auth modes, a state-changing request that
// a browser sends from another origin, or under a rebound name, is refused
// (403, or 421 for the name) whatever its method, even with the victim's
// session cookie and CSRF token, and nothing changes: no certificate
// revoked, no account deactivated, no bucket reset, no session started or
// ended. The same requests from the dashboard's own pages, or from a
// script that sends no Origin (the operator commands), still work.
func TestAdminCrossOrigin(t *testing.T) {
	for _, auth := range []string{"none", "token"} {
		t.Run("auth "+auth, func(t *testing.T) {
			f := startAdminFixture(t, auth)
			rebound := "attacker.example:" + strings.Split(f.host, ":")[1]
			variants := []struct {
				name   string
				host   string
				header map[string]string
				want   int
			}{
				{"foreign Origin, no Sec-Fetch-Site", "", map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
				{"cross-site", "", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, http.StatusForbidden},
				{"same-site, another port", "", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://127.0.0.1:1"}, http.StatusForbidden},
				{"another port, no Sec-Fetch-Site", "", map[string]string{"Origin": "http://127.0.0.1:1"}, http.StatusForbidden},
				{"opaque origin", "", map[string]string{"Origin": "null"}, http.StatusForbidden},
				{"Sec-Fetch-Site alone", "", map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
				// DNS rebinding: the browser thinks it talks to the
				// attacker's own origin.
				{"rebound name", rebound, map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://" + rebound}, http.StatusMisdirectedRequest},
				{"rebound name, no Origin", rebound, nil, http.StatusMisdirectedRequest},
			}
			before := snapshotDB(t, f.e)
			for _, ep := range f.stateChanging() {
				for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodGet} {
					for _, v := range variants {
						if v.header == nil && v.host == "" {
							continue
						}
						r := ep
						r.method, r.host, r.cookie = method, v.host, f.session
						r.header = map[string]string{}
						for k, val := range ep.header {
							r.header[k] = val
						}
						for k, val := range v.header {
							r.header[k] = val
						}
						what := method + " " + ep.path + " (" + v.name + ")"
						res := f.send(t, r)
						if method == http.MethodGet && v.want == http.StatusForbidden {
							// A safe method passes the cross-origin check
							// and must change nothing: no route takes it.
							if want := getStatus(ep.path, auth); res.status != want {
								t.Errorf("%s: %d, want %d", what, res.status, want)
							}
						} else {
							wantJSONRefusal(t, what, res, v.want)
						}
						if d := before.Diff(snapshotDB(t, f.e)); d != "" {
							t.Fatalf("%s changed the store: %s", what, d)
						}
						if f.session != nil && !f.sessionLive(t) {
							t.Fatalf("%s ended the session", what)
						}
					}
				}
			}
			// The bucket is still spent.
			acmeenv.Want429(t, f.e.RawOrder(f.key, f.kid, "guard3.weir.test"), "order-creation", strings.TrimPrefix(f.bucket, "order-creation:"))

			// The same endpoints from the dashboard's own pages and from a
			// script work: the refusals above were the guards'.
			own := map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": f.e.adminURL}
			eps := f.stateChanging()
			revoke, deactivateAPI, reset := eps[0], eps[3], eps[4]
			revoke.method, revoke.cookie, revoke.header = http.MethodPost, f.session, own
			if res := f.send(t, revoke); res.status != http.StatusSeeOther {
				t.Errorf("same-origin revoke: %d, want 303:\n%s", res.status, res.body)
			}
			if c, err := f.e.srv.Store().GetCertificate(t.Context(), f.serial); err != nil || c.RevokedAt.IsZero() {
				t.Errorf("after the same-origin revoke: %v, revoked at %v; want revoked", err, c)
			}
			deactivateAPI.method = http.MethodPost
			if f.token != "" {
				deactivateAPI.header = map[string]string{"Authorization": "Bearer " + f.token}
			}
			if res := f.send(t, deactivateAPI); res.status != http.StatusOK {
				t.Errorf("deactivate from a script: %d, want 200:\n%s", res.status, res.body)
			}
			if a, err := f.e.srv.Store().GetAccount(t.Context(), acme.AccountID(f.victim)); err != nil || a.Status != acme.StatusDeactivated {
				t.Errorf("after the deactivation from a script: %v, %+v; want deactivated", err, a)
			}
			reset.method, reset.cookie, reset.header = http.MethodPost, f.session, map[string]string{"Origin": f.e.adminURL}
			if res := f.send(t, reset); res.status != http.StatusSeeOther {
				t.Errorf("same-origin reset from a browser without Sec-Fetch-Site: %d, want 303:\n%s", res.status, res.body)
			}
			acmeenv.WantStatus(t, f.e.RawOrder(f.key, f.kid, "guard4.weir.test"), http.StatusCreated)
		})
	}
}

// getStatus is the answer to a GET of a state-changing endpoint: the login
// page (or, with no login, the way to the overview), else 405.
func getStatus(path, auth string) int {
	switch {
	case path == "/login" && auth == "token":
		return http.StatusOK
	case path == "/login":
		return http.StatusSeeOther
	}
	return http.StatusMethodNotAllowed
}
