// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"crypto"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Signer types: where a CA key is held and how weir reaches it.
const (
	// SignerFile is a plaintext PKCS#8 (or SEC 1, PKCS#1) PEM file.
	SignerFile = "file"
	// SignerEncryptedFile is an encrypted PKCS#8 PEM file ("ENCRYPTED
	// PRIVATE KEY", PBES2), its passphrase from a file, an environment
	// variable or a systemd credential.
	SignerEncryptedFile = "encrypted-file"
	// SignerPKCS11 is a key in a PKCS#11 token (an HSM, SoftHSM2), in
	// builds with the pkcs11 tag (signer_pkcs11.go).
	SignerPKCS11 = "pkcs11"
)

// SignerConfig says how a CA key (the intermediate's, or the root's for a
// ceremony) is reached. The zero value is a plaintext key file. It is the
// one seam through which the CA signs: a cloud KMS signer is one more Type
// with its block here and its opener in its own file (docs/operations.md).
type SignerConfig struct {
	// Type is file (the default when empty), encrypted-file or pkcs11.
	Type string `yaml:"type"`
	// Passphrase is the encrypted-file's passphrase source.
	Passphrase SecretSource `yaml:"passphrase"`
	// PKCS11 is the token and key of the pkcs11 type.
	PKCS11 PKCS11Config `yaml:"pkcs11"`
}

// PKCS11Config names a key pair in a PKCS#11 token.
type PKCS11Config struct {
	// Module is the path of the PKCS#11 library (for SoftHSM2 on Debian,
	// /usr/lib/softhsm/libsofthsm2.so).
	Module string `yaml:"module"`
	// TokenLabel or Slot (exactly one) selects the token.
	TokenLabel string `yaml:"token-label"`
	Slot       *int   `yaml:"slot,omitempty"`
	// KeyLabel or KeyID (hex), or both, select the key pair.
	KeyLabel string `yaml:"key-label"`
	KeyID    string `yaml:"key-id"`
	// PIN is the user PIN's source.
	PIN SecretSource `yaml:"pin"`
}

// SignerType is c.Type with the default filled in.
func (c SignerConfig) SignerType() string {
	if c.Type == "" {
		return SignerFile
	}
	return c.Type
}

// Validate checks the block's shape (not the key itself, which OpenSigner
// reads); field names in errors are relative to the block, so the caller
// prefixes its key.
func (c SignerConfig) Validate() error {
	var errs []error
	switch c.SignerType() {
	case SignerFile:
	case SignerEncryptedFile:
		if err := c.Passphrase.validate("passphrase", true); err != nil {
			errs = append(errs, err)
		}
	case SignerPKCS11:
		p := c.PKCS11
		if p.Module == "" {
			errs = append(errs, errors.New("pkcs11.module: the path of the PKCS#11 library is required"))
		}
		if (p.TokenLabel == "") == (p.Slot == nil) {
			errs = append(errs, errors.New("pkcs11: set exactly one of token-label and slot"))
		}
		if p.KeyLabel == "" && p.KeyID == "" {
			errs = append(errs, errors.New("pkcs11: set key-label or key-id (or both)"))
		}
		if p.KeyID != "" {
			if _, err := decodeHexID(p.KeyID); err != nil {
				errs = append(errs, fmt.Errorf("pkcs11.key-id: %v", err))
			}
		}
		if err := p.PIN.validate("pkcs11.pin", true); err != nil {
			errs = append(errs, err)
		}
	default:
		errs = append(errs, fmt.Errorf("type: %q is not a signer type (%s, %s or %s)", c.Type, SignerFile, SignerEncryptedFile, SignerPKCS11))
	}
	if c.SignerType() != SignerEncryptedFile && !c.Passphrase.empty() {
		errs = append(errs, fmt.Errorf("passphrase: only the %s type has a passphrase", SignerEncryptedFile))
	}
	if c.SignerType() != SignerPKCS11 && !c.PKCS11.empty() {
		errs = append(errs, fmt.Errorf("pkcs11: only the %s type has a pkcs11 block", SignerPKCS11))
	}
	return errors.Join(errs...)
}

func (p PKCS11Config) empty() bool {
	return p.Module == "" && p.TokenLabel == "" && p.Slot == nil && p.KeyLabel == "" && p.KeyID == "" && p.PIN.empty()
}

// NeedsKeyFile reports whether the signer reads a key file.
func (c SignerConfig) NeedsKeyFile() bool { return c.SignerType() != SignerPKCS11 }

// Signer is a CA key: a crypto.Signer that may hold resources (a PKCS#11
// session pool) until Close. A failure of its Sign wraps
// ErrSignerUnavailable (see guard).
type Signer interface {
	crypto.Signer
	io.Closer
}

// ErrSignerUnavailable marks a failure of the CA key itself (a token
// removed, a session lost): nothing is wrong with the request, and the
// same signing is expected to work once the key is back.
var ErrSignerUnavailable = errors.New("ca: the signing key is unavailable")

// OpenSigner opens the CA key that c describes; keyFile is the key file
// of the file types, and name (such as "ca.intermediate") names the key
// in every error, so an operator knows which key failed and why. The
// signer's Sign errors wrap ErrSignerUnavailable.
func OpenSigner(name string, c SignerConfig, keyFile string) (Signer, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var (
		s   crypto.Signer
		cl  io.Closer
		err error
	)
	switch c.SignerType() {
	case SignerFile:
		s, err = openKeyFile(keyFile, nil)
	case SignerEncryptedFile:
		var pass []byte
		if pass, err = c.Passphrase.Read(); err == nil {
			s, err = openKeyFile(keyFile, pass)
		}
	case SignerPKCS11:
		s, cl, err = openPKCS11(c.PKCS11)
	}
	if err != nil {
		return nil, fmt.Errorf("%s (%s signer): %w", name, c.SignerType(), err)
	}
	return &guard{Signer: s, closer: cl, name: name}, nil
}

// WrapSigner makes a key in memory a Signer (Close does nothing), its
// errors marked as OpenSigner's are.
func WrapSigner(name string, s crypto.Signer) Signer {
	if g, ok := s.(*guard); ok {
		return g
	}
	return &guard{Signer: s, name: name}
}

// guard marks the errors of a key's Sign as ErrSignerUnavailable and
// releases what the key holds on Close.
type guard struct {
	crypto.Signer
	closer io.Closer
	name   string
}

// Sign implements crypto.Signer.
func (g *guard) Sign(rand io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	sig, err := g.Signer.Sign(rand, digest, opts)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrSignerUnavailable, g.name, err)
	}
	return sig, nil
}

// Close implements io.Closer.
func (g *guard) Close() error {
	if g.closer == nil {
		return nil
	}
	return g.closer.Close()
}

// Unwrap returns the key the guard wraps (the private key of a file
// signer, which weir init writes).
func (g *guard) Unwrap() crypto.Signer { return g.Signer }

// decodeHexID reads a PKCS#11 CKA_ID written in hex (colons allowed).
func decodeHexID(s string) ([]byte, error) {
	s = strings.ReplaceAll(strings.TrimPrefix(strings.ToLower(s), "0x"), ":", "")
	b, err := hex.DecodeString(s)
	if err != nil || len(b) == 0 {
		return nil, fmt.Errorf("%q is not hex digits", s)
	}
	return b, nil
}
