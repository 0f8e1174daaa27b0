// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"bytes"
	"crypto"
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Use is what an intermediate is loaded for besides signing the CRL of
// the certificates it signed, which every intermediate weir holds does:
// the zero Use is a retired issuer's. An intermediate that signs new
// certificates (the active issuer's, and every one weir ca import or
// add-issuer installs) has Now set.
type Use struct {
	// Now, when not zero, is when it signs: its validity must cover it,
	// and it must not outlive its root (whose certificates would then
	// stop verifying before their own expiry).
	Now time.Time
	// LeafEKUs are the extended key usages of the leaves it signs, each
	// with what puts it there; with Now set, it must allow at least one
	// of each source's (CheckLeafEKUs).
	LeafEKUs []LeafEKU
	// Installing is set for an intermediate being installed (weir ca
	// import, add-issuer): it must then allow every one of LeafEKUs. One
	// already in service that allows only some of a source's is accepted,
	// the rest logged (LeafEKUGaps): its certificates verify for the
	// usages it allows, and refusing to start over it would stop a CA
	// that issues usable certificates.
	Installing bool
}

// LeafEKU is an extended key usage that leaves carry, and what puts it
// in them (a configuration key, for the error).
type LeafEKU struct {
	EKU x509.ExtKeyUsage
	By  string
}

// CheckIntermediate is every check of an intermediate weir signs with:
// the hierarchy's load at start (LoadHierarchy), weir ca import and weir
// ca add-issuer all make it, so they never disagree. inter must be a CA
// (basicConstraints cA true) with keyCertSign and cRLSign, a subject key
// identifier, and key's public key; when root is not nil, it must be
// issued (its issuer is root's subject) and signed by root. For use.Now
// it must be valid at Now, expire no later than root, and allow
// use.LeafEKUs.
func CheckIntermediate(root, inter *x509.Certificate, key crypto.Signer, use Use) error {
	if err := checkIntermediate(inter, key); err != nil {
		return err
	}
	if inter.KeyUsage&x509.KeyUsageCRLSign == 0 {
		return fmt.Errorf("ca: intermediate certificate %q lacks the cRLSign key usage: weir signs the CRL of the certificates it signs with it (RFC 5280 §4.2.1.3)", inter.Subject)
	}
	if root != nil {
		if !bytes.Equal(inter.RawIssuer, root.RawSubject) {
			return fmt.Errorf("ca: intermediate issuer %q does not match root subject %q",
				inter.Issuer, root.Subject)
		}
		if err := inter.CheckSignatureFrom(root); err != nil {
			return fmt.Errorf("ca: intermediate %q does not chain to root %q: %w",
				inter.Subject, root.Subject, err)
		}
	}
	if use.Now.IsZero() {
		return nil
	}
	switch {
	case use.Now.Before(inter.NotBefore):
		return fmt.Errorf("ca: intermediate %q is not valid before %s", inter.Subject, inter.NotBefore.UTC().Format(time.RFC3339))
	case use.Now.After(inter.NotAfter):
		return fmt.Errorf("ca: intermediate %q expired at %s", inter.Subject, inter.NotAfter.UTC().Format(time.RFC3339))
	case root != nil && inter.NotAfter.After(root.NotAfter):
		return fmt.Errorf("ca: intermediate %q expires at %s, after its root %q (%s): its certificates would stop verifying with the root before they expire",
			inter.Subject, inter.NotAfter.UTC().Format(time.RFC3339), root.Subject, root.NotAfter.UTC().Format(time.RFC3339))
	}
	return CheckLeafEKUs(inter, use.LeafEKUs, use.Installing)
}

