// SPDX-License-Identifier: Apache-2.0

package jws_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"hash"
	"strings"
	"testing"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/jws"
)

const fuzzEABKeyID = "kid-1"

// eabFixture is an account key (the outer JWS's) and an EAB key.
type eabFixture struct {
	outer   *jws.Request
	jwk     []byte // the account's public JWK
	hmacKey []byte // 64 bytes: long enough for HS512 (RFC 7518 §3.2)
	other   []byte // another account's public JWK
}

func newEABFixture(tb testing.TB) *eabFixture {
	tb.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	otherKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	jk := jose.JSONWebKey{Key: key.Public()}
	js, err := jk.MarshalJSON()
	if err != nil {
		tb.Fatal(err)
	}
	tp, _ := jk.Thumbprint(crypto.SHA256)
	other, _ := json.Marshal(jose.JSONWebKey{Key: otherKey.Public()})
	hk := make([]byte, 64)
	rand.Read(hk)
	return &eabFixture{
		outer:   &jws.Request{KeyJSON: js, Thumbprint: acme.Thumbprint(base64.RawURLEncoding.EncodeToString(tp))},
		jwk:     js,
		hmacKey: hk,
		other:   other,
	}
}

// macJWS is a flattened JWS with the protected header hdr over payload,
// MACed with key by alg's hash (whatever hdr says).
func macJWS(hdr map[string]any, payload, key []byte, h func() hash.Hash) []byte {
	ph, _ := json.Marshal(hdr)
	protected := base64.RawURLEncoding.EncodeToString(ph)
	pl := base64.RawURLEncoding.EncodeToString(payload)
	m := hmac.New(h, key)
	m.Write([]byte(protected + "." + pl))
	b, _ := json.Marshal(map[string]string{"protected": protected, "payload": pl,
		"signature": base64.RawURLEncoding.EncodeToString(m.Sum(nil))})
	return b
}

// eabSeeds are bindings of the fixture: the first three are valid
// (HS256, HS384, HS512), the rest are not.
func (fx *eabFixture) eabSeeds() [][]byte {
	hdr := func(alg string, extra ...any) map[string]any {
		m := map[string]any{"alg": alg, "kid": fuzzEABKeyID, "url": fuzzURL}
		for i := 0; i+1 < len(extra); i += 2 {
			if extra[i+1] == nil {
				delete(m, extra[i].(string))
				continue
			}
			m[extra[i].(string)] = extra[i+1]
		}
		return m
	}
	good := func(alg string, h func() hash.Hash) []byte { return macJWS(hdr(alg), fx.jwk, fx.hmacKey, h) }
	valid := good("HS256", sha256.New)
	var general map[string]any
	_ = json.Unmarshal(valid, &general)
	general["signatures"] = []any{map[string]any{"protected": general["protected"], "signature": general["signature"]}}
	generalJSON, _ := json.Marshal(general)
	wrongMAC := []byte(strings.Replace(string(valid), `"signature":"`, `"signature":"AAAA`, 1))
	return [][]byte{
		valid,
		good("HS384", sha512.New384),
		good("HS512", sha512.New),
		macJWS(hdr("HS256"), fx.jwk, []byte("another key of at least thirty-two bytes"), sha256.New),
		wrongMAC,
		macJWS(hdr("HS256", "url", "https://ca.test/acme/new-order"), fx.jwk, fx.hmacKey, sha256.New),
		macJWS(hdr("HS256", "url", nil), fx.jwk, fx.hmacKey, sha256.New),
		macJWS(hdr("HS256", "nonce", "n"), fx.jwk, fx.hmacKey, sha256.New),
		macJWS(hdr("HS256", "kid", nil), fx.jwk, fx.hmacKey, sha256.New),
		macJWS(hdr("HS256", "kid", ""), fx.jwk, fx.hmacKey, sha256.New),
		macJWS(hdr("ES256"), fx.jwk, fx.hmacKey, sha256.New),
		macJWS(hdr("none"), fx.jwk, fx.hmacKey, sha256.New),
		macJWS(hdr("HS256"), fx.other, fx.hmacKey, sha256.New),
		macJWS(hdr("HS256"), []byte(`{"kty":"EC"}`), fx.hmacKey, sha256.New),
		macJWS(hdr("HS256"), []byte(`not json`), fx.hmacKey, sha256.New),
		macJWS(hdr("HS256", "crit", []string{"exp"}, "exp", 1), fx.jwk, fx.hmacKey, sha256.New),
		generalJSON,
		[]byte(`{"protected":"e30","payload":"","signature":"AA","header":{}}`),
		[]byte(`{"protected":"!!","payload":"","signature":"AA"}`),
		[]byte(`"a string"`),
		[]byte(`{} {}`),
		[]byte(`null`),
		[]byte(`[]`),
		[]byte(``),
	}
}

