// SPDX-License-Identifier: Apache-2.0

package system

import (
	"crypto"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/internal/acmeenv"
)

// TestPostAsGetDirectoryAndNonce: RFC 8555 §6.3 has the server allow GET
// on the directory and newNonce in addition to POST-as-GET. A POST-as-GET
// of either, a JWS verified like any other (nonce redeemed, url, the
// account's kid), gets the directory (200) or a fresh nonce (200, as
// HEAD); a payload, a bad JWS or a jwk-signed one gets its precise
// problem and changes nothing.
func TestPostAsGetDirectoryAndNonce(t *testing.T) {
	e := startEnv(t, nil)
	a, d := e.register(t), e.register(t)
	if err := d.client.DeactivateReg(t.Context()); err != nil {
		t.Fatal(err)
	}
	dirURL, nonceURL := e.Base+"/directory", e.Base+"/acme/new-nonce"

	used := e.Nonce()
	res := e.PostJWS(a.key, dirURL, []byte{}, acmeenv.SignOpts{KID: a.kid, Nonce: used})
	var dir struct{ NewNonce, NewAccount, NewOrder string }
	if err := json.Unmarshal(res.Body, &dir); res.Status != http.StatusOK || err != nil || dir.NewNonce != nonceURL || dir.NewOrder == "" {
		t.Errorf("POST-as-GET of the directory: %d %s, want 200 with the directory", res.Status, res.Body)
	}
	if n := res.Header.Get("Replay-Nonce"); n == "" || n == used {
		t.Errorf("the directory's Replay-Nonce %q, want a fresh one", n)
	}
	if again := e.PostJWS(a.key, dirURL, []byte{}, acmeenv.SignOpts{KID: a.kid, Nonce: used}); again.Status != http.StatusBadRequest {
		t.Errorf("a POST-as-GET of the directory with a used nonce: %d, want 400 badNonce", again.Status)
	}
	res = a.post(e, nonceURL, []byte{})
	if res.Status != http.StatusOK || len(res.Body) != 0 || res.Header.Get("Replay-Nonce") == "" || res.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("POST-as-GET of newNonce: %d %q, Replay-Nonce %q, Cache-Control %q; want 200, empty, a nonce, no-store",
			res.Status, res.Body, res.Header.Get("Replay-Nonce"), res.Header.Get("Cache-Control"))
	}
	// The nonce it gave works.
	if ok := e.PostJWS(a.key, a.kid, []byte{}, acmeenv.SignOpts{KID: a.kid, Nonce: res.Header.Get("Replay-Nonce")}); ok.Status != http.StatusOK {
		t.Errorf("a POST-as-GET with the nonce newNonce gave: %d %s", ok.Status, ok.Body)
	}

	var cases []badCase
	for _, res := range []struct{ name, u string }{{"directory", dirURL}, {"new-nonce", nonceURL}} {
		u := res.u
		send := func(key crypto.Signer, payload string, o acmeenv.SignOpts) func(*testing.T) acmeenv.Response {
			return func(*testing.T) acmeenv.Response { return e.PostJWS(key, u, []byte(payload), o) }
		}
		ak, other := a.key, acmeenv.NewKey(t)
		cases = append(cases,
			badCase{name: res.name + " with a payload", send: send(ak, `{}`, acmeenv.SignOpts{KID: a.kid}),
				status: http.StatusBadRequest, typ: acme.ProbMalformed, detail: "the payload must be empty (RFC 8555 §6.3)"},
			badCase{name: res.name + " signed with a jwk", send: send(other, ``, acmeenv.SignOpts{}),
				status: http.StatusBadRequest, typ: acme.ProbMalformed, detail: "must be signed with an account key ID (kid), not a jwk"},
			badCase{name: res.name + " signed by another key", send: send(other, ``, acmeenv.SignOpts{KID: a.kid}),
				status: http.StatusBadRequest, typ: acme.ProbMalformed, detail: "the JWS signature does not verify"},
			badCase{name: res.name + " with an unknown nonce", send: send(ak, ``, acmeenv.SignOpts{KID: a.kid, Nonce: "bm9uY2U"}),
				status: http.StatusBadRequest, typ: acme.ProbBadNonce, detail: "unknown, expired or already used"},
			badCase{name: res.name + " signed for another URL", send: send(ak, ``, acmeenv.SignOpts{KID: a.kid, URL: e.Base + "/acme/new-order"}),
				status: http.StatusForbidden, typ: acme.ProbUnauthorized, detail: "does not match the request URL"},
			badCase{name: res.name + " by a deactivated account", send: send(d.key, ``, acmeenv.SignOpts{KID: d.kid}),
				status: http.StatusUnauthorized, typ: acme.ProbUnauthorized, detail: "is deactivated"},
			badCase{name: res.name + " not a JWS", send: func(*testing.T) acmeenv.Response { return e.Post(u, "application/jose+json", []byte(`{}`)) },
				status: http.StatusBadRequest, typ: acme.ProbMalformed, detail: `"protected", "payload" and "signature"`},
		)
	}
	runRefused(t, e, cases, a.spender(e))

	// Clients that fetch them with POST-as-GET get on as before.
	if _, err := a.client.Discover(t.Context()); err != nil {
		t.Errorf("discovery after the refusals: %v", err)
	}
}
