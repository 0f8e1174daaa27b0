package main

import (
	"crypto/ecdsa"
	"encoding/base64"
	"fmt"
	"net/http"
	"testing"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/acme"
)

// registered is an account registered through x/crypto/acme.
type registered struct {
	key    *ecdsa.PrivateKey
	client *xacme.Client
	kid    string
}

func (e *testEnv) register(t *testing.T) registered {
	t.Helper()
	r := registered{key: newKey(t)}
	r.client = e.client(r.key)
	a, err := r.client.Register(t.Context(), &xacme.Account{}, xacme.AcceptTOS)
	if err != nil {
		t.Fatalf("register: %v", err)
	}
	r.kid = a.URI
	return r
}

// post signs payload with the account's kid and posts it to url.
func (r registered) post(e *testEnv, url string, payload []byte) rawResponse {
	return e.postJWS(r.key, url, payload, signOpts{kid: r.kid})
}

// pendingOrder makes an order of r for name and returns it with its
// authorization.
func (r registered) pendingOrder(t *testing.T, name string) (*xacme.Order, *xacme.Authorization) {
	t.Helper()
	o, err := r.client.AuthorizeOrder(t.Context(), xacme.DomainIDs(name))
	if err != nil {
		t.Fatal(err)
	}
	a, err := r.client.GetAuthorization(t.Context(), o.AuthzURLs[0])
	if err != nil {
		t.Fatal(err)
	}
	return o, a
}

// spender uses a Replay-Nonce in a POST-as-GET of r's account.
func (r registered) spender(e *testEnv) func(*testing.T, string) rawResponse {
	return func(_ *testing.T, n string) rawResponse {
		return e.postJWS(r.key, r.kid, []byte{}, signOpts{kid: r.kid, nonce: n})
	}
}

