// SPDX-License-Identifier: Apache-2.0

package acmeenv

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
)

// PublicJWK is the public JWK of key as a JSON value.
func PublicJWK(t *testing.T, key crypto.PublicKey) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(jose.JSONWebKey{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// HandSignedJWS builds a flattened JWS with exactly the protected header
// hdr and an ES256 signature by key over it (valid whatever hdr says), so
// that headers go-jose would refuse to produce can be sent.
func HandSignedJWS(t *testing.T, key *ecdsa.PrivateKey, hdr map[string]any, payload []byte) map[string]any {
	t.Helper()
	return HandSignedRaw(t, key, MarshalJSON(t, hdr), payload)
}

// HandSignedRaw is HandSignedJWS with the protected header's JSON text ph
// as it is, so that texts a map cannot hold (a member twice) can be sent.
func HandSignedRaw(t *testing.T, key *ecdsa.PrivateKey, ph, payload []byte) map[string]any {
	t.Helper()
	protected := base64.RawURLEncoding.EncodeToString(ph)
	pl := base64.RawURLEncoding.EncodeToString(payload)
	digest := sha256.Sum256([]byte(protected + "." + pl))
	r, s, err := ecdsa.Sign(rand.Reader, key, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return map[string]any{"protected": protected, "payload": pl, "signature": base64.RawURLEncoding.EncodeToString(sig)}
}

// MarshalJSON is json.Marshal, failing t on an error.
func MarshalJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
