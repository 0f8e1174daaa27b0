// SPDX-License-Identifier: Apache-2.0

package jws

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"math/big"

	jose "github.com/go-jose/go-jose/v4"
)

// verifySignature reports whether sig is a valid alg signature of input
// by key (RFC 7518 §3.3, §3.4; RFC 8037 §3.1), checked as go-jose's
// verifiers check it. go-jose's own JSONWebSignature.Verify would first
// parse the protected header again (twice) and re-encode the payload: a
// third of the cost of authenticating a request besides the signature
// arithmetic. checkAlg has matched the key to alg already; the cases
// below refuse a mismatch anyway.
func verifySignature(key any, alg jose.SignatureAlgorithm, input string, sig []byte) bool {
	switch k := key.(type) {
	case *ecdsa.PublicKey:
		// The signature is R and S, each as long as the curve's order,
		// big-endian (RFC 7518 §3.4), not DER.
		var digest []byte
		var size int
		switch alg {
		case jose.ES256:
			d := sha256.Sum256([]byte(input))
			digest, size = d[:], 32
		case jose.ES384:
			d := sha512.Sum384([]byte(input))
			digest, size = d[:], 48
		default:
			return false
		}
		if k.Curve.Params().BitSize != 8*size || len(sig) != 2*size {
			return false
		}
		r := new(big.Int).SetBytes(sig[:size])
		s := new(big.Int).SetBytes(sig[size:])
		return ecdsa.Verify(k, digest, r, s)
	case *rsa.PublicKey:
		if alg != jose.RS256 {
			return false
		}
		d := sha256.Sum256([]byte(input))
		return rsa.VerifyPKCS1v15(k, crypto.SHA256, d[:], sig) == nil
	case ed25519.PublicKey:
		if alg != jose.EdDSA {
			return false
		}
		return ed25519.Verify(k, []byte(input), sig)
	}
	return false
}