// CheckLeafEKUs checks that inter allows the extended key usages of
// leaves: it names none, or anyExtendedKeyUsage, or them. RFC 5280
// §4.2.1.12 defines the extension for the certificate that carries it;
// relying parties (Go's crypto/x509, NSS, Windows, OpenSSL with a
// purpose) also hold the leaves under a CA to the CA's list, so a leaf
// verifies only for the usages its intermediate allows too. With every,
// each usage must be allowed; without, each source (LeafEKU.By) must have
// one allowed, since its certificates would verify for nothing otherwise.
func CheckLeafEKUs(inter *x509.Certificate, leaves []LeafEKU, every bool) error {
	gaps := LeafEKUGaps(inter, leaves)
	for _, g := range gaps {
		if every || !slices.ContainsFunc(leaves, func(l LeafEKU) bool { return l.By == g.By && !slices.Contains(gaps, l) }) {
			return fmt.Errorf("ca: intermediate %q does not allow the extended key usage %s that %s puts in the certificates it signs (it allows %s): they would fail path validation for it (RFC 5280 §4.2.1.12)",
				inter.Subject, EKUName(g.EKU), g.By, ekuList(inter))
		}
	}
	return nil
}

// LeafEKUGaps are the extended key usages of leaves that inter does not
// allow: a leaf's use for them fails path validation.
func LeafEKUGaps(inter *x509.Certificate, leaves []LeafEKU) []LeafEKU {
	if len(inter.ExtKeyUsage) == 0 && len(inter.UnknownExtKeyUsage) == 0 || slices.Contains(inter.ExtKeyUsage, x509.ExtKeyUsageAny) {
		return nil
	}
	var gaps []LeafEKU
	for _, l := range leaves {
		if !slices.Contains(inter.ExtKeyUsage, l.EKU) {
			gaps = append(gaps, l)
		}
	}
	return gaps
}

// ekuNames are the names of the extended key usages (RFC 5280
// §4.2.1.12) an intermediate is likely to carry.
var ekuNames = map[x509.ExtKeyUsage]string{
	x509.ExtKeyUsageAny: "anyExtendedKeyUsage", x509.ExtKeyUsageServerAuth: "serverAuth",
	x509.ExtKeyUsageClientAuth: "clientAuth", x509.ExtKeyUsageCodeSigning: "codeSigning",
	x509.ExtKeyUsageEmailProtection: "emailProtection", x509.ExtKeyUsageTimeStamping: "timeStamping",
	x509.ExtKeyUsageOCSPSigning: "OCSPSigning",
}

// EKUName names u.
func EKUName(u x509.ExtKeyUsage) string {
	if n, ok := ekuNames[u]; ok {
		return n
	}
	return fmt.Sprintf("extended key usage %d", u)
}

// ekuList lists the extended key usages c names.
func ekuList(c *x509.Certificate) string {
	var names []string
	for _, u := range c.ExtKeyUsage {
		names = append(names, EKUName(u))
	}
	for _, oid := range c.UnknownExtKeyUsage {
		names = append(names, oid.String())
	}
	return strings.Join(names, ", ")
}

// checkIntermediate verifies that cert can act as the issuing CA with key.
func checkIntermediate(cert *x509.Certificate, key crypto.Signer) error {
	if cert == nil {
		return errors.New("ca: intermediate certificate is missing")
	}
	if key == nil {
		return errors.New("ca: intermediate private key is missing")
	}
	pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok {
		return fmt.Errorf("ca: intermediate key of type %T cannot be compared", key)
	}
	if !pub.Equal(cert.PublicKey) {
		return fmt.Errorf("ca: intermediate private key (%T) does not match the public key of certificate %q",
			key.Public(), cert.Subject)
	}
	if !cert.BasicConstraintsValid || !cert.IsCA {
		return fmt.Errorf("ca: intermediate certificate %q is not a CA (basicConstraints cA=FALSE or absent)", cert.Subject)
	}
	if cert.KeyUsage&x509.KeyUsageCertSign == 0 {
		return fmt.Errorf("ca: intermediate certificate %q lacks the keyCertSign key usage", cert.Subject)
	}
	if len(cert.SubjectKeyId) == 0 {
		return fmt.Errorf("ca: intermediate certificate %q has no subject key identifier", cert.Subject)
	}
	return nil
}
