// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
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
	// NotBefore defaults to the current time truncated to the second,
	// less Backdate, and NotAfter to NotBefore plus the lifetime
	// (Lifetime, or the configured Config.Lifetime when that is zero).
	// Both are clamped to the intermediate's validity period.
	NotBefore, NotAfter time.Time
	// Backdate moves a default NotBefore back from the signing time, so
	// that a client whose clock runs a little slow accepts a certificate
	// it was just issued; NotAfter, NotBefore plus the lifetime, moves
	// back with it, so the lifetime stays the same. It applies only when
	// NotBefore and NotAfter are both zero (a requested validity period
	// is kept as asked), cut to BackdateLimit of the lifetime.
	Backdate time.Duration
	// Lifetime, when positive, is both the default and the longest
	// validity period of this certificate (a profile's lifetime): a
	// NotAfter further than Lifetime from NotBefore is pulled in. Zero
	// means Config.Lifetime, as the default only.
	Lifetime time.Duration
	// ExtKeyUsages are the leaf's extended key usages: serverAuth,
	// clientAuth, or both, in the order given. Empty means serverAuth.
	ExtKeyUsages []x509.ExtKeyUsage
	// CommonName decides the subject common name; empty means
	// CommonNameNone.
	CommonName CommonNamePolicy
}

// CommonNamePolicy decides whether a leaf's subject carries a common name.
type CommonNamePolicy string

// The common-name policies.
const (
	// CommonNameNone leaves the subject empty: every name is in the
	// subjectAltName extension, which is then critical (RFC 5280
	// §4.2.1.6).
	CommonNameNone CommonNamePolicy = "none"
	// CommonNameFirstName sets the subject CN to the first DNS name of
	// the request that fits the 64 characters RFC 5280 allows
	// (ub-common-name); without one the subject stays empty. The name
	// stays in the subjectAltName extension too, where verifiers look.
	CommonNameFirstName CommonNamePolicy = "first-name"
)

// maxCommonName is ub-common-name (RFC 5280 Appendix A.1).
const maxCommonName = 64

// Issued is a signed leaf certificate.
type Issued struct {
	DER  []byte
	Cert *x509.Certificate
	// CRLShard is the shard of the CRLs whose URL is its distribution
	// point (Config.CRLShardURLs); 0 without shards.
	CRLShard int
}

// Issue signs a leaf certificate with the intermediate.
//
// The public key is first checked against the KeyPolicy (errors wrap
// ErrBadKey), and requests without names or with malformed names are
// rejected. The leaf has all names in the subjectAltName extension and an
// empty subject (the SAN extension is then critical) or, under
// CommonNameFirstName, a subject CN; a random 128-bit positive serial,
// keyUsage digitalSignature (plus keyEncipherment for RSA keys),
// extKeyUsage as asked (serverAuth by default), basicConstraints
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

	extKeyUsage, err := leafExtKeyUsages(req.ExtKeyUsages)
	if err != nil {
		return nil, err
	}
	subject, err := leafSubject(req.CommonName, req.DNSNames)
	if err != nil {
		return nil, err
	}
	if req.Lifetime < 0 || req.Backdate < 0 {
		return nil, fmt.Errorf("ca: issue: lifetime %v and backdate %v must not be negative", req.Lifetime, req.Backdate)
	}
	notBefore, notAfter, err := c.validity(req.NotBefore, req.NotAfter, req.Lifetime, req.Backdate)
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
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               subject,
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
	shard := CRLShard(serial, len(c.cfg.CRLShardURLs))
	switch {
	case shard > 0:
		tmpl.CRLDistributionPoints = []string{c.cfg.CRLShardURLs[shard-1]}
	case c.cfg.CRLURL != "":
		tmpl.CRLDistributionPoints = []string{c.cfg.CRLURL}
	}

	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.h.Intermediate, req.PublicKey, c.key)
	if err != nil {
		return nil, fmt.Errorf("ca: signing certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("ca: parsing issued certificate: %w", err)
	}
	return &Issued{DER: der, Cert: cert, CRLShard: shard}, nil
}

