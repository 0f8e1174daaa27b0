// SPDX-License-Identifier: Apache-2.0

// The throwaway certificates and keys of a peer CA (peer.go): a root, an
// intermediate or a TLS leaf made with crypto/x509 (ECDSA P-256) into the
// run's directory, and a PKCS#8 key encrypted with a password (PBES2:
// PBKDF2-HMAC-SHA256 and AES-256-CBC), as step-ca reads its intermediate
// key.

package main

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"time"
)

// pkiCert is a certificate and its key.
type pkiCert struct {
	cert *x509.Certificate
	der  []byte
	key  *ecdsa.PrivateKey
}

// newPKICert makes a certificate from tmpl with a fresh P-256 key, signed
// by parent (self-signed when parent is nil), valid from an hour ago for
// life.
func newPKICert(tmpl *x509.Certificate, parent *pkiCert, life time.Duration) (*pkiCert, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(life)
	signer, signerCert := key, tmpl
	if parent != nil {
		signer, signerCert = parent.key, parent.cert
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signerCert, &key.PublicKey, signer)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &pkiCert{cert: cert, der: der, key: key}, nil
}

// newCA makes a CA certificate: a root when parent is nil, else an
// intermediate that may sign leaves only.
func newCA(cn string, parent *pkiCert) (*pkiCert, error) {
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: cn, Organization: []string{"weir-load"}},
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	if parent != nil {
		tmpl.MaxPathLenZero = true
	}
	return newPKICert(tmpl, parent, 10*365*24*time.Hour)
}

// newTLSLeaf makes a server certificate for 127.0.0.1 and localhost
// signed by parent.
func newTLSLeaf(parent *pkiCert) (*pkiCert, error) {
	return newPKICert(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "127.0.0.1"},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, parent, 30*24*time.Hour)
}

// writeCert writes the certificate as PEM.
func (c *pkiCert) writeCert(path string) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.der}), 0o644)
}

// writeKey writes the key as a PKCS#8 PEM, encrypted with password
// unless it is empty.
func (c *pkiCert) writeKey(path string, password []byte) error {
	der, err := x509.MarshalPKCS8PrivateKey(c.key)
	if err != nil {
		return err
	}
	block := &pem.Block{Type: "PRIVATE KEY", Bytes: der}
	if len(password) > 0 {
		if block, err = encryptPKCS8(der, password); err != nil {
			return err
		}
	}
	return os.WriteFile(path, pem.EncodeToMemory(block), 0o600)
}

var (
	oidPBES2          = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2         = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidHMACWithSHA256 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}
	oidAES256CBC      = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}
)

// The ASN.1 of an EncryptedPrivateKeyInfo with PBES2 (RFC 8018).
type (
	pbkdf2Params struct {
		Salt           []byte
		IterationCount int
		PRF            pkix.AlgorithmIdentifier
	}
	pbkdf2Func struct {
		Algorithm asn1.ObjectIdentifier
		Params    pbkdf2Params
	}
	pbes2Scheme struct {
		Algorithm asn1.ObjectIdentifier
		IV        []byte
	}
	pbes2Params struct {
		KDF    pbkdf2Func
		Scheme pbes2Scheme
	}
	pbes2Algorithm struct {
		Algorithm asn1.ObjectIdentifier
		Params    pbes2Params
	}
	encryptedPrivateKeyInfo struct {
		Algorithm pbes2Algorithm
		Data      []byte
	}
)

// pbkdf2Iterations is low: the key protects a throwaway CA of one run.
const pbkdf2Iterations = 10000

// encryptPKCS8 encrypts a PKCS#8 key with password: an ENCRYPTED PRIVATE
// KEY block, as `step crypto key format --pkcs8` writes it.
func encryptPKCS8(der, password []byte) (*pem.Block, error) {
	salt, iv := make([]byte, 16), make([]byte, aes.BlockSize)
	if _, err := rand.Read(salt); err != nil {
		return nil, err
	}
	if _, err := rand.Read(iv); err != nil {
		return nil, err
	}
	key, err := pbkdf2.Key(sha256.New, string(password), salt, pbkdf2Iterations, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	pad := aes.BlockSize - len(der)%aes.BlockSize
	data := append([]byte{}, der...)
	for range pad {
		data = append(data, byte(pad))
	}
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(data, data)
	b, err := asn1.Marshal(encryptedPrivateKeyInfo{
		Algorithm: pbes2Algorithm{Algorithm: oidPBES2, Params: pbes2Params{
			KDF: pbkdf2Func{Algorithm: oidPBKDF2, Params: pbkdf2Params{
				Salt: salt, IterationCount: pbkdf2Iterations,
				PRF: pkix.AlgorithmIdentifier{Algorithm: oidHMACWithSHA256, Parameters: asn1.NullRawValue},
			}},
			Scheme: pbes2Scheme{Algorithm: oidAES256CBC, IV: iv},
		}},
		Data: data,
	})
	if err != nil {
		return nil, fmt.Errorf("encrypting the key: %w", err)
	}
	return &pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: b}, nil
}
