// SPDX-License-Identifier: Apache-2.0

package jws_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/weir-pki/weir/acme"
)

// TestVerifyRefusesOtherSpellings: a JWS validly signed over canonical
// base64url but sent with another spelling of a part (set bits past the
// data, padding, a line break) is refused as malformed before its nonce is
// spent, and so is a JWS with "crit" or "b64" in its protected header.
func TestVerifyRefusesOtherSpellings(t *testing.T) {
	v, nonces := newVerifier(t)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	sign := func(extra map[string]any) (map[string]string, string) {
		n, err := nonces.Nonce(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		hdr := map[string]any{"nonce": n, "url": fuzzURL}
		for k, v := range extra {
			hdr[k] = v
		}
		var f map[string]string
		if err := json.Unmarshal(signFlat(t, key, jose.ES256, []byte(`{}`), true, hdr), &f); err != nil {
			t.Fatal(err)
		}
		return f, n
	}
	for _, tc := range []struct {
		name   string
		extra  map[string]any
		edit   func(f map[string]string)
		detail string
	}{
		{"set bits past the payload", nil, func(f map[string]string) { f["payload"] = "e31" }, "payload is not base64url"},
		{"padded payload", nil, func(f map[string]string) { f["payload"] += "=" }, "payload is not base64url"},
		{"line break in the signature", nil, func(f map[string]string) {
			f["signature"] = f["signature"][:10] + "\n" + f["signature"][10:]
		}, "signature is not base64url"},
		{"padded protected header", nil, func(f map[string]string) { f["protected"] += "=" }, "protected header is not base64url"},
		{"crit", map[string]any{"crit": []string{"exp"}, "exp": 1}, nil, `"crit" or "b64"`},
		{"b64", map[string]any{"b64": true}, nil, `"crit" or "b64"`},
	} {
		f, nonce := sign(tc.extra)
		if tc.edit != nil {
			tc.edit(f)
		}
		body, _ := json.Marshal(f)
		_, err := v.Verify(t.Context(), body, fuzzURL)
		var p *acme.Problem
		if !errors.As(err, &p) || p.Type != acme.ProbMalformed || p.Status != 400 || !strings.Contains(p.Detail, tc.detail) {
			t.Errorf("%s: Verify error = %v; want malformed about %s", tc.name, err, tc.detail)
		}
		if ok, err := nonces.Redeem(t.Context(), nonce); err != nil || !ok {
			t.Errorf("%s: the refused request spent its nonce", tc.name)
		}
	}
	// The same JWS, spelled canonically, verifies.
	f, _ := sign(nil)
	body, _ := json.Marshal(f)
	if _, err := v.Verify(t.Context(), body, fuzzURL); err != nil {
		t.Fatalf("canonical JWS: %v", err)
	}
}
