// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"crypto"
	"encoding/pem"
	"errors"
	"fmt"
	"os"

	"github.com/youmark/pkcs8"
)

// pemEncryptedPrivateKey is the PEM type of an encrypted PKCS#8 key.
const pemEncryptedPrivateKey = "ENCRYPTED PRIVATE KEY"

// pbkdf2Iterations is the work factor of the keys weir encrypts (OWASP's
// figure for PBKDF2-HMAC-SHA256); it is paid once, when the key is opened.
const pbkdf2Iterations = 600_000

// CheckSecretMode refuses a secret file (what it holds: "private key",
// "the token") that group or others can read.
func CheckSecretMode(path, what string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s: %s is readable by group or others (mode %04o); run chmod 600 %s", path, what, st.Mode().Perm(), path)
	}
	return nil
}

// openKeyFile reads the key at path: a plaintext key when pass is nil,
// else an encrypted PKCS#8 key (PBES2, as openssl pkcs8 -topk8 -v2
// aes-256-cbc writes it) decrypted with pass.
func openKeyFile(path string, pass []byte) (crypto.Signer, error) {
	if path == "" {
		return nil, errors.New("no key file is set")
	}
	if err := CheckSecretMode(path, "private key"); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if pass == nil {
		k, err := ParseKeyPEM(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return k, nil
	}
	return parseEncryptedKeyPEM(path, data, pass)
}

// parseEncryptedKeyPEM decrypts the "ENCRYPTED PRIVATE KEY" block of
// data with pass.
func parseEncryptedKeyPEM(path string, data, pass []byte) (crypto.Signer, error) {
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return nil, fmt.Errorf("%s: no %s PEM block found; a plaintext key is the %s signer type", path, pemEncryptedPrivateKey, SignerFile)
		}
		if block.Type != pemEncryptedPrivateKey {
			continue
		}
		key, err := pkcs8.ParsePKCS8PrivateKey(block.Bytes, pass)
		if err != nil {
			// A wrong passphrase shows as a padding or ASN.1 error of
			// the decrypted bytes: name the likely cause first.
			return nil, fmt.Errorf("%s: cannot decrypt the key: wrong passphrase, or not a PBES2 PKCS#8 key (%v)", path, err)
		}
		s, ok := key.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("%s: private key of type %T cannot sign", path, key)
		}
		return s, nil
	}
}

// EncodeEncryptedKeyPEM marshals key as encrypted PKCS#8 (PBES2:
// PBKDF2-SHA256 and AES-256-CBC) under pass, in a PEM "ENCRYPTED PRIVATE
// KEY" block that openssl and the encrypted-file signer read.
func EncodeEncryptedKeyPEM(key crypto.Signer, pass []byte) ([]byte, error) {
	if len(pass) == 0 {
		return nil, errors.New("ca: encrypting a key: the passphrase is empty")
	}
	der, err := pkcs8.MarshalPrivateKey(key, pass, &pkcs8.Opts{
		Cipher:  pkcs8.AES256CBC,
		KDFOpts: pkcs8.PBKDF2Opts{SaltSize: 16, IterationCount: pbkdf2Iterations, HMACHash: crypto.SHA256},
	})
	if err != nil {
		return nil, fmt.Errorf("ca: encrypting %T as PKCS#8: %w", key, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: pemEncryptedPrivateKey, Bytes: der}), nil
}
