// SPDX-License-Identifier: Apache-2.0

package jws_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/jws"
)

const (
	fuzzAccountURL = "https://ca.test/acme/account/"
	fuzzURL        = "https://ca.test/acme/new-account"
	fuzzKeyChange  = "https://ca.test/acme/key-change"
)

func noAccount(context.Context, acme.AccountID) (*acme.Account, error) { return nil, acme.ErrNotFound }

func newVerifier(tb testing.TB) (*jws.Verifier, *acme.MemoryNonces) {
	tb.Helper()
	nonces, err := acme.NewMemoryNonces(time.Hour, 1<<16, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return jws.NewVerifier(nonces, noAccount, fuzzAccountURL), nonces
}

// signFlat makes a flattened JWS over payload with extra protected headers;
// embed puts the public key in "jwk".
func signFlat(tb testing.TB, key crypto.Signer, alg jose.SignatureAlgorithm, payload []byte, embed bool, hdr map[string]any) []byte {
	tb.Helper()
	opts := &jose.SignerOptions{EmbedJWK: embed, ExtraHeaders: map[jose.HeaderKey]any{}}
	for k, v := range hdr {
		opts.ExtraHeaders[jose.HeaderKey(k)] = v
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		tb.Fatal(err)
	}
	obj, err := s.Sign(payload)
	if err != nil {
		tb.Fatal(err)
	}
	return []byte(obj.FullSerialize())
}

// rawJWS assembles a flattened JWS from a protected header and a signature
// that need not be valid.
func rawJWS(protected, payload []byte, sig string) []byte {
	b, _ := json.Marshal(map[string]string{
		"protected": base64.RawURLEncoding.EncodeToString(protected),
		"payload":   base64.RawURLEncoding.EncodeToString(payload),
		"signature": sig,
	})
	return b
}

// checkProblem fails unless err is a client-facing ACME problem.
func checkProblem(t *testing.T, err error) {
	t.Helper()
	p, ok := err.(*acme.Problem)
	if !ok {
		t.Fatalf("error %T %v is not an *acme.Problem", err, err)
	}
	if !strings.HasPrefix(string(p.Type), "urn:ietf:params:acme:error:") || p.Type == "urn:ietf:params:acme:error:" {
		t.Fatalf("problem type %q is not an ACME error URN", p.Type)
	}
	if p.Type == acme.ProbServerInternal {
		t.Fatalf("client input caused serverInternal: %v", p)
	}
	if p.Status < 400 || p.Status > 499 || p.Detail == "" {
		t.Fatalf("problem %+v: want a 4xx status and a detail", p)
	}
	if p.Type == acme.ProbBadSignatureAlgorithm && len(p.Algorithms) == 0 {
		t.Fatal("badSignatureAlgorithm without the algorithms list")
	}
}

// embeddedKeyPayload independently verifies a JWS signed with its
// embedded "jwk" and returns the key and payload.
func embeddedKeyPayload(t *testing.T, body []byte) (*jose.JSONWebKey, []byte) {
	t.Helper()
	obj, err := jose.ParseSignedJSON(string(body), []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.ES384, jose.EdDSA})
	if err != nil {
		t.Fatalf("accepted a JWS go-jose cannot parse: %v", err)
	}
	if len(obj.Signatures) != 1 || obj.Signatures[0].Protected.JSONWebKey == nil {
		t.Fatal("accepted a JWS without exactly one signature and an embedded jwk")
	}
	k := obj.Signatures[0].Protected.JSONWebKey
	payload, err := obj.Verify(k)
	if err != nil {
		t.Fatalf("accepted a JWS whose signature does not verify: %v", err)
	}
	return k, payload
}

