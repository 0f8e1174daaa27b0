// SPDX-License-Identifier: Apache-2.0

package jws

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"math/big"
	"strings"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
)

// goJoseVerifies is the reference: whether go-jose accepts sig over input
// (protected.payload) with key and alg.
func goJoseVerifies(t *testing.T, key any, alg jose.SignatureAlgorithm, input string, sig []byte) bool {
	t.Helper()
	obj, err := jose.ParseSignedCompact(input+"."+base64.RawURLEncoding.EncodeToString(sig), []jose.SignatureAlgorithm{alg})
	if err != nil {
		t.Fatalf("go-jose cannot parse %q: %v", input, err)
	}
	_, err = obj.Verify(key)
	return err == nil
}

// TestVerifySignatureMatchesGoJose: for real signatures of every accepted
// algorithm and for broken ones (a flipped bit, a byte too few or too
// many, zeros, the other ECDSA S, a signature by another key, an
// algorithm that does not fit the key), verifySignature agrees with
// go-jose's JSONWebSignature.Verify, and accepts the real ones.
func TestVerifySignatureMatchesGoJose(t *testing.T) {
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	other256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	type signer struct {
		name string
		key  crypto.Signer
		alg  jose.SignatureAlgorithm
	}
	signers := []signer{
		{"ES256", p256, jose.ES256},
		{"ES384", p384, jose.ES384},
		{"EdDSA", ed, jose.EdDSA},
		{"RS256", rsaKey, jose.RS256},
	}
	for _, sg := range signers {
		for _, payload := range []string{"", `{}`, `{"identifiers":[{"type":"dns","value":"a.example"}]}`} {
			s, err := jose.NewSigner(jose.SigningKey{Algorithm: sg.alg, Key: sg.key}, &jose.SignerOptions{ExtraHeaders: map[jose.HeaderKey]any{"url": "https://ca.test/x"}})
			if err != nil {
				t.Fatal(err)
			}
			obj, err := s.Sign([]byte(payload))
			if err != nil {
				t.Fatal(err)
			}
			compact, err := obj.CompactSerialize()
			if err != nil {
				t.Fatal(err)
			}
			cut := strings.LastIndexByte(compact, '.')
			input := compact[:cut]
			sig, err := base64.RawURLEncoding.DecodeString(compact[cut+1:])
			if err != nil {
				t.Fatal(err)
			}
			flip := append([]byte(nil), sig...)
			flip[len(flip)/2] ^= 0x10
			cases := map[string][]byte{
				"real":           sig,
				"flipped bit":    flip,
				"one byte short": sig[:len(sig)-1],
				"one byte more":  append(append([]byte(nil), sig...), 0),
				"zeros":          make([]byte, len(sig)),
				"empty":          nil,
			}
			if k, ok := sg.key.(*ecdsa.PrivateKey); ok {
				// (R, N-S) is the other valid signature of the same
				// digest; both libraries accept it.
				size := len(sig) / 2
				sNeg := new(big.Int).Sub(k.Curve.Params().N, new(big.Int).SetBytes(sig[size:]))
				malleated := append([]byte(nil), sig[:size]...)
				cases["N-S"] = append(malleated, sNeg.FillBytes(make([]byte, size))...)
			}
			for name, sg2 := range cases {
				want := goJoseVerifies(t, sg.key.Public(), sg.alg, input, sg2)
				if got := verifySignature(sg.key.Public(), sg.alg, input, sg2); got != want {
					t.Errorf("%s, payload %q, %s signature: verifySignature = %v, go-jose %v", sg.name, payload, name, got, want)
				}
				if (name == "real" || name == "N-S") && !want {
					t.Errorf("%s, payload %q: go-jose refuses the %s signature", sg.name, payload, name)
				}
			}
			// The right signature checked with another key or algorithm.
			for _, o := range []struct {
				name string
				key  any
				alg  jose.SignatureAlgorithm
			}{
				{"another P-256 key", other256.Public(), sg.alg},
				{"ES384 for a P-256 key", p256.Public(), jose.ES384},
				{"ES256 for a P-384 key", p384.Public(), jose.ES256},
				{"EdDSA for an RSA key", rsaKey.Public(), jose.EdDSA},
				{"RS256 for an Ed25519 key", ed.Public(), jose.RS256},
			} {
				if verifySignature(o.key, o.alg, input, sig) {
					t.Errorf("%s signature accepted with %s", sg.name, o.name)
				}
			}
		}
	}
}

// TestDecodeB64 accepts only the canonical unpadded base64url spelling:
// another spelling of the same bytes is not what was signed.
func TestDecodeB64(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // "" for a refusal
	}{
		{"e30", "{}"},
		{"", ""},
		{"YWJj", "abc"},
		{"_-8", "\xff\xef"},
		{"e31", ""},   // set bits past the data: decodes to "{}" when not strict
		{"e30=", ""},  // padding
		{"e3\n0", ""}, // a line break Go's decoder would skip
		{"e3\r0", ""},
		{"e3+0", ""}, // standard, not URL, alphabet
		{"e3/0", ""},
		{"e 30", ""},
		{"e", ""},
	} {
		got, prob := decodeB64("payload", tc.in)
		switch {
		case tc.want == "" && tc.in != "" && prob == nil:
			t.Errorf("decodeB64(%q) = %q; want a refusal", tc.in, got)
		case tc.want != "" && (prob != nil || string(got) != tc.want):
			t.Errorf("decodeB64(%q) = %q, %v; want %q", tc.in, got, prob, tc.want)
		case prob != nil && (prob.Type != "urn:ietf:params:acme:error:malformed" || !strings.Contains(prob.Detail, "payload")):
			t.Errorf("decodeB64(%q): problem %v; want malformed naming the part", tc.in, prob)
		}
	}
}

// TestParseBody: parse refuses a body that is not exactly one JSON object,
// saying which way it is not.
func TestParseBody(t *testing.T) {
	for _, tc := range []struct{ body, detail string }{
		{`{"protected":"e30"`, "not a JSON object"},
		{`[]`, "not a JSON object"},
		{`{"protected":5}`, "not a JSON object"},
		{`{"protected":"e30"} {}`, "data after the JWS object"},
		{`{"protected":"e30"}]`, "data after the JWS object"},
		{`{"protected":"e30"} x`, "data after the JWS object"},
		{``, "not a JSON object"},
	} {
		_, prob := parse([]byte(tc.body))
		if prob == nil || prob.Type != "urn:ietf:params:acme:error:malformed" || !strings.Contains(prob.Detail, tc.detail) {
			t.Errorf("parse(%q) = %v; want malformed: %s", tc.body, prob, tc.detail)
		}
	}
}