// CRLShard is the CRL shard of a leaf with serial when there are n
// shards: 1 + (serial mod n), or 0 when n is 0.
func CRLShard(serial *big.Int, n int) int {
	if n <= 0 {
		return 0
	}
	return 1 + int(new(big.Int).Mod(serial, big.NewInt(int64(n))).Int64())
}

// MaxBackdate bounds a leaf's backdate: the backdate of the root and
// intermediate weir generates, so that a leaf never starts before a
// brand-new intermediate.
const MaxBackdate = caBackdate

// BackdateLimit is the most a leaf of lifetime life is backdated: half
// its lifetime, so at least half of it lies after the signing (a
// lifetime cut short, by a tenant's cap say, is never spent before the
// certificate exists), and at most MaxBackdate.
func BackdateLimit(life time.Duration) time.Duration { return min(MaxBackdate, life/2) }

// validity fills in defaults for a leaf's validity period (a default
// notBefore backdated), keeps it within lifetime when that is set, and
// clamps it to the intermediate's.
func (c *CA) validity(notBefore, notAfter time.Time, lifetime, backdate time.Duration) (time.Time, time.Time, error) {
	life := lifetime
	if life == 0 {
		life = c.cfg.Lifetime
	}
	if notBefore.IsZero() {
		notBefore = c.now().UTC().Truncate(time.Second)
		if notAfter.IsZero() {
			notBefore = notBefore.Add(-min(backdate, BackdateLimit(life)))
		}
	}
	notBefore = notBefore.UTC().Truncate(time.Second)
	if notAfter.IsZero() {
		notAfter = notBefore.Add(life)
	}
	notAfter = notAfter.UTC().Truncate(time.Second)
	if !notAfter.After(notBefore) {
		return time.Time{}, time.Time{}, fmt.Errorf("ca: issue: notAfter %s is not after notBefore %s",
			notAfter.Format(time.RFC3339), notBefore.Format(time.RFC3339))
	}
	if lifetime > 0 && notAfter.Sub(notBefore) > lifetime {
		notAfter = notBefore.Add(lifetime).Truncate(time.Second)
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

// DefaultExtKeyUsage is the extended key usage of a leaf whose request
// names none.
const DefaultExtKeyUsage = x509.ExtKeyUsageServerAuth

// leafExtKeyUsages checks the requested extended key usages: serverAuth
// and clientAuth are the only ones a leaf of this CA may carry, each at
// most once. None means DefaultExtKeyUsage.
func leafExtKeyUsages(req []x509.ExtKeyUsage) ([]x509.ExtKeyUsage, error) {
	if len(req) == 0 {
		return []x509.ExtKeyUsage{DefaultExtKeyUsage}, nil
	}
	out := make([]x509.ExtKeyUsage, 0, len(req))
	for _, u := range req {
		if u != x509.ExtKeyUsageServerAuth && u != x509.ExtKeyUsageClientAuth {
			return nil, fmt.Errorf("ca: issue: extended key usage %d is not offered; only serverAuth and clientAuth are", u)
		}
		if slices.Contains(out, u) {
			return nil, fmt.Errorf("ca: issue: extended key usage %d is listed twice", u)
		}
		out = append(out, u)
	}
	return out, nil
}

// leafSubject is the subject the common-name policy gives a leaf for its
// DNS names.
func leafSubject(policy CommonNamePolicy, dnsNames []string) (pkix.Name, error) {
	switch policy {
	case "", CommonNameNone:
		return pkix.Name{}, nil
	case CommonNameFirstName:
		for _, n := range dnsNames {
			if len(n) <= maxCommonName {
				return pkix.Name{CommonName: n}, nil
			}
		}
		return pkix.Name{}, nil
	default:
		return pkix.Name{}, fmt.Errorf("ca: issue: common-name policy %q is not one of %q, %q", policy, CommonNameNone, CommonNameFirstName)
	}
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
