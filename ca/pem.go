// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
)

// PEM block types understood by this package.
const (
	pemCertificate   = "CERTIFICATE"
	pemPrivateKey    = "PRIVATE KEY"
	pemECPrivateKey  = "EC PRIVATE KEY"
	pemRSAPrivateKey = "RSA PRIVATE KEY"
)

// EncodeCertPEM wraps a DER certificate in a PEM "CERTIFICATE" block.
func EncodeCertPEM(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: pemCertificate, Bytes: der})
}

// EncodeKeyPEM marshals a private key as PKCS#8 in a PEM "PRIVATE KEY" block.
func EncodeKeyPEM(key crypto.Signer) ([]byte, error) {
	if key == nil {
		return nil, errors.New("ca: encoding key: key is nil")
	}
	if g, ok := key.(*guard); ok {
		key = g.Unwrap()
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("ca: encoding %T as PKCS#8: %w", key, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: pemPrivateKey, Bytes: der}), nil
}

// ParseCertsPEM parses every "CERTIFICATE" block in data, in order, ignoring
// blocks of other types. It returns an error if a certificate fails to parse
// or if data holds no certificates at all.
func ParseCertsPEM(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	rest := data
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != pemCertificate {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("ca: parsing certificate %d: %w", len(certs)+1, err)
		}
		certs = append(certs, cert)
	}
	if len(certs) == 0 {
		return nil, errors.New("ca: no CERTIFICATE PEM blocks found")
	}
	return certs, nil
}

// ParseKeyPEM parses the first private-key block in data. It accepts PKCS#8
// ("PRIVATE KEY"), SEC 1 ("EC PRIVATE KEY") and PKCS#1 ("RSA PRIVATE KEY")
// blocks and skips others, such as the "EC PARAMETERS" block OpenSSL emits.
// Encrypted keys are rejected (the encrypted-file signer reads them).
func ParseKeyPEM(data []byte) (crypto.Signer, error) {
	rest := data
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return nil, errors.New("ca: no private key PEM block found")
		}
		if _, encrypted := block.Headers["DEK-Info"]; encrypted {
			return nil, fmt.Errorf("ca: encrypted %s blocks are not supported", block.Type)
		}
		var (
			key any
			err error
		)
		switch block.Type {
		case pemPrivateKey:
			key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
		case pemECPrivateKey:
			key, err = x509.ParseECPrivateKey(block.Bytes)
		case pemRSAPrivateKey:
			key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
		case "ENCRYPTED PRIVATE KEY":
			return nil, errors.New("ca: the key is an ENCRYPTED PRIVATE KEY; set its signer type to encrypted-file, with its passphrase")
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("ca: parsing %s block: %w", block.Type, err)
		}
		signer, ok := key.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("ca: private key of type %T cannot sign", key)
		}
		return signer, nil
	}
}
