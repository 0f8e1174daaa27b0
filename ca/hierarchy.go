// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"time"
)

// Validity periods and clock-skew allowance used by GenerateHierarchy.
const (
	rootValidity         = 10 * 365 * 24 * time.Hour
	intermediateValidity = 5 * 365 * 24 * time.Hour
	caBackdate           = time.Hour
)

// Hierarchy is a CA's certificates and keys. RootKey may be nil when the root
// is kept offline or the intermediate was supplied externally; Root may be
// nil when only the intermediate is known.
type Hierarchy struct {
	Root            *x509.Certificate
	RootKey         crypto.Signer
	Intermediate    *x509.Certificate
	IntermediateKey crypto.Signer
}

// GenerateHierarchy makes a new two-level hierarchy for the organisation
// name: an ECDSA P-384 root valid for 10 years and an ECDSA P-256
// intermediate valid for 5 years, both with notBefore one hour before now to
// tolerate clock skew. A zero now means time.Now().
//
// The root has subject CN "<name> Root CA", O=name, is a CA with keyCertSign
// and cRLSign, and a path length limit of 1. The intermediate has subject CN
// "<name> Intermediate CA", O=name, is a CA with path length 0, keyCertSign,
// cRLSign and digitalSignature, and is restricted to the serverAuth and
// clientAuth extended key usages. Both carry 128-bit random serials and
// subject key identifiers.
func GenerateHierarchy(name string, now time.Time) (*Hierarchy, error) {
	return GenerateConstrainedHierarchy(name, now, NameConstraints{})
}

// GenerateConstrainedHierarchy is GenerateHierarchy with the name
// constraints nc on both the root and the intermediate (none when nc is
// the zero value).
func GenerateConstrainedHierarchy(name string, now time.Time, nc NameConstraints) (*Hierarchy, error) {
	return GenerateHierarchyWith(name, now, HierarchyOptions{NameConstraints: nc})
}

// HierarchyOptions shape a generated hierarchy.
type HierarchyOptions struct {
	// NameConstraints go into both the root and the intermediate (none
	// when zero).
	NameConstraints NameConstraints
	// RootCRLURL is where the root's CRL is published (SignRootCRL): the
	// intermediate names it as its CRL distribution point, so that its
	// revocation can be checked. Empty: none.
	RootCRLURL string
}

// GenerateHierarchyWith is GenerateHierarchy shaped by o.
func GenerateHierarchyWith(name string, now time.Time, o HierarchyOptions) (*Hierarchy, error) {
	nc := o.NameConstraints
	if name == "" {
		return nil, errors.New("ca: generating hierarchy: name is empty")
	}
	if err := nc.Validate(); err != nil {
		return nil, err
	}
	if now.IsZero() {
		now = time.Now()
	}
	now = now.UTC().Truncate(time.Second)
	notBefore := now.Add(-caBackdate)

	rootKey, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("ca: generating root key: %w", err)
	}
	rootTmpl, err := caTemplate(name+" Root CA", name, &rootKey.PublicKey, notBefore, notBefore.Add(rootValidity))
	if err != nil {
		return nil, fmt.Errorf("ca: root template: %w", err)
	}
	rootTmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	rootTmpl.MaxPathLen = 1
	nc.apply(rootTmpl)
	rootDER, err := x509.CreateCertificate(rand.Reader, rootTmpl, rootTmpl, &rootKey.PublicKey, rootKey)
	if err != nil {
		return nil, fmt.Errorf("ca: signing root certificate: %w", err)
	}
	root, err := x509.ParseCertificate(rootDER)
	if err != nil {
		return nil, fmt.Errorf("ca: parsing root certificate: %w", err)
	}

	intKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("ca: generating intermediate key: %w", err)
	}
	intTmpl, err := intermediateTemplate(pkix.Name{CommonName: name + " Intermediate CA", Organization: []string{name}},
		&intKey.PublicKey, root, notBefore, notBefore.Add(intermediateValidity), o.RootCRLURL)
	if err != nil {
		return nil, err
	}
	nc.apply(intTmpl)
	intDER, err := x509.CreateCertificate(rand.Reader, intTmpl, root, &intKey.PublicKey, rootKey)
	if err != nil {
		return nil, fmt.Errorf("ca: signing intermediate certificate: %w", err)
	}
	intermediate, err := x509.ParseCertificate(intDER)
	if err != nil {
		return nil, fmt.Errorf("ca: parsing intermediate certificate: %w", err)
	}

	return &Hierarchy{
		Root:            root,
		RootKey:         rootKey,
		Intermediate:    intermediate,
		IntermediateKey: intKey,
	}, nil
}

// intermediateTemplate is an intermediate for pub under root: a CA with
// path length 0, keyCertSign, cRLSign and digitalSignature, restricted to
// the serverAuth and clientAuth extended key usages, naming the root's
// CRL at rootCRLURL (when set) as its CRL distribution point.
func intermediateTemplate(subject pkix.Name, pub crypto.PublicKey, root *x509.Certificate, notBefore, notAfter time.Time, rootCRLURL string) (*x509.Certificate, error) {
	tmpl, err := caTemplate("", "", pub, notBefore, notAfter)
	if err != nil {
		return nil, fmt.Errorf("ca: intermediate template: %w", err)
	}
	tmpl.Subject = subject
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature
	tmpl.MaxPathLen = 0
	tmpl.MaxPathLenZero = true
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	tmpl.AuthorityKeyId = root.SubjectKeyId
	if rootCRLURL != "" {
		tmpl.CRLDistributionPoints = []string{rootCRLURL}
	}
	return tmpl, nil
}

// caTemplate returns the fields common to the root and intermediate.
func caTemplate(cn, org string, pub crypto.PublicKey, notBefore, notAfter time.Time) (*x509.Certificate, error) {
	serial, err := NewSerial()
	if err != nil {
		return nil, err
	}
	ski, err := SubjectKeyID(pub)
	if err != nil {
		return nil, err
	}
	return &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: cn, Organization: []string{org}},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		BasicConstraintsValid: true,
		IsCA:                  true,
		SubjectKeyId:          ski,
	}, nil
}

// SubjectKeyID computes a subject key identifier for pub using RFC 7093
// method 1: the leftmost 160 bits of the SHA-256 hash of the
// subjectPublicKey BIT STRING.
func SubjectKeyID(pub crypto.PublicKey) ([]byte, error) {
	spki, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("ca: marshalling public key: %w", err)
	}
	var info struct {
		Algorithm pkix.AlgorithmIdentifier
		PublicKey asn1.BitString
	}
	if _, err := asn1.Unmarshal(spki, &info); err != nil {
		return nil, fmt.Errorf("ca: decoding SubjectPublicKeyInfo: %w", err)
	}
	sum := sha256.Sum256(info.PublicKey.Bytes)
	return sum[:20], nil
}

// LoadHierarchy assembles a Hierarchy from existing material, once
// CheckIntermediate accepts it for use. The returned Hierarchy has a nil
// RootKey.
func LoadHierarchy(root, intermediate *x509.Certificate, intermediateKey crypto.Signer, use Use) (*Hierarchy, error) {
	if err := CheckIntermediate(root, intermediate, intermediateKey, use); err != nil {
		return nil, err
	}
	return &Hierarchy{
		Root:            root,
		Intermediate:    intermediate,
		IntermediateKey: intermediateKey,
	}, nil
}
