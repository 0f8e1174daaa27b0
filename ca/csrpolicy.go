// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
)

// ErrBadCSRSignature is wrapped by every error CheckCSRSignature returns;
// the ACME layer maps it to the badCSR problem type.
var ErrBadCSRSignature = errors.New("ca: unacceptable CSR signature")

// csrSignatureAlgorithms are the signature algorithms a CSR may be signed
// with: SHA-2 with RSA (PKCS #1 v1.5 or PSS) or ECDSA, and Ed25519. It is
// an allow-list so that an algorithm the x509 package parses but which is
// broken (MD5, SHA-1: a CSR's signature proves possession of the key, and
// SHA-1 collisions are practical) is refused whether or not x509 still
// verifies it.
var csrSignatureAlgorithms = []x509.SignatureAlgorithm{
	x509.SHA256WithRSA, x509.SHA384WithRSA, x509.SHA512WithRSA,
	x509.SHA256WithRSAPSS, x509.SHA384WithRSAPSS, x509.SHA512WithRSAPSS,
	x509.ECDSAWithSHA256, x509.ECDSAWithSHA384, x509.ECDSAWithSHA512,
	x509.PureEd25519,
}

// CheckCSRSignature returns nil when csr is signed with an acceptable
// algorithm and its signature verifies under its own public key (the proof
// of possession of RFC 2986 §3). Otherwise it returns an error wrapping
// ErrBadCSRSignature that names the algorithm or says why the signature
// does not verify.
func CheckCSRSignature(csr *x509.CertificateRequest) error {
	if !slices.Contains(csrSignatureAlgorithms, csr.SignatureAlgorithm) {
		return fmt.Errorf("%w: the CSR is signed with %s; accepted are %s", ErrBadCSRSignature, algorithmName(csr.SignatureAlgorithm), csrAlgorithmNames())
	}
	if err := csr.CheckSignature(); err != nil {
		return fmt.Errorf("%w: the CSR signature is invalid: %v", ErrBadCSRSignature, err)
	}
	return nil
}

// algorithmName names a, also when x509 does not know it (its String is
// then a bare number).
func algorithmName(a x509.SignatureAlgorithm) string {
	if a == x509.UnknownSignatureAlgorithm {
		return "an unknown signature algorithm"
	}
	return a.String()
}

// csrAlgorithmNames lists csrSignatureAlgorithms for a message.
func csrAlgorithmNames() string {
	var s string
	for i, a := range csrSignatureAlgorithms {
		if i > 0 {
			s += ", "
		}
		s += a.String()
	}
	return s
}