func thumbprint(t *testing.T, k *jose.JSONWebKey) acme.Thumbprint {
	t.Helper()
	tp, err := k.Thumbprint(crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	return acme.Thumbprint(base64.RawURLEncoding.EncodeToString(tp))
}

// verifySeeds returns request bodies for the seed corpus; the first
// carries a real nonce of nonces and is valid.
func verifySeeds(tb testing.TB, nonces acme.NonceStore) [][]byte {
	tb.Helper()
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ec384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	nonce := func() string {
		n, err := nonces.Nonce(context.Background())
		if err != nil {
			tb.Fatal(err)
		}
		return n
	}
	hdr := func(extra ...any) map[string]any {
		m := map[string]any{"nonce": nonce(), "url": fuzzURL}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i].(string)] = extra[i+1]
		}
		return m
	}
	payload := []byte(`{"termsOfServiceAgreed":true,"contact":["mailto:a@example.com"]}`)
	jwk, _ := json.Marshal(jose.JSONWebKey{Key: ec.Public()})
	valid := signFlat(tb, ec, jose.ES256, payload, true, hdr())
	var general map[string]any
	_ = json.Unmarshal(valid, &general)
	general["signatures"] = []any{map[string]any{"protected": general["protected"], "signature": general["signature"]}}
	generalJSON, _ := json.Marshal(general)
	return [][]byte{
		valid,
		signFlat(tb, ec384, jose.ES384, payload, true, hdr()),
		signFlat(tb, ed, jose.EdDSA, []byte{}, true, hdr()),
		signFlat(tb, rsaKey, jose.RS256, payload, true, hdr()),
		signFlat(tb, ec, jose.ES256, payload, false, hdr("kid", fuzzAccountURL+"1")),
		signFlat(tb, ec, jose.ES256, payload, false, hdr("kid", "https://elsewhere.test/acct/1")),
		signFlat(tb, ec, jose.ES256, payload, true, hdr("url", "https://ca.test/other")),
		signFlat(tb, ec, jose.ES256, payload, true, map[string]any{"url": fuzzURL}),
		signFlat(tb, ec, jose.ES256, payload, true, map[string]any{"nonce": "bogus", "url": fuzzURL}),
		generalJSON,
		rawJWS([]byte(`{"alg":"HS256","nonce":"x","url":"`+fuzzURL+`","jwk":`+string(jwk)+`}`), payload, "AAAA"),
		rawJWS([]byte(`{"alg":"none","nonce":"x","url":"`+fuzzURL+`","jwk":`+string(jwk)+`}`), payload, ""),
		rawJWS([]byte(`{"alg":"ES256","nonce":"x","url":"`+fuzzURL+`","jwk":`+string(jwk)+`,"kid":"`+fuzzAccountURL+`1"}`), payload, "AAAA"),
		rawJWS([]byte(`{"alg":"RS256","nonce":"x","url":"`+fuzzURL+`","jwk":{"kty":"RSA","n":"AQAB","e":"AQAB"}}`), payload, "AAAA"),
		rawJWS([]byte(`{"alg":"ES256","nonce":"x","url":"`+fuzzURL+`","jwk":{"kty":"EC","crv":"P-256","x":"AA","y":"AA"}}`), payload, "AAAA"),
		[]byte(`{"protected":"e30","payload":"","signature":"AA","header":{}}`),
		[]byte(`{"protected":"!!","payload":"","signature":"AA"}`),
		[]byte(`{} {}`),
		[]byte(`null`),
		[]byte(`[]`),
		[]byte(``),
	}
}