// FuzzEAB: ParseEAB and VerifyMAC never panic, every failure is a
// client-facing ACME problem, and a binding passes both only if it is a
// flattened JWS with an HMAC algorithm, this request's URL, no nonce, the
// fixture's key ID, the account key as payload, and a MAC that verifies
// with the fixture's HMAC key. Each input is also tried as the protected
// header of an otherwise well-formed binding.
func FuzzEAB(f *testing.F) {
	fx := newEABFixture(f)
	for _, s := range fx.eabSeeds() {
		f.Add(s)
	}
	f.Add([]byte(`{"alg":"HS256","kid":"` + fuzzEABKeyID + `","url":"` + fuzzURL + `"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		pl := base64.RawURLEncoding.EncodeToString(fx.jwk)
		wrapped, _ := json.Marshal(map[string]string{"protected": base64.RawURLEncoding.EncodeToString(body), "payload": pl, "signature": "c2ln"})
		for _, in := range [][]byte{body, wrapped} {
			eab, err := jws.ParseEAB(in, fx.outer, fuzzURL)
			if err != nil {
				if eab != nil {
					t.Fatal("ParseEAB returned both a binding and an error")
				}
				checkProblem(t, err)
				continue
			}
			if err := eab.VerifyMAC(fx.hmacKey); err != nil {
				checkProblem(t, err)
				continue
			}
			// Accepted: check independently.
			var f struct{ Protected, Payload, Signature string }
			if err := json.Unmarshal(in, &f); err != nil {
				t.Fatalf("accepted a binding that is not a JSON object: %v", err)
			}
			hb, _ := base64.RawURLEncoding.DecodeString(f.Protected)
			var h map[string]any
			if err := json.Unmarshal(hb, &h); err != nil {
				t.Fatalf("accepted a binding whose protected header is not JSON: %v", err)
			}
			if _, ok := h["nonce"]; ok || h["url"] != fuzzURL || h["kid"] != eab.KeyID() || eab.KeyID() == "" {
				t.Fatalf("accepted protected header %s (key ID %q)", hb, eab.KeyID())
			}
			var hf func() hash.Hash
			switch h["alg"] {
			case "HS256":
				hf = sha256.New
			case "HS384":
				hf = sha512.New384
			case "HS512":
				hf = sha512.New
			default:
				t.Fatalf("accepted algorithm %v", h["alg"])
			}
			m := hmac.New(hf, fx.hmacKey)
			m.Write([]byte(f.Protected + "." + f.Payload))
			sig, _ := base64.RawURLEncoding.DecodeString(f.Signature)
			if !hmac.Equal(sig, m.Sum(nil)) {
				t.Fatal("accepted a binding whose MAC does not verify")
			}
			payload, _ := base64.RawURLEncoding.DecodeString(f.Payload)
			var k jose.JSONWebKey
			if err := k.UnmarshalJSON(payload); err != nil || thumbprint(t, &k) != fx.outer.Thumbprint {
				t.Fatalf("accepted payload %s that is not the account key (%v)", payload, err)
			}
		}
	})
}

// TestEABSeeds checks the seeds of FuzzEAB: the first three pass, the
// others are refused with the problem RFC 8555 §7.3.4 calls for.
func TestEABSeeds(t *testing.T) {
	fx := newEABFixture(t)
	seeds := fx.eabSeeds()
	wantTypes := map[int]acme.ProblemType{3: acme.ProbUnauthorized, 4: acme.ProbUnauthorized}
	for i, s := range seeds {
		var err error
		eab, err := jws.ParseEAB(s, fx.outer, fuzzURL)
		if err == nil {
			if eab.KeyID() != fuzzEABKeyID {
				t.Errorf("seed %d: key ID %q; want %q", i, eab.KeyID(), fuzzEABKeyID)
			}
			err = eab.VerifyMAC(fx.hmacKey)
		}
		if want := i < 3; (err == nil) != want {
			t.Errorf("seed %d: error %v; want success %v", i, err, want)
			continue
		}
		if err == nil {
			continue
		}
		want, ok := wantTypes[i]
		if !ok {
			want = acme.ProbMalformed
		}
		if p, _ := err.(*acme.Problem); p == nil || p.Type != want {
			t.Errorf("seed %d: error %v; want a %s problem", i, err, want)
		}
	}
}

// TestEABShortKey: an HMAC key shorter than the algorithm's hash is
// refused with a problem that says so (RFC 7518 §3.2), and works with
// HS256.
func TestEABShortKey(t *testing.T) {
	fx := newEABFixture(t)
	short := fx.hmacKey[:32]
	hdr := map[string]any{"alg": "HS512", "kid": fuzzEABKeyID, "url": fuzzURL}
	eab, err := jws.ParseEAB(macJWS(hdr, fx.jwk, short, sha512.New), fx.outer, fuzzURL)
	if err != nil {
		t.Fatal(err)
	}
	err = eab.VerifyMAC(short)
	if p, _ := err.(*acme.Problem); p == nil || p.Type != acme.ProbMalformed || !strings.Contains(p.Detail, "use HS256") {
		t.Errorf("HS512 with a 256-bit key: %v; want malformed, use HS256", err)
	}
	hdr["alg"] = "HS256"
	eab, err = jws.ParseEAB(macJWS(hdr, fx.jwk, short, sha256.New), fx.outer, fuzzURL)
	if err != nil {
		t.Fatal(err)
	}
	if err := eab.VerifyMAC(short); err != nil {
		t.Errorf("HS256 with a 256-bit key: %v", err)
	}
}
