// SPDX-License-Identifier: Apache-2.0

package system

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/server"
)

// TestBadInput sends one server a table of bad requests and checks each is
// refused with the right problem, a fresh nonce, and no trace in the
// database; then that the server still issues.
func TestBadInput(t *testing.T) {
	e := startEnv(t, func(c *server.Config) {
		c.CA.Policy.DeniedDomains = []string{"denied.test"}
	})
	ctx := t.Context()
	var (
		newAccountURL = e.Base + "/acme/new-account"
		newOrderURL   = e.Base + "/acme/new-order"
		revokeURL     = e.Base + "/acme/revoke-cert"
		keyChangeURL  = e.Base + "/acme/key-change"
	)

	// Accounts A (the main one), B (another) and D (deactivated).
	register := func(key crypto.Signer) (*xacme.Client, string) {
		t.Helper()
		c := e.Client(key)
		a, err := c.Register(ctx, &xacme.Account{}, xacme.AcceptTOS)
		if err != nil {
			t.Fatalf("register: %v", err)
		}
		return c, a.URI
	}
	keyA, keyB, keyD := acmeenv.NewKey(t), acmeenv.NewKey(t), acmeenv.NewKey(t)
	clientA, kidA := register(keyA)
	_, kidB := register(keyB)
	clientD, kidD := register(keyD)
	if err := clientD.DeactivateReg(ctx); err != nil {
		t.Fatalf("deactivate D: %v", err)
	}

	// A pending order, a ready order, a wildcard order and a certificate.
	pending, err := clientA.AuthorizeOrder(ctx, xacme.DomainIDs("pending.weir.test"))
	if err != nil || pending.Status != xacme.StatusPending {
		t.Fatalf("pending order: %+v, %v", pending, err)
	}
	ready, err := clientA.AuthorizeOrder(ctx, xacme.DomainIDs("ready.weir.test"))
	if err != nil {
		t.Fatal(err)
	}
	e.Solve(ctx, clientA, ready.AuthzURLs[0], "http-01")
	if ready, err = clientA.WaitOrder(ctx, ready.URI); err != nil || ready.Status != xacme.StatusReady {
		t.Fatalf("ready order: %+v, %v", ready, err)
	}
	wild, err := clientA.AuthorizeOrder(ctx, xacme.DomainIDs("*.wild.weir.test"))
	if err != nil {
		t.Fatal(err)
	}
	// RFC 8555 §7.1.3: a wildcard's authorization offers dns-01 only, so
	// there is no http-01 challenge URL to respond to.
	wildAuthz, err := clientA.GetAuthorization(ctx, wild.AuthzURLs[0])
	if err != nil {
		t.Fatal(err)
	}
	var wildTypes []string
	for _, c := range wildAuthz.Challenges {
		wildTypes = append(wildTypes, c.Type)
	}
	if !wildAuthz.Wildcard || wildAuthz.Identifier.Value != "wild.weir.test" || !slices.Equal(wildTypes, []string{"dns-01"}) {
		t.Fatalf("wildcard authz: wildcard %v, identifier %q, challenges %v; want true, wild.weir.test, [dns-01]",
			wildAuthz.Wildcard, wildAuthz.Identifier.Value, wildTypes)
	}
	dnsChallURL := wildAuthz.Challenges[0].URI
	revokeChain, revokeCertURL := e.Issue(ctx, clientA, acmeenv.NewKey(t), "http-01", xacme.DomainIDs("revoke.weir.test")...)
	revokeDER := base64.RawURLEncoding.EncodeToString(revokeChain[0])

	foreignDER := foreignCertDER(t)

	rsa1024, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	p521, err := ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	jwkA := acmeenv.PublicJWK(t, keyA.Public())
	// An External Account Binding key (RFC 8555 §7.3.4) for the EAB cases.
	eabKey, err := e.srv.Service().CreateEABKey(ctx, "bad-input", "")
	if err != nil {
		t.Fatal(err)
	}

	// Builders.
	postJose := func(url string, body []byte) acmeenv.Response { return e.Post(url, "application/jose+json", body) }
	// asA / asB sign with the account's kid.
	asA := func(url string, payload []byte) acmeenv.Response {
		return e.PostJWS(keyA, url, payload, acmeenv.SignOpts{KID: kidA})
	}
	asB := func(url string, payload []byte) acmeenv.Response {
		return e.PostJWS(keyB, url, payload, acmeenv.SignOpts{KID: kidB})
	}
	newOrder := func(ids ...acme.Identifier) func(*testing.T) acmeenv.Response {
		return func(t *testing.T) acmeenv.Response {
			return asA(newOrderURL, acmeenv.MarshalJSON(t, map[string]any{"identifiers": ids}))
		}
	}
	newAccount := func(payload string) func(*testing.T) acmeenv.Response {
		return func(*testing.T) acmeenv.Response {
			return e.PostJWS(acmeenv.NewKey(t), newAccountURL, []byte(payload), acmeenv.SignOpts{})
		}
	}
	// hand sends a JWS with exactly the protected header hdr to url.
	hand := func(url string, hdr map[string]any, payload []byte) func(*testing.T) acmeenv.Response {
		return func(t *testing.T) acmeenv.Response {
			h := map[string]any{}
			for k, v := range hdr {
				h[k] = v
			}
			if _, ok := h["nonce"]; !ok {
				h["nonce"] = e.Nonce()
			}
			return postJose(url, acmeenv.MarshalJSON(t, acmeenv.HandSignedJWS(t, keyA, h, payload)))
		}
	}
	finalize := func(csr []byte) func(*testing.T) acmeenv.Response {
		return func(t *testing.T) acmeenv.Response {
			return asA(ready.FinalizeURL, acmeenv.MarshalJSON(t, map[string]string{"csr": base64.RawURLEncoding.EncodeToString(csr)}))
		}
	}
	revoke := func(reason int) func(*testing.T) acmeenv.Response {
		return func(t *testing.T) acmeenv.Response {
			return asA(revokeURL, acmeenv.MarshalJSON(t, map[string]any{"certificate": revokeDER, "reason": reason}))
		}
	}
	// newAccountEAB sends a new-account of a fresh key with the
	// externalAccountBinding eab makes from a correct protected header
	// and the key's JWK.
	newAccountEAB := func(eab func(t *testing.T, hdr map[string]any, jwk json.RawMessage) json.RawMessage) func(*testing.T) acmeenv.Response {
		return func(t *testing.T) acmeenv.Response {
			k := acmeenv.NewKey(t)
			hdr := map[string]any{"alg": "HS256", "kid": eabKey.ID, "url": newAccountURL}
			payload := acmeenv.MarshalJSON(t, map[string]any{"termsOfServiceAgreed": true, "externalAccountBinding": eab(t, hdr, acmeenv.PublicJWK(t, k.Public()))})
			return e.PostJWS(k, newAccountURL, payload, acmeenv.SignOpts{})
		}
	}
	// eabWith MACs the binding with the key's HMAC key after edit changes
	// its header.
	eabWith := func(edit func(hdr map[string]any)) func(*testing.T, map[string]any, json.RawMessage) json.RawMessage {
		return func(t *testing.T, hdr map[string]any, jwk json.RawMessage) json.RawMessage {
			edit(hdr)
			return eabJWS(t, hdr, jwk, eabKey.HMACKey)
		}
	}

	var replayBody []byte
	cases := []badCase{
		// Transport and serialization.
		{name: "bad JSON body", status: 400, typ: acme.ProbMalformed, detail: "not a JSON object",
			send: func(*testing.T) acmeenv.Response { return postJose(newAccountURL, []byte(`{"protected": "e30", `)) }},
		{name: "JSON array body", status: 400, typ: acme.ProbMalformed, detail: "not a JSON object",
			send: func(*testing.T) acmeenv.Response { return postJose(newAccountURL, []byte(`[]`)) }},
		{name: "data after the JWS", status: 400, typ: acme.ProbMalformed, detail: "data after the JWS",
			send: func(t *testing.T) acmeenv.Response {
				return postJose(newAccountURL, append(e.Sign(acmeenv.NewKey(t), newAccountURL, []byte(`{}`), acmeenv.SignOpts{}), []byte(" {}")...))
			}},
		{name: "general JWS serialization", status: 400, typ: acme.ProbMalformed, detail: "flattened JSON serialization",
			send: func(t *testing.T) acmeenv.Response {
				var flat map[string]any
				_ = json.Unmarshal(e.Sign(acmeenv.NewKey(t), newAccountURL, []byte(`{}`), acmeenv.SignOpts{}), &flat)
				general := map[string]any{"payload": flat["payload"], "signatures": []any{
					map[string]any{"protected": flat["protected"], "signature": flat["signature"]}}}
				return postJose(newAccountURL, acmeenv.MarshalJSON(t, general))
			}},
		{name: "unprotected header", status: 400, typ: acme.ProbMalformed, detail: "unprotected header",
			send: func(t *testing.T) acmeenv.Response {
				var flat map[string]any
				_ = json.Unmarshal(e.Sign(acmeenv.NewKey(t), newAccountURL, []byte(`{}`), acmeenv.SignOpts{}), &flat)
				flat["header"] = map[string]any{"kid": "x"}
				return postJose(newAccountURL, acmeenv.MarshalJSON(t, flat))
			}},
		{name: "protected header not base64url", status: 400, typ: acme.ProbMalformed, detail: "not base64url",
			send: func(*testing.T) acmeenv.Response {
				return postJose(newAccountURL, []byte(`{"protected":"e30=","payload":"","signature":"AAAA"}`))
			}},
		{name: "payload in a non-canonical base64url spelling", status: 400, typ: acme.ProbMalformed, detail: "payload is not base64url",
			send: func(t *testing.T) acmeenv.Response {
				var flat map[string]any
				_ = json.Unmarshal(e.Sign(acmeenv.NewKey(t), newAccountURL, []byte(`{}`), acmeenv.SignOpts{}), &flat)
				flat["payload"] = "e31" // "{}" is e30; the set bit past the data is not what was signed
				return postJose(newAccountURL, acmeenv.MarshalJSON(t, flat))
			}},
		{name: "payload not JSON", status: 400, typ: acme.ProbMalformed, detail: "payload is not valid JSON",
			send: func(*testing.T) acmeenv.Response { return asA(newOrderURL, []byte(`identifiers`)) }},
		{name: "payload of the wrong shape", status: 400, typ: acme.ProbMalformed, detail: "payload is not valid JSON",
			send: func(*testing.T) acmeenv.Response { return asA(newOrderURL, []byte(`{"identifiers":"a.weir.test"}`)) }},
		{name: "POST-as-GET to new-order", status: 400, typ: acme.ProbMalformed, detail: "needs a JSON payload",
			send: func(*testing.T) acmeenv.Response { return asA(newOrderURL, []byte{}) }},
		{name: "payload on a POST-as-GET resource", status: 400, typ: acme.ProbMalformed, detail: "POST-as-GET",
			send: func(*testing.T) acmeenv.Response { return asA(pending.URI, []byte(`{}`)) }},
		{name: "payload on a certificate's issuer", status: 400, typ: acme.ProbMalformed, detail: "POST-as-GET",
			send: func(*testing.T) acmeenv.Response { return asA(revokeCertURL+"/issuer", []byte(`{}`)) }},
		{name: "certificate in a format weir does not serve", status: http.StatusNotAcceptable, typ: acme.ProbMalformed, detail: "application/pem-certificate-chain or application/pkix-cert",
			send: func(*testing.T) acmeenv.Response {
				return e.PostJWSAccept(keyA, revokeCertURL, []byte{}, acmeenv.SignOpts{KID: kidA}, "text/html, application/pkix-cert;q=0")
			}},
		{name: "certificate's issuer in a format weir does not serve", status: http.StatusNotAcceptable, typ: acme.ProbMalformed, detail: "application/pem-certificate-chain or application/pkix-cert",
			send: func(*testing.T) acmeenv.Response {
				return e.PostJWSAccept(keyA, revokeCertURL+"/issuer", []byte{}, acmeenv.SignOpts{KID: kidA}, "application/pkcs7-mime")
			}},
		{name: "oversized body", status: http.StatusRequestEntityTooLarge, typ: acme.ProbMalformed, detail: "larger than",
			send: func(t *testing.T) acmeenv.Response {
				big := strings.Repeat("a", int(e.cfg.Server.MaxBodyBytes))
				return asA(newOrderURL, acmeenv.MarshalJSON(t, map[string]any{"identifiers": []acme.Identifier{{Type: "dns", Value: "big.weir.test"}}, "pad": big}))
			}},
		{name: "Content-Type application/json", status: http.StatusUnsupportedMediaType, typ: acme.ProbMalformed, detail: "application/jose+json",
			send: func(t *testing.T) acmeenv.Response {
				return e.Post(newAccountURL, "application/json", e.Sign(acmeenv.NewKey(t), newAccountURL, []byte(`{}`), acmeenv.SignOpts{}))
			}},
		{name: "GET new-order", status: http.StatusMethodNotAllowed, typ: acme.ProbMalformed, detail: "method GET",
			send: func(t *testing.T) acmeenv.Response { return e.Get(t, newOrderURL) }},
		{name: "unknown resource", status: http.StatusNotFound, typ: acme.ProbMalformed, detail: "no such resource",
			send: func(*testing.T) acmeenv.Response { return asA(e.Base+"/acme/nothing-here", []byte{}) }},

		// Protected header: url and nonce (RFC 8555 §6.4, §6.5).
		{name: "wrong url", status: 403, typ: acme.ProbUnauthorized, detail: "does not match the request URL",
			send: func(t *testing.T) acmeenv.Response {
				return e.PostJWS(keyA, newOrderURL, acmeenv.MarshalJSON(t, map[string]any{"identifiers": []acme.Identifier{{Type: "dns", Value: "url.weir.test"}}}),
					acmeenv.SignOpts{KID: kidA, URL: newAccountURL})
			}},
		{name: "no url", status: 400, typ: acme.ProbMalformed, detail: `no "url"`,
			send: hand(newOrderURL, map[string]any{"alg": "ES256", "kid": kidA}, []byte(`{}`))},
		{name: "replayed nonce", status: 400, typ: acme.ProbBadNonce, detail: "already used",
			prep: func(t *testing.T) {
				replayBody = e.Sign(keyA, kidA, []byte{}, acmeenv.SignOpts{KID: kidA})
				if res := postJose(kidA, replayBody); res.Status != http.StatusOK {
					t.Fatalf("first use of the nonce: %d %s", res.Status, res.Body)
				}
			},
			send: func(*testing.T) acmeenv.Response { return postJose(kidA, replayBody) }},
		{name: "nonce never issued", status: 400, typ: acme.ProbBadNonce, detail: "unknown",
			send: func(*testing.T) acmeenv.Response {
				return e.PostJWS(keyA, kidA, []byte{}, acmeenv.SignOpts{KID: kidA, Nonce: "bm90LWEtbm9uY2UtZnJvbS13ZWly"})
			}},
		{name: "no nonce", status: 400, typ: acme.ProbBadNonce, detail: `no "nonce"`,
			send: func(t *testing.T) acmeenv.Response {
				h := map[string]any{"alg": "ES256", "kid": kidA, "url": kidA}
				return postJose(kidA, acmeenv.MarshalJSON(t, acmeenv.HandSignedJWS(t, keyA, h, nil)))
			}},

		// Algorithms and keys (RFC 8555 §6.2).
		{name: "alg none", status: 400, typ: acme.ProbBadSignatureAlgorithm, detail: `"none" is not accepted`, check: wantAlgorithms,
			send: hand(newAccountURL, map[string]any{"alg": "none", "jwk": jwkA, "url": newAccountURL}, []byte(`{}`))},
		{name: "alg none unsecured", status: 400, typ: acme.ProbBadSignatureAlgorithm, detail: `"none" is not accepted`, check: wantAlgorithms,
			send: func(t *testing.T) acmeenv.Response {
				ph := acmeenv.MarshalJSON(t, map[string]any{"alg": "none", "jwk": jwkA, "url": newAccountURL, "nonce": e.Nonce()})
				return postJose(newAccountURL, acmeenv.MarshalJSON(t, map[string]string{
					"protected": base64.RawURLEncoding.EncodeToString(ph), "payload": "e30", "signature": ""}))
			}},
		{name: "alg HS256", status: 400, typ: acme.ProbBadSignatureAlgorithm, detail: `"HS256" is not accepted`, check: wantAlgorithms,
			send: hand(newAccountURL, map[string]any{"alg": "HS256", "jwk": jwkA, "url": newAccountURL}, []byte(`{}`))},
		{name: "alg ES512", status: 400, typ: acme.ProbBadSignatureAlgorithm, detail: "ES512", check: wantAlgorithms,
			send: hand(newAccountURL, map[string]any{"alg": "ES512", "jwk": acmeenv.PublicJWK(t, p521.Public()), "url": newAccountURL}, []byte(`{}`))},
		{name: "alg does not fit the key", status: 400, typ: acme.ProbMalformed, detail: "does not fit",
			send: hand(newAccountURL, map[string]any{"alg": "ES384", "jwk": jwkA, "url": newAccountURL}, []byte(`{}`))},
		{name: "RSA 1024 account key", status: 400, typ: acme.ProbBadPublicKey, detail: "1024 bits",
			send: func(*testing.T) acmeenv.Response {
				return e.PostJWS(rsa1024, newAccountURL, []byte(`{}`), acmeenv.SignOpts{})
			}},
		{name: "P-521 account key", status: 400, typ: acme.ProbBadPublicKey, detail: "P-521",
			send: hand(newAccountURL, map[string]any{"alg": "ES256", "jwk": acmeenv.PublicJWK(t, p521.Public()), "url": newAccountURL}, []byte(`{}`))},
		{name: "private key as jwk", status: 400, typ: acme.ProbBadPublicKey, detail: "not a valid public key",
			send: hand(newAccountURL, map[string]any{"alg": "ES256", "jwk": acmeenv.PublicJWK(t, keyA), "url": newAccountURL}, []byte(`{}`))},
		{name: "garbage jwk", status: 400, typ: acme.ProbBadPublicKey, detail: "cannot be parsed",
			send: hand(newAccountURL, map[string]any{"alg": "ES256", "jwk": map[string]any{"kty": "EC", "crv": "P-256", "x": "AA", "y": "AA"}, "url": newAccountURL}, []byte(`{}`))},

		// jwk / kid (RFC 8555 §6.2, §6.3).
		{name: "kid of another account", status: 400, typ: acme.ProbMalformed, detail: "signature does not verify",
			send: func(*testing.T) acmeenv.Response { return e.PostJWS(keyA, kidB, []byte{}, acmeenv.SignOpts{KID: kidB}) }},
		{name: "kid of a deactivated account", status: http.StatusUnauthorized, typ: acme.ProbUnauthorized, detail: "deactivated",
			send: newOrderSignedBy(e, keyD, kidD, newOrderURL)},
		{name: "kid of an unknown account", status: 400, typ: acme.ProbAccountDoesNotExist, detail: "does not exist",
			send: newOrderSignedBy(e, keyA, e.Base+"/acme/account/999999", newOrderURL)},
		{name: "kid of another server", status: 400, typ: acme.ProbAccountDoesNotExist, detail: "not an account URL",
			send: newOrderSignedBy(e, keyA, "https://elsewhere.test/acme/account/1", newOrderURL)},
		{name: "both jwk and kid", status: 400, typ: acme.ProbMalformed, detail: "exactly one",
			send: hand(newOrderURL, map[string]any{"alg": "ES256", "jwk": jwkA, "kid": kidA, "url": newOrderURL}, []byte(`{}`))},
		{name: "neither jwk nor kid", status: 400, typ: acme.ProbMalformed, detail: "exactly one",
			send: hand(newOrderURL, map[string]any{"alg": "ES256", "url": newOrderURL}, []byte(`{}`))},
		{name: "new-account signed with a kid", status: 400, typ: acme.ProbMalformed, detail: "embedded JWK",
			send: func(*testing.T) acmeenv.Response { return asA(newAccountURL, []byte(`{}`)) }},
		{name: "new-order signed with a jwk", status: 400, typ: acme.ProbMalformed, detail: "key ID",
			send: func(t *testing.T) acmeenv.Response {
				return e.PostJWS(keyA, newOrderURL, acmeenv.MarshalJSON(t, map[string]any{"identifiers": []acme.Identifier{{Type: "dns", Value: "jwk.weir.test"}}}), acmeenv.SignOpts{})
			}},

		// Accounts (RFC 8555 §7.3).
		{name: "onlyReturnExisting for an unknown key", status: 400, typ: acme.ProbAccountDoesNotExist, detail: "no account",
			send: newAccount(`{"onlyReturnExisting":true}`)},
		{name: "contact tel:", status: 400, typ: acme.ProbUnsupportedContact, detail: "tel:123",
			send: newAccount(`{"contact":["tel:123"]}`)},
		{name: "contact mailto: not an address", status: 400, typ: acme.ProbInvalidContact, detail: "single plain",
			send: newAccount(`{"contact":["mailto:not an address"]}`)},
		{name: "contact with two addresses", status: 400, typ: acme.ProbInvalidContact, detail: "single plain",
			send: newAccount(`{"contact":["mailto:a@weir.test,b@weir.test"]}`)},
		{name: "contact with a bad domain", status: 400, typ: acme.ProbInvalidContact, detail: "invalid domain",
			send: newAccount(`{"contact":["mailto:a@bad_name.test"]}`)},
		{name: "contact not a string", status: 400, typ: acme.ProbMalformed, detail: "payload is not valid JSON",
			send: newAccount(`{"contact":[1]}`)},
		{name: "update of another account", status: 403, typ: acme.ProbUnauthorized, detail: "not by account",
			send: func(*testing.T) acmeenv.Response { return asB(kidA, []byte(`{"contact":[]}`)) }},
		{name: "account status revoked", status: 400, typ: acme.ProbMalformed, detail: "can only be changed",
			send: func(*testing.T) acmeenv.Response { return asA(kidA, []byte(`{"status":"revoked"}`)) }},

		// External Account Binding (RFC 8555 §7.3.4).
		{name: "EAB not a JWS object", status: 400, typ: acme.ProbMalformed, detail: "not a JWS object",
			send: newAccountEAB(func(*testing.T, map[string]any, json.RawMessage) json.RawMessage { return json.RawMessage(`"x"`) })},
		{name: "EAB in the general serialization", status: 400, typ: acme.ProbMalformed, detail: "flattened",
			send: newAccountEAB(func(t *testing.T, hdr map[string]any, jwk json.RawMessage) json.RawMessage {
				var flat map[string]any
				_ = json.Unmarshal(eabJWS(t, hdr, jwk, eabKey.HMACKey), &flat)
				return acmeenv.MarshalJSON(t, map[string]any{"payload": flat["payload"], "signatures": []any{
					map[string]any{"protected": flat["protected"], "signature": flat["signature"]}}})
			})},
		{name: "EAB with alg ES256", status: 400, typ: acme.ProbMalformed, detail: `"ES256" is not accepted`,
			send: newAccountEAB(eabWith(func(h map[string]any) { h["alg"] = "ES256" }))},
		{name: "EAB with a nonce", status: 400, typ: acme.ProbMalformed, detail: `must not have a "nonce"`,
			send: newAccountEAB(eabWith(func(h map[string]any) { h["nonce"] = e.Nonce() }))},
		{name: "EAB for another URL", status: 400, typ: acme.ProbMalformed, detail: "must be the new-account URL",
			send: newAccountEAB(eabWith(func(h map[string]any) { h["url"] = newOrderURL }))},
		{name: "EAB without kid", status: 400, typ: acme.ProbMalformed, detail: `needs "kid"`,
			send: newAccountEAB(eabWith(func(h map[string]any) { delete(h, "kid") }))},
		{name: "EAB over another key", status: 400, typ: acme.ProbMalformed, detail: "not the key that signs",
			send: newAccountEAB(func(t *testing.T, hdr map[string]any, _ json.RawMessage) json.RawMessage {
				return eabJWS(t, hdr, jwkA, eabKey.HMACKey)
			})},
		{name: "EAB with a wrong MAC", status: 403, typ: acme.ProbUnauthorized, detail: "MAC does not verify",
			send: newAccountEAB(func(t *testing.T, hdr map[string]any, jwk json.RawMessage) json.RawMessage {
				return eabJWS(t, hdr, jwk, []byte("not the HMAC key, but 32 bytes.."))
			})},
		{name: "EAB of an unknown key", status: 403, typ: acme.ProbUnauthorized, detail: "unknown",
			send: newAccountEAB(eabWith(func(h map[string]any) { h["kid"] = "no-such-key" }))},
		{name: "key-change to the same key", status: 400, typ: acme.ProbMalformed, detail: "current key",
			send: func(t *testing.T) acmeenv.Response {
				inner := acmeenv.HandSignedJWS(t, keyA, map[string]any{"alg": "ES256", "jwk": jwkA, "url": keyChangeURL},
					acmeenv.MarshalJSON(t, map[string]any{"account": kidA, "oldKey": jwkA}))
				return asA(keyChangeURL, acmeenv.MarshalJSON(t, inner))
			}},
		{name: "key-change inner JWS with a nonce", status: 400, typ: acme.ProbMalformed, detail: `must not have a "nonce"`,
			send: func(t *testing.T) acmeenv.Response {
				nk := acmeenv.NewKey(t)
				inner := e.Sign(nk, keyChangeURL, acmeenv.MarshalJSON(t, map[string]any{"account": kidA, "oldKey": jwkA}), acmeenv.SignOpts{})
				return asA(keyChangeURL, inner)
			}},

		// Orders and identifiers (RFC 8555 §7.4, §7.1.3).
		{name: "no identifiers", status: 400, typ: acme.ProbMalformed, detail: "at least one identifier",
			send: newOrder()},
		{name: "invalid DNS name with underscore", status: 400, typ: acme.ProbMalformed, detail: "bad_name.test",
			send: newOrder(acme.Identifier{Type: "dns", Value: "bad_name.test"}), check: wantIdentifier(acme.Identifier{Type: "dns", Value: "bad_name.test"})},
		{name: "invalid DNS name with leading hyphen", status: 400, typ: acme.ProbMalformed, detail: "hyphen",
			send: newOrder(acme.Identifier{Type: "dns", Value: "-x.test"}), check: wantIdentifier(acme.Identifier{Type: "dns", Value: "-x.test"})},
		{name: "invalid DNS name with empty label", status: 400, typ: acme.ProbMalformed, detail: "empty label",
			send: newOrder(acme.Identifier{Type: "dns", Value: "a..b.test"}), check: wantIdentifier(acme.Identifier{Type: "dns", Value: "a..b.test"})},
		{name: "several invalid DNS names", status: 400, typ: acme.ProbMalformed, detail: "some identifiers are invalid",
			send: newOrder(acme.Identifier{Type: "dns", Value: "ok.weir.test"}, acme.Identifier{Type: "dns", Value: "bad_name.test"},
				acme.Identifier{Type: "dns", Value: "-x.test"}, acme.Identifier{Type: "dns", Value: "a..b.test"}),
			check: wantSubproblems(acme.ProbMalformed, acme.Identifier{Type: "dns", Value: "bad_name.test"},
				acme.Identifier{Type: "dns", Value: "-x.test"}, acme.Identifier{Type: "dns", Value: "a..b.test"})},
		{name: "bad wildcard", status: 400, typ: acme.ProbMalformed, detail: "wildcard",
			send: newOrder(acme.Identifier{Type: "dns", Value: "*.*.weir.test"})},
		{name: "invalid IP", status: 400, typ: acme.ProbMalformed, detail: "not an IP address",
			send: newOrder(acme.Identifier{Type: "ip", Value: "fe80::1%eth0"})},
		{name: "unknown identifier type", status: 400, typ: acme.ProbUnsupportedIdentifier, detail: `"email" is not supported`,
			send: newOrder(acme.Identifier{Type: "email", Value: "a@weir.test"}), check: wantIdentifier(acme.Identifier{Type: "email", Value: "a@weir.test"})},
		{name: "denied identifier", status: 400, typ: acme.ProbRejectedIdentifier, detail: `denied domain "denied.test"`,
			send: newOrder(acme.Identifier{Type: "dns", Value: "www.Denied.test"}), check: wantIdentifier(acme.Identifier{Type: "dns", Value: "www.denied.test"})},
		{name: "several denied identifiers", status: 400, typ: acme.ProbRejectedIdentifier, detail: "policy forbids",
			send: newOrder(acme.Identifier{Type: "dns", Value: "a.denied.test"}, acme.Identifier{Type: "dns", Value: "ok.weir.test"},
				acme.Identifier{Type: "dns", Value: "*.denied.test"}, acme.Identifier{Type: "ip", Value: "10.0.0.1"}),
			check: wantSubproblems(acme.ProbRejectedIdentifier, acme.Identifier{Type: "dns", Value: "a.denied.test"},
				acme.Identifier{Type: "dns", Value: "*.denied.test"}, acme.Identifier{Type: "ip", Value: "10.0.0.1"})},
		{name: "IP outside allowed ranges", status: 400, typ: acme.ProbRejectedIdentifier, detail: "allowed-ip-ranges",
			send: newOrder(acme.Identifier{Type: "ip", Value: "::ffff:10.0.0.1"}), check: wantIdentifier(acme.Identifier{Type: "ip", Value: "10.0.0.1"})},
		{name: "too many identifiers", status: 400, typ: acme.ProbRejectedIdentifier, detail: "at most",
			send: func(t *testing.T) acmeenv.Response {
				ids := make([]acme.Identifier, e.cfg.ACME.MaxIdentifiers+1)
				for i := range ids {
					ids[i] = acme.Identifier{Type: "dns", Value: fmt.Sprintf("n%d.weir.test", i)}
				}
				return newOrder(ids...)(t)
			}},
		{name: "notAfter beyond the maximum lifetime", status: 400, typ: acme.ProbMalformed, detail: "exceeds the maximum certificate lifetime",
			send: func(t *testing.T) acmeenv.Response {
				na := time.Now().Add(e.cfg.CA.CertificateLifetime + 48*time.Hour).UTC().Format(time.RFC3339)
				return asA(newOrderURL, acmeenv.MarshalJSON(t, map[string]any{"identifiers": []acme.Identifier{{Type: "dns", Value: "long.weir.test"}}, "notAfter": na}))
			}},
		{name: "notAfter not RFC 3339", status: 400, typ: acme.ProbMalformed, detail: "RFC 3339",
			send: func(t *testing.T) acmeenv.Response {
				return asA(newOrderURL, acmeenv.MarshalJSON(t, map[string]any{"identifiers": []acme.Identifier{{Type: "dns", Value: "long.weir.test"}}, "notAfter": "tomorrow"}))
			}},
		{name: "POST-as-GET of another account's order", status: 403, typ: acme.ProbUnauthorized, detail: "another account",
			send: func(*testing.T) acmeenv.Response { return asB(pending.URI, []byte{}) }},
		{name: "POST-as-GET of another account's authz", status: 403, typ: acme.ProbUnauthorized, detail: "another account",
			send: func(*testing.T) acmeenv.Response { return asB(pending.AuthzURLs[0], []byte{}) }},
		{name: "unknown order", status: 404, typ: acme.ProbMalformed, detail: "does not exist",
			send: func(*testing.T) acmeenv.Response { return asA(e.Base+"/acme/order/nope", []byte{}) }},

		// Challenges (RFC 8555 §7.5.1).
		{name: "wildcard http-01 challenge does not exist", status: 404, typ: acme.ProbMalformed, detail: "does not exist",
			send: func(*testing.T) acmeenv.Response { return asA(dnsChallURL+"-http-01", []byte(`{}`)) }},
		{name: "another account's challenge", status: 403, typ: acme.ProbUnauthorized, detail: "another account",
			send: func(*testing.T) acmeenv.Response { return asB(dnsChallURL, []byte(`{}`)) }},
		{name: "authz status other than deactivated", status: 400, typ: acme.ProbMalformed, detail: "can only be changed",
			send: func(*testing.T) acmeenv.Response { return asA(pending.AuthzURLs[0], []byte(`{"status":"valid"}`)) }},

		// Finalize (RFC 8555 §7.4).
		{name: "finalize before ready", status: 403, typ: acme.ProbOrderNotReady, detail: "not ready",
			send: func(t *testing.T) acmeenv.Response {
				return asA(pending.FinalizeURL, acmeenv.MarshalJSON(t, map[string]string{"csr": base64.RawURLEncoding.EncodeToString(acmeenv.CSRFor(t, acmeenv.NewKey(t), "pending.weir.test"))}))
			}},
		{name: "CSR names differ from the order", status: 400, typ: acme.ProbBadCSR, detail: "not in the order: extra.weir.test",
			send: func(t *testing.T) acmeenv.Response {
				return finalize(acmeenv.CSRFor(t, acmeenv.NewKey(t), "ready.weir.test", "extra.weir.test"))(t)
			}},
		{name: "CSR missing an order name", status: 400, typ: acme.ProbBadCSR, detail: "missing ready.weir.test",
			send: func(t *testing.T) acmeenv.Response {
				return finalize(acmeenv.CSRFor(t, acmeenv.NewKey(t), "other.weir.test"))(t)
			}},
		{name: "CSR with the account key", status: 400, typ: acme.ProbBadCSR, detail: "account key",
			send: func(t *testing.T) acmeenv.Response { return finalize(acmeenv.CSRFor(t, keyA, "ready.weir.test"))(t) }},
		{name: "CSR not DER", status: 400, typ: acme.ProbBadCSR, detail: "cannot be parsed",
			send: func(t *testing.T) acmeenv.Response { return finalize([]byte("not a CSR"))(t) }},
		{name: "CSR not base64url", status: 400, typ: acme.ProbBadCSR, detail: "base64url",
			send: func(*testing.T) acmeenv.Response { return asA(ready.FinalizeURL, []byte(`{"csr":"a+b/c="}`)) }},
		{name: "CSR with a bad signature", status: 400, typ: acme.ProbBadCSR, detail: "signature",
			send: func(t *testing.T) acmeenv.Response {
				csr := acmeenv.CSRFor(t, acmeenv.NewKey(t), "ready.weir.test")
				csr[len(csr)-1] ^= 1
				return finalize(csr)(t)
			}},
		{name: "finalize another account's order", status: 403, typ: acme.ProbUnauthorized, detail: "another account",
			send: func(t *testing.T) acmeenv.Response {
				return asB(ready.FinalizeURL, acmeenv.MarshalJSON(t, map[string]string{"csr": base64.RawURLEncoding.EncodeToString(acmeenv.CSRFor(t, acmeenv.NewKey(t), "ready.weir.test"))}))
			}},

		// Revocation (RFC 8555 §7.6).
		{name: "revoke with reason 7", status: 400, typ: acme.ProbBadRevocationReason, detail: "reason 7",
			send: revoke(7)},
		{name: "revoke with reason 8 (removeFromCRL)", status: 400, typ: acme.ProbBadRevocationReason, detail: "reason 8",
			send: revoke(8)},
		{name: "revoke with reason 11", status: 400, typ: acme.ProbBadRevocationReason, detail: "reason 11",
			send: revoke(11)},
		{name: "revoke a certificate not issued here", status: 404, typ: acme.ProbMalformed, detail: "not issued by this CA",
			send: func(t *testing.T) acmeenv.Response {
				return asA(revokeURL, acmeenv.MarshalJSON(t, map[string]any{"certificate": base64.RawURLEncoding.EncodeToString(foreignDER)}))
			}},
		{name: "revoke by a stranger", status: 403, typ: acme.ProbUnauthorized, detail: "did not order",
			send: func(t *testing.T) acmeenv.Response {
				return asB(revokeURL, acmeenv.MarshalJSON(t, map[string]any{"certificate": revokeDER}))
			}},
		{name: "revoke with an unrelated jwk", status: 403, typ: acme.ProbUnauthorized, detail: "certificate's key",
			send: func(t *testing.T) acmeenv.Response {
				return e.PostJWS(acmeenv.NewKey(t), revokeURL, acmeenv.MarshalJSON(t, map[string]any{"certificate": revokeDER}), acmeenv.SignOpts{})
			}},
	}

	runRefused(t, e, cases, func(t *testing.T, n string) acmeenv.Response {
		return e.PostJWS(keyA, kidA, []byte{}, acmeenv.SignOpts{KID: kidA, Nonce: n})
	})

	checkServesAfterBadInput(t, e, clientA, ready)
}
