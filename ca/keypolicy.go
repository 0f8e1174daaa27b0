// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"errors"
	"fmt"
)

// RSA modulus size limits enforced by KeyPolicy.
const (
	MinRSABits = 2048
	MaxRSABits = 8192
)

// ErrBadKey is wrapped by every error CheckKey returns; the ACME layer maps
// it to the badPublicKey problem type.
var ErrBadKey = errors.New("ca: unacceptable public key")

// KeyPolicy says which subscriber keys are acceptable: RSA keys of 2048 to
// 8192 bits, ECDSA keys on P-256 or P-384, and Ed25519 keys only if
// AllowEd25519 is set.
type KeyPolicy struct {
	AllowEd25519 bool
}

// CheckKey returns nil if pub is acceptable under the policy. Otherwise it
// returns an error wrapping ErrBadKey whose message says exactly what is
// wrong, such as "RSA key of 1024 bits; at least 2048 required".
func (p KeyPolicy) CheckKey(pub crypto.PublicKey) error {
	switch k := pub.(type) {
	case nil:
		return badKey("no public key")
	case *rsa.PublicKey:
		return checkRSA(k)
	case *ecdsa.PublicKey:
		return checkECDSA(k)
	case ed25519.PublicKey:
		return p.checkEd25519(k)
	case *ed25519.PublicKey:
		if k == nil {
			return badKey("no public key")
		}
		return p.checkEd25519(*k)
	default:
		return badKey("unsupported key type %T; RSA, ECDSA or Ed25519 required", pub)
	}
}

func checkRSA(k *rsa.PublicKey) error {
	if k == nil || k.N == nil {
		return badKey("RSA key has no modulus")
	}
	bits := k.N.BitLen()
	switch {
	case bits < MinRSABits:
		return badKey("RSA key of %d bits; at least %d required", bits, MinRSABits)
	case bits > MaxRSABits:
		return badKey("RSA key of %d bits; at most %d allowed", bits, MaxRSABits)
	case k.N.Bit(0) == 0:
		return badKey("RSA modulus is even")
	case k.E < 3 || k.E%2 == 0:
		return badKey("RSA public exponent %d is invalid; an odd exponent of at least 3 is required", k.E)
	}
	return nil
}

func checkECDSA(k *ecdsa.PublicKey) error {
	if k == nil || k.Curve == nil {
		return badKey("ECDSA key has no curve")
	}
	switch k.Curve {
	case elliptic.P256(), elliptic.P384():
	default:
		return badKey("ECDSA key on curve %s; only P-256 and P-384 allowed", k.Curve.Params().Name)
	}
	if _, err := k.Bytes(); err != nil {
		return badKey("ECDSA %s key is not a valid curve point: %v", k.Curve.Params().Name, err)
	}
	return nil
}

func (p KeyPolicy) checkEd25519(k ed25519.PublicKey) error {
	if !p.AllowEd25519 {
		return badKey("Ed25519 keys are not allowed by this CA")
	}
	if len(k) != ed25519.PublicKeySize {
		return badKey("Ed25519 key of %d bytes; %d required", len(k), ed25519.PublicKeySize)
	}
	return nil
}

// badKey formats a key-policy violation wrapping ErrBadKey.
func badKey(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadKey, fmt.Sprintf(format, args...))
}
