package ca

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"
)

// IssueRequest describes a leaf certificate to sign.
type IssueRequest struct {
	// PublicKey is the subscriber's public key; it must pass the CA's
	// KeyPolicy.
	PublicKey crypto.PublicKey
	// DNSNames and IPAddresses are the subjectAltName entries. At least one
	// name is required.
	DNSNames    []string
	IPAddresses []net.IP
	// NotBefore defaults to the current time truncated to the second, and
	// NotAfter to NotBefore plus the configured Lifetime. Both are clamped
	// to the intermediate's validity period.
	NotBefore, NotAfter time.Time
	// ClientAuth adds the clientAuth extended key usage besides serverAuth.
	ClientAuth bool
}

// Issued is a signed leaf certificate.
type Issued struct {
	DER  []byte
	Cert *x509.Certificate
}

// Issue signs a leaf certificate with the intermediate.
//
// The public key is first checked against the KeyPolicy (errors wrap
// ErrBadKey), and requests without names or with malformed names are
// rejected. The leaf has an empty subject with all names in the
// subjectAltName extension (which is then critical), a random 128-bit
// positive serial, keyUsage digitalSignature (plus keyEncipherment for RSA
// keys), extKeyUsage serverAuth (plus clientAuth if asked), basicConstraints
// cA=FALSE, the intermediate's key identifier as authority key identifier,
// and the configured AIA caIssuers and CRL distribution point URLs. Its
// NotAfter never exceeds the intermediate's.
func (c *CA) Issue(req IssueRequest) (*Issued, error) {
	if err := c.cfg.KeyPolicy.CheckKey(req.PublicKey); err != nil {
		return nil, err
	}
	if len(req.DNSNames)+len(req.IPAddresses) == 0 {
		return nil, errors.New("ca: issue: request has no DNS names or IP addresses")
	}
	for _, name := range req.DNSNames {
		if err := checkDNSName(name); err != nil {
			return nil, fmt.Errorf("ca: issue: %w", err)
		}
	}
	ips := make([]net.IP, 0, len(req.IPAddresses))
	for _, ip := range req.IPAddresses {
		switch {
		case ip.To4() != nil:
			ips = append(ips, ip.To4())
		case len(ip) == net.IPv6len:
			ips = append(ips, slices.Clone(ip))
		default:
			return nil, fmt.Errorf("ca: issue: invalid IP address %v", ip)
		}
	}

	notBefore, notAfter, err := c.validity(req.NotBefore, req.NotAfter)
	if err != nil {
		return nil, err
	}
	serial, err := NewSerial()
	if err != nil {
		return nil, fmt.Errorf("ca: issue: %w", err)
	}

	keyUsage := x509.KeyUsageDigitalSignature
	if _, ok := req.PublicKey.(*rsa.PublicKey); ok {
		keyUsage |= x509.KeyUsageKeyEncipherment
	}
	extKeyUsage := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	if req.ClientAuth {
		extKeyUsage = append(extKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              keyUsage,
		ExtKeyUsage:           extKeyUsage,
		BasicConstraintsValid: true,
		IsCA:                  false,
		DNSNames:              slices.Clone(req.DNSNames),
		IPAddresses:           ips,
		AuthorityKeyId:        c.h.Intermediate.SubjectKeyId,
	}
	if c.cfg.IssuerURL != "" {
		tmpl.IssuingCertificateURL = []string{c.cfg.IssuerURL}
	}
	if c.cfg.CRLURL != "" {
		tmpl.CRLDistributionPoints = []string{c.cfg.CRLURL}
	}

	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.h.Intermediate, req.PublicKey, c.h.IntermediateKey)
	if err != nil {
		return nil, fmt.Errorf("ca: signing certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("ca: parsing issued certificate: %w", err)
	}
	return &Issued{DER: der, Cert: cert}, nil
}

// validity fills in defaults for a leaf's validity period and clamps it to
// the intermediate's.
func (c *CA) validity(notBefore, notAfter time.Time) (time.Time, time.Time, error) {
	if notBefore.IsZero() {
		notBefore = c.now()
	}
	notBefore = notBefore.UTC().Truncate(time.Second)
	if notAfter.IsZero() {
		notAfter = notBefore.Add(c.cfg.Lifetime)
	}
	notAfter = notAfter.UTC().Truncate(time.Second)
	if !notAfter.After(notBefore) {
		return time.Time{}, time.Time{}, fmt.Errorf("ca: issue: notAfter %s is not after notBefore %s",
			notAfter.Format(time.RFC3339), notBefore.Format(time.RFC3339))
	}
	inter := c.h.Intermediate
	if notBefore.Before(inter.NotBefore) {
		notBefore = inter.NotBefore
	}
	if notAfter.After(inter.NotAfter) {
		notAfter = inter.NotAfter
	}
	if !notAfter.After(notBefore) {
		return time.Time{}, time.Time{}, fmt.Errorf("ca: issue: requested validity lies outside the intermediate's (%s to %s)",
			inter.NotBefore.Format(time.RFC3339), inter.NotAfter.Format(time.RFC3339))
	}
	return notBefore, notAfter, nil
}

// checkDNSName accepts host names in preferred name syntax (letters, digits
// and hyphens, labels of 1 to 63 characters, at most 253 characters in all),
// optionally with a leading "*." wildcard label.
func checkDNSName(name string) error {
	if name == "" {
		return errors.New("empty DNS name")
	}
	if len(name) > 253 {
		return fmt.Errorf("DNS name %.20q... is %d characters; at most 253 allowed", name, len(name))
	}
	labels := strings.Split(name, ".")
	for i, label := range labels {
		if i == 0 && label == "*" && len(labels) > 1 {
			continue
		}
		if err := checkLabel(label); err != nil {
			return fmt.Errorf("invalid DNS name %q: %w", name, err)
		}
	}
	return nil
}

// checkLabel validates one DNS label.
func checkLabel(label string) error {
	if label == "" {
		return errors.New("empty label")
	}
	if len(label) > 63 {
		return fmt.Errorf("label of %d characters; at most 63 allowed", len(label))
	}
	if label[0] == '-' || label[len(label)-1] == '-' {
		return fmt.Errorf("label %q starts or ends with a hyphen", label)
	}
	for _, r := range label {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-':
		default:
			return fmt.Errorf("label %q contains %q", label, r)
		}
	}
	return nil
}