// TestAccountNotValidUnauthorized: every request authorized by the key of
// a deactivated or revoked account, on every resource, kid-signed or (at
// new-account) jwk-signed, is refused with 401 unauthorized (RFC 8555
// §7.3.6) and changes nothing; revocation by the certificate's own key,
// which the account's key does not authorize, still works.
func TestAccountNotValidUnauthorized(t *testing.T) {
	e := startEnv(t, nil)
	ctx := t.Context()
	a, d, r := e.register(t), e.register(t), e.register(t)
	var (
		newAccountURL = e.base + "/acme/new-account"
		newOrderURL   = e.base + "/acme/new-order"
		revokeURL     = e.base + "/acme/revoke-cert"
		keyChangeURL  = e.base + "/acme/key-change"
	)

	// D's objects, made while it was valid: a certificate and a pending
	// order; then D deactivates itself.
	certKeyD := newKey(t)
	chainD, certURLD := e.issue(ctx, d.client, certKeyD, "http-01", xacme.DomainIDs("d.weir.test")...)
	orderD, authzD := d.pendingOrder(t, "pending-d.weir.test")
	if err := d.client.DeactivateReg(ctx); err != nil {
		t.Fatal(err)
	}
	// R is revoked by the server (RFC 8555 §7.1.2).
	acctR, err := e.srv.store.GetAccount(ctx, e.accountID(r.kid))
	if err != nil {
		t.Fatal(err)
	}
	acctR.Status = acme.StatusRevoked
	if err := e.srv.store.UpdateAccount(ctx, acctR, acme.StatusValid); err != nil {
		t.Fatal(err)
	}
	if _, err := e.srv.svc.AccountFresh(ctx, acctR.ID); err != nil {
		t.Fatal(err)
	}

	jwkD := publicJWK(t, d.key.Public())
	innerBy := func(t *testing.T, acct registered, newKey *ecdsa.PrivateKey) []byte {
		return marshalJSON(t, handSignedJWS(t, newKey, map[string]any{"alg": "ES256", "jwk": publicJWK(t, newKey.Public()), "url": keyChangeURL},
			marshalJSON(t, map[string]any{"account": acct.kid, "oldKey": publicJWK(t, acct.key.Public())})))
	}
	refused := func(name string, status acme.Status, send func(*testing.T) rawResponse) badCase {
		return badCase{name: name, status: http.StatusUnauthorized, typ: acme.ProbUnauthorized, detail: "is " + string(status), send: send}
	}
	deact, revoked := acme.StatusDeactivated, acme.StatusRevoked
	post := func(acct registered, url, payload string) func(*testing.T) rawResponse {
		return func(*testing.T) rawResponse { return acct.post(e, url, []byte(payload)) }
	}
	newAccount := func(acct registered, payload string) func(*testing.T) rawResponse {
		return func(*testing.T) rawResponse { return e.postJWS(acct.key, newAccountURL, []byte(payload), signOpts{}) }
	}
	revokeD := fmt.Sprintf(`{"certificate":%q}`, b64(chainD[0]))
	cases := []badCase{
		refused("new-order", deact, post(d, newOrderURL, `{"identifiers":[{"type":"dns","value":"late.weir.test"}]}`)),
		refused("POST-as-GET of the account", deact, post(d, d.kid, "")),
		refused("account update", deact, post(d, d.kid, `{"contact":["mailto:d@weir.test"]}`)),
		refused("deactivation again", deact, post(d, d.kid, `{"status":"deactivated"}`)),
		refused("orders list", deact, post(d, d.kid+"/orders", "")),
		refused("POST-as-GET of an order", deact, post(d, orderD.URI, "")),
		refused("POST-as-GET of an authorization", deact, post(d, authzD.URI, "")),
		refused("authorization deactivation", deact, post(d, authzD.URI, `{"status":"deactivated"}`)),
		refused("challenge response", deact, post(d, authzD.Challenges[0].URI, `{}`)),
		refused("finalize", deact, post(d, orderD.FinalizeURL, fmt.Sprintf(`{"csr":%q}`, b64(csrFor(t, newKey(t), "pending-d.weir.test"))))),
		refused("certificate", deact, post(d, certURLD, "")),
		refused("revocation by the account", deact, post(d, revokeURL, revokeD)),
		refused("key-change", deact, func(t *testing.T) rawResponse { return d.post(e, keyChangeURL, innerBy(t, d, newKey(t))) }),
		refused("new-account with its key", deact, newAccount(d, `{"termsOfServiceAgreed":true}`)),
		refused("new-account onlyReturnExisting", deact, newAccount(d, `{"onlyReturnExisting":true}`)),
		refused("new-order of a revoked account", revoked, post(r, newOrderURL, `{"identifiers":[{"type":"dns","value":"r.weir.test"}]}`)),
		refused("POST-as-GET of a revoked account", revoked, post(r, r.kid, "")),
		refused("new-account with a revoked account's key", revoked, newAccount(r, `{"termsOfServiceAgreed":true}`)),
		// RFC 8555 §7.3.5: a rollover by a valid account to the key of a
		// deactivated one is a conflict naming that account, not 401.
		{name: "key-change to a deactivated account's key", status: http.StatusConflict, typ: acme.ProbMalformed, detail: "already in use",
			send: func(t *testing.T) rawResponse {
				inner := marshalJSON(t, handSignedJWS(t, d.key, map[string]any{"alg": "ES256", "jwk": jwkD, "url": keyChangeURL},
					marshalJSON(t, map[string]any{"account": a.kid, "oldKey": publicJWK(t, a.key.Public())})))
				return a.post(e, keyChangeURL, inner)
			}},
	}
	runRefused(t, e, cases, a.spender(e))

	// The exception: the certificate's key authorizes its revocation
	// (RFC 8555 §7.6), whatever became of the account that ordered it.
	if err := e.client(certKeyD).RevokeCert(ctx, certKeyD, chainD[0], xacme.CRLReasonKeyCompromise); err != nil {
		t.Fatalf("revocation of the deactivated account's certificate by its key: %v", err)
	}
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
