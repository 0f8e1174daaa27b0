// SPDX-License-Identifier: Apache-2.0

package server

import (
	"crypto"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/weir-pki/weir/acme"
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
	dirURL, nonceURL := e.base+"/directory", e.base+"/acme/new-nonce"

	used := e.nonce()
	res := e.postJWS(a.key, dirURL, []byte{}, signOpts{kid: a.kid, nonce: used})
	var dir struct{ NewNonce, NewAccount, NewOrder string }
	if err := json.Unmarshal(res.body, &dir); res.status != http.StatusOK || err != nil || dir.NewNonce != nonceURL || dir.NewOrder == "" {
		t.Errorf("POST-as-GET of the directory: %d %s, want 200 with the directory", res.status, res.body)
	}
	if n := res.header.Get("Replay-Nonce"); n == "" || n == used {
		t.Errorf("the directory's Replay-Nonce %q, want a fresh one", n)
	}
	if again := e.postJWS(a.key, dirURL, []byte{}, signOpts{kid: a.kid, nonce: used}); again.status != http.StatusBadRequest {
		t.Errorf("a POST-as-GET of the directory with a used nonce: %d, want 400 badNonce", again.status)
	}
	res = a.post(e, nonceURL, []byte{})
	if res.status != http.StatusOK || len(res.body) != 0 || res.header.Get("Replay-Nonce") == "" || res.header.Get("Cache-Control") != "no-store" {
		t.Errorf("POST-as-GET of newNonce: %d %q, Replay-Nonce %q, Cache-Control %q; want 200, empty, a nonce, no-store",
			res.status, res.body, res.header.Get("Replay-Nonce"), res.header.Get("Cache-Control"))
	}
	// The nonce it gave works.
	if ok := e.postJWS(a.key, a.kid, []byte{}, signOpts{kid: a.kid, nonce: res.header.Get("Replay-Nonce")}); ok.status != http.StatusOK {
		t.Errorf("a POST-as-GET with the nonce newNonce gave: %d %s", ok.status, ok.body)
	}

	var cases []badCase
	for _, res := range []struct{ name, u string }{{"directory", dirURL}, {"new-nonce", nonceURL}} {
		u := res.u
		send := func(key crypto.Signer, payload string, o signOpts) func(*testing.T) rawResponse {
			return func(*testing.T) rawResponse { return e.postJWS(key, u, []byte(payload), o) }
		}
		ak, other := a.key, newKey(t)
		cases = append(cases,
			badCase{name: res.name + " with a payload", send: send(ak, `{}`, signOpts{kid: a.kid}),
				status: http.StatusBadRequest, typ: acme.ProbMalformed, detail: "the payload must be empty (RFC 8555 §6.3)"},
			badCase{name: res.name + " signed with a jwk", send: send(other, ``, signOpts{}),
				status: http.StatusBadRequest, typ: acme.ProbMalformed, detail: "must be signed with an account key ID (kid), not a jwk"},
			badCase{name: res.name + " signed by another key", send: send(other, ``, signOpts{kid: a.kid}),
				status: http.StatusBadRequest, typ: acme.ProbMalformed, detail: "the JWS signature does not verify"},
			badCase{name: res.name + " with an unknown nonce", send: send(ak, ``, signOpts{kid: a.kid, nonce: "bm9uY2U"}),
				status: http.StatusBadRequest, typ: acme.ProbBadNonce, detail: "unknown, expired or already used"},
			badCase{name: res.name + " signed for another URL", send: send(ak, ``, signOpts{kid: a.kid, url: e.base + "/acme/new-order"}),
				status: http.StatusForbidden, typ: acme.ProbUnauthorized, detail: "does not match the request URL"},
			badCase{name: res.name + " by a deactivated account", send: send(d.key, ``, signOpts{kid: d.kid}),
				status: http.StatusUnauthorized, typ: acme.ProbUnauthorized, detail: "is deactivated"},
			badCase{name: res.name + " not a JWS", send: func(*testing.T) rawResponse { return e.post(u, "application/jose+json", []byte(`{}`)) },
				status: http.StatusBadRequest, typ: acme.ProbMalformed, detail: `"protected", "payload" and "signature"`},
		)
	}
	runRefused(t, e, cases, a.spender(e))

	// Clients that fetch them with POST-as-GET get on as before.
	if _, err := a.client.Discover(t.Context()); err != nil {
		t.Errorf("discovery after the refusals: %v", err)
	}
}
