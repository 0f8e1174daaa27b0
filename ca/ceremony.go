// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"errors"
	"fmt"
	"time"
)

// SignIntermediate is the root's ceremony: it signs, with rootKey, a new
// intermediate for the key and subject of csr, valid from an hour before
// now for 5 years (never past the root), shaped as GenerateHierarchy's
// intermediate, carrying the root's name constraints and naming the
// root's CRL at rootCRLURL (when set) as its CRL distribution point. The
// CSR's signature must verify and its subject must have a common name.
func SignIntermediate(root *x509.Certificate, rootKey crypto.Signer, csr *x509.CertificateRequest, now time.Time, rootCRLURL string) (*x509.Certificate, error) {
	if root == nil || rootKey == nil || csr == nil {
		return nil, errors.New("ca: signing an intermediate: root, root key and CSR are all needed")
	}
	pub, ok := rootKey.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(root.PublicKey) {
		return nil, fmt.Errorf("ca: the root key does not match the public key of root %q", root.Subject)
	}
	if err := csr.CheckSignature(); err != nil {
		return nil, fmt.Errorf("ca: the CSR's signature does not verify: %w", err)
	}
	if csr.Subject.CommonName == "" {
		return nil, errors.New("ca: the CSR's subject has no common name; name the new intermediate")
	}
	if bytes.Equal(csr.RawSubject, root.RawSubject) {
		return nil, errors.New("ca: the CSR's subject is the root's; an intermediate needs a name of its own")
	}
	if now.IsZero() {
		now = time.Now()
	}
	notBefore := now.UTC().Truncate(time.Second).Add(-caBackdate)
	notAfter := notBefore.Add(intermediateValidity)
	if notAfter.After(root.NotAfter) {
		notAfter = root.NotAfter
	}
	if !notAfter.After(notBefore) {
		return nil, fmt.Errorf("ca: root %q expired at %s", root.Subject, root.NotAfter)
	}
	tmpl, err := intermediateTemplate(csr.Subject, csr.PublicKey, root, notBefore, notAfter, rootCRLURL)
	if err != nil {
		return nil, err
	}
	tmpl.PermittedDNSDomainsCritical = root.PermittedDNSDomainsCritical
	tmpl.PermittedDNSDomains, tmpl.ExcludedDNSDomains = root.PermittedDNSDomains, root.ExcludedDNSDomains
	tmpl.PermittedIPRanges, tmpl.ExcludedIPRanges = root.PermittedIPRanges, root.ExcludedIPRanges
	der, err := x509.CreateCertificate(rand.Reader, tmpl, root, csr.PublicKey, rootKey)
	if err != nil {
		return nil, fmt.Errorf("ca: signing the intermediate: %w", err)
	}
	return x509.ParseCertificate(der)
}
