// SPDX-License-Identifier: Apache-2.0

package server

import (
	"crypto/x509"
	"log/slog"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ca"
)

// profileMap is the ca.profiles block. A file that sets it replaces the
// default profiles; yaml.v3 would otherwise merge its entries into the
// default map, and a profile could never be removed.
type profileMap map[string]acme.ProfileConfig

// UnmarshalYAML decodes into a fresh map. It is the older unmarshaler
// form on purpose: its callback decodes with the caller's decoder, so
// unknown keys inside a profile stay errors (KnownFields) and type errors
// keep their line numbers for check-config.
func (m *profileMap) UnmarshalYAML(unmarshal func(any) error) error {
	var fresh map[string]acme.ProfileConfig
	if err := unmarshal(&fresh); err != nil {
		return err
	}
	*m = fresh
	return nil
}

// The default profile names.
const (
	profileTLSServer       = "tls-server"
	profileTLSClientServer = "tls-client-server"
	profileShortLived      = "shortlived"
)

// defaultProfiles are the profiles offered with no ca.profiles block;
// configdoc.go shows them. tls-server, the default, issues what weir
// issued before profiles existed: ca.certificate-lifetime, serverAuth, no
// CN.
func defaultProfiles() profileMap {
	week := 7 * 24 * time.Hour
	both := func() []acme.IdentifierType { return []acme.IdentifierType{acme.IdentifierDNS, acme.IdentifierIP} }
	return profileMap{
		profileTLSServer: {
			Description: "TLS server certificate: serverAuth, DNS names and IP addresses in the SAN only",
			KeyUsages:   []acme.KeyUsage{acme.KeyUsageServerAuth}, IdentifierTypes: both(), CommonName: ca.CommonNameNone,
		},
		profileTLSClientServer: {
			Description: "TLS client and server certificate for mutual TLS: serverAuth and clientAuth, CN = the first DNS name",
			KeyUsages:   []acme.KeyUsage{acme.KeyUsageServerAuth, acme.KeyUsageClientAuth}, IdentifierTypes: both(),
			CommonName: ca.CommonNameFirstName,
		},
		profileShortLived: {
			Description:         "Short-lived TLS server certificate: 7 days, serverAuth, SAN only",
			CertificateLifetime: &week,
			KeyUsages:           []acme.KeyUsage{acme.KeyUsageServerAuth}, IdentifierTypes: both(), CommonName: ca.CommonNameNone,
		},
	}
}

// newProfiles compiles the ca.default-profile and ca.profiles keys;
// profiles without a certificate-lifetime get ca.certificate-lifetime.
func newProfiles(c CAConfig) (*acme.Profiles, error) {
	return acme.NewProfiles(c.DefaultProfile, c.Profiles, c.CertificateLifetime)
}

// intermediateUse is what the intermediate of issuer id is loaded for at
// now (ca.CheckIntermediate): the one ca.active-issuer names signs new
// certificates (issuingUse); the others sign the CRL of those they signed.
func intermediateUse(cfg Config, id string, now time.Time) (ca.Use, error) {
	if id != cfg.CA.ActiveIssuer {
		return ca.Use{}, nil
	}
	return issuingUse(cfg, now)
}

// issuingUse is what an intermediate that signs new certificates under
// cfg at now is checked for: valid now, not past its root, allowing the
// extended key usages of the certificates it signs (leafEKUs).
func issuingUse(cfg Config, now time.Time) (ca.Use, error) {
	ps, err := newProfiles(cfg.CA)
	if err != nil {
		return ca.Use{}, err
	}
	return ca.Use{Now: now, LeafEKUs: leafEKUs(cfg, ps)}, nil
}

// leafEKUs are the extended key usages of the certificates the active
// issuer signs under cfg with the profiles ps: the profiles' and, when
// weir makes its own HTTPS certificate (server.tls empty), that one's.
func leafEKUs(cfg Config, ps *acme.Profiles) []ca.LeafEKU {
	ekus := ps.LeafEKUs()
	if cfg.Server.TLS.CertFile == "" {
		ekus = append(ekus, ca.LeafEKU{EKU: ca.DefaultExtKeyUsage, By: "weir's own HTTPS certificate (server.tls empty)"})
	}
	return ekus
}

// warnProfiles logs the profiles whose certificates the intermediate
// cannot cover for their whole lifetime from now (they are cut short at
// the intermediate's expiry), and the extended key usages of its
// certificates, ekus, that it does not allow (ca.LeafEKUGaps: they verify
// for the others only).
func warnProfiles(log *slog.Logger, ps *acme.Profiles, ekus []ca.LeafEKU, inter *x509.Certificate, now time.Time) {
	if inter == nil {
		return
	}
	for _, g := range ca.LeafEKUGaps(inter, ekus) {
		log.Warn("the intermediate does not allow an extended key usage that its certificates carry; they fail path validation for that usage (RFC 5280 §4.2.1.12)",
			"key", g.By, "extended_key_usage", ca.EKUName(g.EKU), "intermediate", inter.Subject.String())
	}
	left := inter.NotAfter.Sub(now)
	for _, name := range ps.Names() {
		p, _ := ps.Get(name)
		if p.Lifetime > left {
			log.Warn("a profile's certificate lifetime reaches beyond the intermediate's expiry; its certificates will end with the intermediate",
				"key", "ca.profiles."+name+".certificate-lifetime", "lifetime", p.Lifetime,
				"intermediate_not_after", inter.NotAfter.UTC().Format(time.RFC3339))
		}
	}
}
