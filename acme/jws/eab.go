// SPDX-License-Identifier: Apache-2.0

package jws

import (
	"encoding/base64"
	"encoding/json"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/weir-pki/weir/acme"
)

// eabAlgorithms are the MAC algorithms an External Account Binding may use
// (RFC 8555 §7.3.4: "a MAC-based algorithm"). go-jose follows RFC 7518
// §3.2: the HMAC key must be at least as long as the hash, so the 256-bit
// keys weir generates work with HS256 only.
var eabAlgorithms = []jose.SignatureAlgorithm{jose.HS256, jose.HS384, jose.HS512}

// eabHeader is what weir reads from the binding's protected header.
type eabHeader struct {
	Alg   string          `json:"alg"`
	KID   *string         `json:"kid"`
	URL   *string         `json:"url"`
	Nonce json.RawMessage `json:"nonce"`
	Crit  json.RawMessage `json:"crit"`
}

// EAB is the externalAccountBinding of a new-account request whose form
// ParseEAB has checked; it implements acme.EABBinding.
type EAB struct {
	kid string
	alg jose.SignatureAlgorithm
	sig *jose.JSONWebSignature
}

var _ acme.EABBinding = (*EAB)(nil)

// KeyID is the binding's "kid": the EAB key it claims.
func (e *EAB) KeyID() string { return e.kid }

// VerifyMAC checks the binding's MAC with hmacKey: an unauthorized
// problem if it does not verify (RFC 8555 §7.3.4).
func (e *EAB) VerifyMAC(hmacKey []byte) error {
	if len(hmacKey) < minHMACKey[e.alg] {
		return acme.Malformed("externalAccountBinding: %s needs an HMAC key at least as long as its hash (RFC 7518 §3.2); key %q has %d bits: use HS256",
			e.alg, e.kid, 8*len(hmacKey))
	}
	if _, err := e.sig.Verify(hmacKey); err != nil {
		return acme.Unauthorized("externalAccountBinding: the MAC does not verify with the HMAC key of %q", e.kid)
	}
	return nil
}

// minHMACKey is the shortest HMAC key of each algorithm, in bytes: as long
// as its hash (RFC 7518 §3.2), which go-jose enforces.
var minHMACKey = map[jose.SignatureAlgorithm]int{jose.HS256: 32, jose.HS384: 48, jose.HS512: 64}

// ParseEAB checks the form of raw, the externalAccountBinding of a
// new-account request whose outer JWS, outer, was posted to url (RFC 8555
// §7.3.4): a flattened JWS whose protected header has a MAC algorithm
// (HS256, HS384, HS512), the EAB key ID as "kid", "url" equal to the outer
// JWS's, and no "nonce"; and whose payload is the outer JWS's key. Every
// failure is a malformed problem. The MAC is checked later, with the key,
// by VerifyMAC.
func ParseEAB(raw []byte, outer *Request, url string) (*EAB, error) {
	// raw is one JSON value: the payload it came in is valid JSON.
	var f flattened
	if err := Unmarshal(raw, &f); err != nil {
		return nil, unmarshalProblem(err, "externalAccountBinding", "a JWS object")
	}
	switch {
	case f.Signatures != nil:
		return nil, acme.Malformed("externalAccountBinding must use the flattened JSON serialization, not the general one (RFC 8555 §7.3.4)")
	case f.Header != nil:
		return nil, acme.Malformed("externalAccountBinding must not have an unprotected header")
	case f.Protected == "" || f.Payload == nil || f.Signature == "":
		return nil, acme.Malformed("externalAccountBinding needs \"protected\", \"payload\" and \"signature\" members")
	}
	hb, err := base64.RawURLEncoding.DecodeString(f.Protected)
	if err != nil {
		return nil, acme.Malformed("externalAccountBinding: the protected header is not base64url: %v", err)
	}
	var h eabHeader
	if err := Unmarshal(hb, &h); err != nil {
		return nil, unmarshalProblem(err, "externalAccountBinding: the protected header", "a JSON object")
	}
	alg := jose.SignatureAlgorithm(h.Alg)
	ok := false
	for _, a := range eabAlgorithms {
		ok = ok || a == alg
	}
	switch {
	case !ok:
		return nil, acme.Malformed("externalAccountBinding: algorithm %q is not accepted; use a MAC: HS256, HS384 or HS512 (RFC 8555 §7.3.4)", h.Alg)
	case h.KID == nil || *h.KID == "":
		return nil, acme.Malformed("externalAccountBinding: the protected header needs \"kid\", the key ID of the EAB key")
	case h.URL == nil:
		return nil, acme.Malformed("externalAccountBinding: the protected header needs \"url\"")
	case *h.URL != url:
		return nil, acme.Malformed("externalAccountBinding: \"url\" %q must be the new-account URL %q (RFC 8555 §7.3.4)", *h.URL, url)
	case h.Nonce != nil:
		return nil, acme.Malformed("externalAccountBinding: the protected header must not have a \"nonce\" (RFC 8555 §7.3.4)")
	case h.Crit != nil:
		return nil, acme.Malformed("externalAccountBinding: no \"crit\" header parameter is supported (RFC 7515 §4.1.11)")
	}
	payload, err := base64.RawURLEncoding.DecodeString(*f.Payload)
	if err != nil {
		return nil, acme.Malformed("externalAccountBinding: the payload is not base64url: %v", err)
	}
	key, prob := parseAnyKey(payload)
	if prob != nil {
		return nil, acme.Malformed("externalAccountBinding: the payload must be the account's public JWK: %s", prob.Detail)
	}
	// The same key, however its JWK members are ordered or spelled: by
	// RFC 7638 thumbprint.
	if _, tp, err := keyInfo(key); err != nil || tp != outer.Thumbprint {
		return nil, acme.Malformed("externalAccountBinding: the payload is not the key that signs this request")
	}
	sig, err := jose.ParseSignedJSON(string(raw), eabAlgorithms)
	if err != nil {
		return nil, acme.Malformed("externalAccountBinding cannot be parsed: %v", err)
	}
	if len(sig.Signatures) != 1 {
		return nil, acme.Malformed("externalAccountBinding must have one signature")
	}
	return &EAB{kid: *h.KID, alg: alg, sig: sig}, nil
}
