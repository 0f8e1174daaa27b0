// SPDX-License-Identifier: Apache-2.0

package system

import (
	"crypto/ecdsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/server"
)

// registered is an account registered through x/crypto/acme.
type registered struct {
	key    *ecdsa.PrivateKey
	client *xacme.Client
	kid    string
}

func (e *env) register(t *testing.T) registered {
	t.Helper()
	r := registered{key: acmeenv.NewKey(t)}
	r.client = e.Client(r.key)
	a, err := r.client.Register(t.Context(), &xacme.Account{}, xacme.AcceptTOS)
	if err != nil {
		t.Fatalf("register: %v", err)
	}
	r.kid = a.URI
	return r
}

// post signs payload with the account's kid and posts it to url.
func (r registered) post(e *env, url string, payload []byte) acmeenv.Response {
	return e.PostJWS(r.key, url, payload, acmeenv.SignOpts{KID: r.kid})
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
func (r registered) spender(e *env) func(*testing.T, string) acmeenv.Response {
	return func(_ *testing.T, n string) acmeenv.Response {
		return e.PostJWS(r.key, r.kid, []byte{}, acmeenv.SignOpts{KID: r.kid, Nonce: n})
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
		newAccountURL = e.Base + "/acme/new-account"
		newOrderURL   = e.Base + "/acme/new-order"
		revokeURL     = e.Base + "/acme/revoke-cert"
		keyChangeURL  = e.Base + "/acme/key-change"
	)

	// D's objects, made while it was valid: a certificate and a pending
	// order; then D deactivates itself.
	certKeyD := acmeenv.NewKey(t)
	chainD, certURLD := e.Issue(ctx, d.client, certKeyD, "http-01", xacme.DomainIDs("d.weir.test")...)
	orderD, authzD := d.pendingOrder(t, "pending-d.weir.test")
	if err := d.client.DeactivateReg(ctx); err != nil {
		t.Fatal(err)
	}
	// R is revoked by the server (RFC 8555 §7.1.2).
	acctR, err := e.srv.Store().GetAccount(ctx, acme.AccountID(e.accountID(r.kid)))
	if err != nil {
		t.Fatal(err)
	}
	acctR.Status = acme.StatusRevoked
	if err := e.srv.Store().UpdateAccount(ctx, acctR, acme.StatusValid); err != nil {
		t.Fatal(err)
	}
	if _, err := e.srv.Service().AccountFresh(ctx, acctR.ID); err != nil {
		t.Fatal(err)
	}

	jwkD := acmeenv.PublicJWK(t, d.key.Public())
	innerBy := func(t *testing.T, acct registered, newKey *ecdsa.PrivateKey) []byte {
		return acmeenv.MarshalJSON(t, acmeenv.HandSignedJWS(t, newKey, map[string]any{"alg": "ES256", "jwk": acmeenv.PublicJWK(t, newKey.Public()), "url": keyChangeURL},
			acmeenv.MarshalJSON(t, map[string]any{"account": acct.kid, "oldKey": acmeenv.PublicJWK(t, acct.key.Public())})))
	}
	refused := func(name string, status acme.Status, send func(*testing.T) acmeenv.Response) badCase {
		return badCase{name: name, status: http.StatusUnauthorized, typ: acme.ProbUnauthorized, detail: "is " + string(status), send: send}
	}
	deact, revoked := acme.StatusDeactivated, acme.StatusRevoked
	post := func(acct registered, url, payload string) func(*testing.T) acmeenv.Response {
		return func(*testing.T) acmeenv.Response { return acct.post(e, url, []byte(payload)) }
	}
	newAccount := func(acct registered, payload string) func(*testing.T) acmeenv.Response {
		return func(*testing.T) acmeenv.Response {
			return e.PostJWS(acct.key, newAccountURL, []byte(payload), acmeenv.SignOpts{})
		}
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
		refused("finalize", deact, post(d, orderD.FinalizeURL, fmt.Sprintf(`{"csr":%q}`, b64(acmeenv.CSRFor(t, acmeenv.NewKey(t), "pending-d.weir.test"))))),
		refused("certificate", deact, post(d, certURLD, "")),
		refused("revocation by the account", deact, post(d, revokeURL, revokeD)),
		refused("key-change", deact, func(t *testing.T) acmeenv.Response { return d.post(e, keyChangeURL, innerBy(t, d, acmeenv.NewKey(t))) }),
		refused("new-account with its key", deact, newAccount(d, `{"termsOfServiceAgreed":true}`)),
		refused("new-account onlyReturnExisting", deact, newAccount(d, `{"onlyReturnExisting":true}`)),
		refused("new-order of a revoked account", revoked, post(r, newOrderURL, `{"identifiers":[{"type":"dns","value":"r.weir.test"}]}`)),
		refused("POST-as-GET of a revoked account", revoked, post(r, r.kid, "")),
		refused("new-account with a revoked account's key", revoked, newAccount(r, `{"termsOfServiceAgreed":true}`)),
		// RFC 8555 §7.3.5: a rollover by a valid account to the key of a
		// deactivated one is a conflict naming that account, not 401.
		{name: "key-change to a deactivated account's key", status: http.StatusConflict, typ: acme.ProbMalformed, detail: "already in use",
			send: func(t *testing.T) acmeenv.Response {
				inner := acmeenv.MarshalJSON(t, acmeenv.HandSignedJWS(t, d.key, map[string]any{"alg": "ES256", "jwk": jwkD, "url": keyChangeURL},
					acmeenv.MarshalJSON(t, map[string]any{"account": a.kid, "oldKey": acmeenv.PublicJWK(t, a.key.Public())})))
				return a.post(e, keyChangeURL, inner)
			}},
	}
	runRefused(t, e, cases, a.spender(e))

	// The exception: the certificate's key authorizes its revocation
	// (RFC 8555 §7.6), whatever became of the account that ordered it.
	if err := e.Client(certKeyD).RevokeCert(ctx, certKeyD, chainD[0], xacme.CRLReasonKeyCompromise); err != nil {
		t.Fatalf("revocation of the deactivated account's certificate by its key: %v", err)
	}
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// TestOrdersCursorMalformed: a cursor of the orders list that weir did not
// give out is 400 malformed, changes nothing and is logged below ERROR; a
// cursor it gave out still pages.
func TestOrdersCursorMalformed(t *testing.T) {
	logs := &metricsLogBuf{}
	e := startEnvLog(t, func(c *server.Config) { c.Log.Level, c.Log.Format = "info", "json" }, logs)
	a := e.register(t)
	a.pendingOrder(t, "c1.weir.test")
	a.pendingOrder(t, "c2.weir.test")
	ordersURL := a.kid + "/orders"
	var cases []badCase
	for _, c := range []struct{ name, query, detail string }{
		{"not a number", "cursor=abc", "not one this server gave out"},
		{"base64", "cursor=AQID", "not one this server gave out"},
		{"negative", "cursor=-1", "not one this server gave out"},
		{"with a sign", "cursor=%2B1", "not one this server gave out"},
		{"leading zero", "cursor=01", "not one this server gave out"},
		{"fraction", "cursor=1.5", "not one this server gave out"},
		{"overflow", "cursor=9223372036854775808", "not one this server gave out"},
		{"huge", "cursor=" + strings.Repeat("9", 20_000), "not one this server gave out"},
		{"bad escape", "cursor=%zz", "query is malformed"},
		{"two cursors", "cursor=1&cursor=2", `more than one "cursor"`},
	} {
		cases = append(cases, badCase{name: c.name, status: http.StatusBadRequest, typ: acme.ProbMalformed, detail: c.detail,
			send: func(*testing.T) acmeenv.Response { return a.post(e, ordersURL+"?"+c.query, []byte{}) }})
	}
	runRefused(t, e, cases, a.spender(e))

	// Paging still works with a cursor weir gave out.
	for _, q := range []string{"", "?cursor=0"} {
		res := a.post(e, ordersURL+q, []byte{})
		var v struct{ Orders []string }
		if err := json.Unmarshal(res.Body, &v); err != nil || res.Status != http.StatusOK || len(v.Orders) != 2 {
			t.Errorf("orders list %q: %d %s; want 200 with both orders", q, res.Status, res.Body)
		}
	}

	// Each refusal is one request line below ERROR, and nothing is
	// logged at ERROR. Lines are written after the responses: wait for
	// them (bounded).
	var refusals []map[string]any
	for deadline := time.Now().Add(5 * time.Second); ; {
		refusals = refusals[:0]
		for _, l := range logs.requestLines(t) {
			if l["endpoint"] == "orders" && l["status"] == float64(http.StatusBadRequest) {
				refusals = append(refusals, l)
			}
		}
		if len(refusals) >= len(cases) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(refusals) != len(cases) {
		t.Errorf("logged %d refused orders-list requests, want %d", len(refusals), len(cases))
	}
	for _, l := range refusals {
		if l["level"] != "INFO" && l["level"] != "WARN" {
			t.Errorf("refused cursor logged at %v: %v", l["level"], l)
		}
	}
	logs.mu.Lock()
	all := logs.b.String()
	logs.mu.Unlock()
	if strings.Contains(all, `"level":"ERROR"`) {
		t.Errorf("the log has an ERROR line:\n%s", all)
	}
}

// TestJWSMemberNames: JSON member names in a request are case-sensitive
// and unique (RFC 7515 §4, §5.3): in the flattened JWS, its protected
// header, the payload, the inner JWS of a key change and an External
// Account Binding, a member that matches a known one only
// case-insensitively, or a member twice at any depth, is 400 malformed
// and changes nothing. Unknown members stay allowed.
func TestJWSMemberNames(t *testing.T) {
	e := startEnv(t, nil)
	ctx := t.Context()
	var (
		newAccountURL = e.Base + "/acme/new-account"
		newOrderURL   = e.Base + "/acme/new-order"
		keyChangeURL  = e.Base + "/acme/key-change"
	)
	// a signs; x and y are the accounts whose state the old reading let
	// a payload change (a deactivation, a key change).
	a, x, y := e.register(t), e.register(t), e.register(t)
	_, authz := a.pendingOrder(t, "members.weir.test")
	eabKey, err := e.srv.Service().CreateEABKey(ctx, "members", "")
	if err != nil {
		t.Fatal(err)
	}
	jwkA, jwkY := acmeenv.PublicJWK(t, a.key.Public()), acmeenv.PublicJWK(t, y.key.Public())

	// hand posts to url a JWS signed by a's key with the header text
	// that hdr makes from a fresh nonce.
	hand := func(url string, hdr func(nonce string) string, payload string) func(*testing.T) acmeenv.Response {
		return func(t *testing.T) acmeenv.Response {
			return e.Post(url, "application/jose+json", acmeenv.MarshalJSON(t, acmeenv.HandSignedRaw(t, a.key, []byte(hdr(e.Nonce())), []byte(payload))))
		}
	}
	kidHeader := func(extra string) func(string) string {
		return func(n string) string {
			return fmt.Sprintf(`{"alg":"ES256","kid":%q,"nonce":%q,%s}`, a.kid, n, extra)
		}
	}
	// flat posts a JWS of a's whose flattened members are spelled by
	// members from the valid protected, payload and signature texts.
	flat := func(payload string, members func(p, pl, sig string) string) func(*testing.T) acmeenv.Response {
		return func(t *testing.T) acmeenv.Response {
			var f map[string]string
			_ = json.Unmarshal(e.Sign(a.key, newOrderURL, []byte(payload), acmeenv.SignOpts{KID: a.kid}), &f)
			return e.Post(newOrderURL, "application/jose+json", []byte(members(f["protected"], f["payload"], f["signature"])))
		}
	}
	post := func(acct registered, url, payload string) func(*testing.T) acmeenv.Response {
		return func(*testing.T) acmeenv.Response { return acct.post(e, url, []byte(payload)) }
	}
	// keyChange posts y's key change with the inner JWS signed by a new
	// key over header and payload texts.
	keyChange := func(hdr func(jwk string) string, payload string) func(*testing.T) acmeenv.Response {
		return func(t *testing.T) acmeenv.Response {
			nk := acmeenv.NewKey(t)
			inner := acmeenv.HandSignedRaw(t, nk, []byte(hdr(string(acmeenv.PublicJWK(t, nk.Public())))), []byte(payload))
			return y.post(e, keyChangeURL, acmeenv.MarshalJSON(t, inner))
		}
	}
	// newAccountEAB posts a new-account of a fresh key whose binding has
	// the header text hdr makes from the key's JWK.
	newAccountEAB := func(hdr string) func(*testing.T) acmeenv.Response {
		return func(t *testing.T) acmeenv.Response {
			k := acmeenv.NewKey(t)
			eab := eabJWSRaw(t, []byte(hdr), acmeenv.PublicJWK(t, k.Public()), eabKey.HMACKey)
			return e.PostJWS(k, newAccountURL, acmeenv.MarshalJSON(t, map[string]any{"termsOfServiceAgreed": true, "externalAccountBinding": eab}), acmeenv.SignOpts{})
		}
	}
	ident := `{"type":"dns","value":"m.weir.test"}`
	okPayload := fmt.Sprintf(`{"account":%q,"oldKey":%s}`, y.kid, jwkY)
	caseOnly, twice := "member names are case-sensitive", "appears more than once"
	cases := []badCase{
		// The protected header.
		{name: "header members only in upper case", detail: `"ALG" is not "alg": ` + caseOnly,
			send: func(t *testing.T) acmeenv.Response {
				k := acmeenv.NewKey(t)
				hdr := fmt.Sprintf(`{"ALG":"ES256","JWK":%s,"URL":%q,"NONCE":%q}`, acmeenv.PublicJWK(t, k.Public()), newAccountURL, e.Nonce())
				return e.Post(newAccountURL, "application/jose+json", acmeenv.MarshalJSON(t, acmeenv.HandSignedRaw(t, k, []byte(hdr), []byte(`{"termsOfServiceAgreed":true}`))))
			}},
		{name: "URL before url", detail: `"URL" is not "url"`,
			send: hand(newOrderURL, kidHeader(fmt.Sprintf(`"URL":"https://elsewhere.test/","url":%q`, newOrderURL)), `{"identifiers":[`+ident+`]}`)},
		{name: "Nonce beside nonce", detail: `"Nonce" is not "nonce"`,
			send: hand(newOrderURL, kidHeader(fmt.Sprintf(`"Nonce":"x","url":%q`, newOrderURL)), `{"identifiers":[`+ident+`]}`)},
		{name: "url twice", detail: `"url" ` + twice,
			send: hand(newOrderURL, kidHeader(fmt.Sprintf(`"url":"https://elsewhere.test/","url":%q`, newOrderURL)), `{"identifiers":[`+ident+`]}`)},
		{name: "url twice, once escaped", detail: `"url" ` + twice,
			send: hand(newOrderURL, kidHeader(fmt.Sprintf(`"url":%q,"\u0075rl":%[1]q`, newOrderURL)), `{"identifiers":[`+ident+`]}`)},
		{name: "a member twice in the jwk", detail: `"x" of jwk ` + twice,
			send: hand(newAccountURL, func(n string) string {
				var k map[string]string
				_ = json.Unmarshal(jwkA, &k)
				return fmt.Sprintf(`{"alg":"ES256","jwk":{"kty":"EC","crv":"P-256","x":%q,"y":%q,"x":%[1]q},"nonce":%q,"url":%q}`, k["x"], k["y"], n, newAccountURL)
			}, `{}`)},
		// The flattened JWS.
		{name: "flattened members in upper case", detail: `"Protected" is not "protected"`,
			send: flat(`{"identifiers":[`+ident+`]}`, func(p, pl, sig string) string {
				return fmt.Sprintf(`{"Protected":%q,"Payload":%q,"Signature":%q}`, p, pl, sig)
			})},
		{name: "payload twice in the flattened JWS", detail: `"payload" ` + twice,
			send: flat(`{"identifiers":[`+ident+`]}`, func(p, pl, sig string) string {
				return fmt.Sprintf(`{"protected":%q,"payload":"e30","signature":%q,"payload":%q}`, p, sig, pl)
			})},
		// The payload.
		{name: "identifiers twice", detail: `"identifiers" ` + twice,
			send: post(a, newOrderURL, `{"identifiers":[`+ident+`],"identifiers":[{"type":"dns","value":"n.weir.test"}]}`)},
		{name: "value twice in an identifier", detail: `"value" of identifiers[0] ` + twice,
			send: post(a, newOrderURL, `{"identifiers":[{"type":"dns","value":"m.weir.test","value":"n.weir.test"}]}`)},
		{name: "Identifiers", detail: `"Identifiers" is not "identifiers"`,
			send: post(a, newOrderURL, `{"Identifiers":[`+ident+`]}`)},
		{name: "Type and Value", detail: `"Type" of identifiers[0] is not "type"`,
			send: post(a, newOrderURL, `{"identifiers":[{"Type":"dns","Value":"m.weir.test"}]}`)},
		{name: "Status of an account", detail: `"Status" is not "status"`, send: post(x, x.kid, `{"Status":"deactivated"}`)},
		{name: "a member twice in a challenge response", detail: `"a" ` + twice, send: post(a, authz.Challenges[0].URI, `{"a":1,"a":2}`)},
		// Key change (RFC 8555 §7.3.5).
		{name: "inner header in upper case", detail: `inner JWS: the JWS protected header: member "ALG" is not "alg"`,
			send: keyChange(func(jwk string) string { return fmt.Sprintf(`{"ALG":"ES256","JWK":%s,"URL":%q}`, jwk, keyChangeURL) }, okPayload)},
		{name: "account twice in the inner payload", detail: `inner JWS: the payload: member "account" ` + twice,
			send: keyChange(func(jwk string) string { return fmt.Sprintf(`{"alg":"ES256","jwk":%s,"url":%q}`, jwk, keyChangeURL) },
				fmt.Sprintf(`{"account":"https://elsewhere.test/","oldKey":%s,"account":%q}`, jwkY, y.kid))},
		// External Account Binding (RFC 8555 §7.3.4).
		{name: "EAB header in upper case", detail: `externalAccountBinding: the protected header: member "ALG" is not "alg"`,
			send: newAccountEAB(fmt.Sprintf(`{"ALG":"HS256","KID":%q,"URL":%q}`, eabKey.ID, newAccountURL))},
		{name: "EAB kid twice", detail: `externalAccountBinding: the protected header: member "kid" ` + twice,
			send: newAccountEAB(fmt.Sprintf(`{"alg":"HS256","kid":"no-such-key","url":%q,"kid":%q}`, newAccountURL, eabKey.ID))},
	}
	for i := range cases {
		cases[i].status, cases[i].typ = http.StatusBadRequest, acme.ProbMalformed
	}
	runRefused(t, e, cases, a.spender(e))

	// Unknown members, in the header and in the payload, stay allowed.
	res := hand(newOrderURL, kidHeader(fmt.Sprintf(`"url":%q,"x-weir-test":{"URL":1}`, newOrderURL)),
		`{"identifiers":[`+ident+`],"x-weir-test":{"Identifiers":[1]}}`)(t)
	if res.Status != http.StatusCreated {
		t.Errorf("new-order with unknown members: %d %s; want 201", res.Status, res.Body)
	}
}