// FuzzVerify: Verify never panics and returns either a client-facing ACME
// problem or, only for a request validly signed with its embedded jwk and
// a fresh nonce, the request's true payload and key. Each input is also
// tried as the protected header of an otherwise well-formed JWS, to reach
// the header, key and algorithm checks.
func FuzzVerify(f *testing.F) {
	v, nonces := newVerifier(f)
	for _, s := range verifySeeds(f, nonces) {
		f.Add(s)
	}
	f.Add([]byte(`{"alg":"ES256","nonce":"x","url":"` + fuzzURL + `","kid":"` + fuzzAccountURL + `1"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, in := range [][]byte{body, rawJWS(body, []byte(`{}`), "c2lnbmF0dXJl")} {
			req, err := v.Verify(context.Background(), in, fuzzURL)
			if err != nil {
				if req != nil {
					t.Fatal("Verify returned both a request and an error")
				}
				checkProblem(t, err)
				continue
			}
			if req == nil {
				t.Fatal("Verify returned neither a request nor an error")
			}
			k, payload := embeddedKeyPayload(t, in)
			if !bytes.Equal(req.Payload, payload) {
				t.Fatalf("payload %q; the JWS signs %q", req.Payload, payload)
			}
			if req.Account != nil || req.Thumbprint != thumbprint(t, k) || len(req.KeyJSON) == 0 || req.Key == nil {
				t.Fatalf("request %+v does not carry the embedded key", req)
			}
		}
	})
}

// TestVerifySeed checks the valid seed of FuzzVerify really verifies once
// and is then refused as a replay, so the corpus exercises success.
func TestVerifySeed(t *testing.T) {
	v, nonces := newVerifier(t)
	seeds := verifySeeds(t, nonces)
	// Seeds 0-3 are valid (ES256, ES384, EdDSA POST-as-GET, RS256).
	for i := range 4 {
		req, err := v.Verify(t.Context(), seeds[i], fuzzURL)
		if err != nil {
			t.Fatalf("seed %d: Verify error = %v; want success", i, err)
		}
		if want := i == 2; req.PostAsGet() != want {
			t.Errorf("seed %d: PostAsGet = %v; want %v", i, req.PostAsGet(), want)
		}
	}
	_, err := v.Verify(t.Context(), seeds[0], fuzzURL)
	var p *acme.Problem
	if !errors.As(err, &p) || p.Type != acme.ProbBadNonce {
		t.Fatalf("replayed seed: error = %v; want badNonce", err)
	}
	for i, s := range seeds[4:] {
		if _, err := v.Verify(t.Context(), s, fuzzURL); err == nil {
			t.Errorf("seed %d: Verify succeeded; want a problem", i+4)
		}
	}
}

// keyChangeFixture is an account with its current key and a new key.
type keyChangeFixture struct {
	outer  *jws.Request
	oldJWK json.RawMessage
	newKey *ecdsa.PrivateKey
}

func newKeyChangeFixture(tb testing.TB) *keyChangeFixture {
	tb.Helper()
	oldKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	newKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	jk := jose.JSONWebKey{Key: oldKey.Public()}
	oldJWK, err := jk.MarshalJSON()
	if err != nil {
		tb.Fatal(err)
	}
	tp, _ := jk.Thumbprint(crypto.SHA256)
	acct := &acme.Account{ID: "7", Key: oldJWK, KeyThumbprint: acme.Thumbprint(base64.RawURLEncoding.EncodeToString(tp)), Status: acme.StatusValid}
	return &keyChangeFixture{outer: &jws.Request{Account: acct}, oldJWK: oldJWK, newKey: newKey}
}

func (kc *keyChangeFixture) seeds(tb testing.TB) [][]byte {
	tb.Helper()
	payload := func(account string, oldKey json.RawMessage) []byte {
		b, _ := json.Marshal(map[string]any{"account": account, "oldKey": oldKey})
		return b
	}
	good := payload(fuzzAccountURL+"7", kc.oldJWK)
	hdr := map[string]any{"url": fuzzKeyChange}
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	return [][]byte{
		signFlat(tb, kc.newKey, jose.ES256, good, true, hdr),
		signFlat(tb, edKey, jose.EdDSA, good, true, hdr),
		signFlat(tb, kc.newKey, jose.ES256, payload(fuzzAccountURL+"8", kc.oldJWK), true, hdr),
		signFlat(tb, kc.newKey, jose.ES256, payload(fuzzAccountURL+"7", json.RawMessage(`{"kty":"EC"}`)), true, hdr),
		signFlat(tb, kc.newKey, jose.ES256, good, true, map[string]any{"url": fuzzKeyChange, "nonce": "n"}),
		signFlat(tb, kc.newKey, jose.ES256, good, false, map[string]any{"url": fuzzKeyChange, "kid": fuzzAccountURL + "7"}),
		signFlat(tb, kc.newKey, jose.ES256, good, true, map[string]any{"url": fuzzURL}),
		signFlat(tb, kc.newKey, jose.ES256, []byte(`[]`), true, hdr),
		[]byte(`{}`),
		[]byte(``),
	}
}

// FuzzKeyChange: VerifyKeyChange never panics on an arbitrary inner JWS
// and succeeds only for one validly signed by the key in its "jwk" that
// names the account and its current key.
func FuzzKeyChange(f *testing.F) {
	v, _ := newVerifier(f)
	kc := newKeyChangeFixture(f)
	for _, s := range kc.seeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, inner []byte) {
		outer := *kc.outer
		outer.Payload = inner
		nk, err := v.VerifyKeyChange(&outer, fuzzKeyChange)
		if err != nil {
			checkProblem(t, err)
			return
		}
		k, payload := embeddedKeyPayload(t, inner)
		if nk.Thumbprint != thumbprint(t, k) || nk.Thumbprint == kc.outer.Account.KeyThumbprint {
			t.Fatalf("new key thumbprint %q; the inner JWS is signed by %q (old %q)", nk.Thumbprint, thumbprint(t, k), kc.outer.Account.KeyThumbprint)
		}
		var p struct {
			Account string          `json:"account"`
			OldKey  json.RawMessage `json:"oldKey"`
		}
		if err := json.Unmarshal(payload, &p); err != nil || p.Account != fuzzAccountURL+"7" {
			t.Fatalf("accepted payload %q (%v)", payload, err)
		}
	})
}

// TestKeyChangeSeed checks the first two seeds of FuzzKeyChange succeed
// and the others fail.
func TestKeyChangeSeed(t *testing.T) {
	v, _ := newVerifier(t)
	kc := newKeyChangeFixture(t)
	for i, s := range kc.seeds(t) {
		outer := *kc.outer
		outer.Payload = s
		_, err := v.VerifyKeyChange(&outer, fuzzKeyChange)
		if want := i < 2; (err == nil) != want {
			t.Errorf("seed %d: VerifyKeyChange error = %v; want success %v", i, err, want)
		}
	}
}
