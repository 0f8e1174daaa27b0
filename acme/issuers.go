// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"fmt"
	"regexp"
	"slices"

	"github.com/weir-pki/weir/ca"
)

// Issuer is one of the CA's issuing intermediates (ca.issuers). One, the
// active one, signs new certificates; every one signs the CRL of the
// certificates it signed, at its own URL, until it is taken out of the
// configuration (after its last certificate expired).
type Issuer struct {
	// ID names it in the store (Certificate.Issuer), in its CRL's URL and
	// in the configuration: IssuerIDPattern.
	ID string
	// CA signs with its intermediate.
	CA *ca.CA
}

// IssuerIDPattern is the form of an issuer's ID: lowercase letters,
// digits and hyphens, a letter or digit first, at most 32 characters.
var IssuerIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)

// checkIssuers checks the issuers of Deps: each with a CA and an ID of
// the pattern, no ID twice, and the active CA one of them.
func checkIssuers(issuers []Issuer, active *ca.CA) error {
	seen := map[string]bool{}
	found := false
	for i, is := range issuers {
		if !IssuerIDPattern.MatchString(is.ID) {
			return fmt.Errorf("acme: issuer %d: ID %q is not of the form %s", i, is.ID, IssuerIDPattern)
		}
		if seen[is.ID] {
			return fmt.Errorf("acme: issuer ID %q is given twice", is.ID)
		}
		seen[is.ID] = true
		if is.CA == nil {
			return fmt.Errorf("acme: issuer %q has no CA", is.ID)
		}
		found = found || is.CA == active
	}
	if !found {
		return fmt.Errorf("acme: the active CA is none of the issuers")
	}
	return nil
}

// issuerList is the Service's issuers: Deps.Issuers, or the one CA as
// DefaultIssuer.
func (s *Service) issuerList() []Issuer {
	if len(s.issuers) > 0 {
		return s.issuers
	}
	return []Issuer{{ID: DefaultIssuer, CA: s.ca}}
}

// activeIssuer is the ID of the issuer of new certificates.
func (s *Service) activeIssuer() string {
	for _, is := range s.issuerList() {
		if is.CA == s.ca {
			return is.ID
		}
	}
	return DefaultIssuer
}

// Issuers returns the IDs of the issuers, in the configured order, and
// which one is active.
func (s *Service) Issuers() (ids []string, active string) {
	for _, is := range s.issuerList() {
		ids = append(ids, is.ID)
	}
	return ids, s.activeIssuer()
}

// IssuerOrDefault is the issuer a certificate's Issuer id names:
// DefaultIssuer for "" (a certificate stored before issuers were kept).
func IssuerOrDefault(id string) string {
	if id == "" {
		return DefaultIssuer
	}
	return id
}

// issuerCA returns the CA of issuer id, or nil.
func (s *Service) issuerCA(id string) *ca.CA {
	id = IssuerOrDefault(id)
	for _, is := range s.issuerList() {
		if is.ID == id {
			return is.CA
		}
	}
	return nil
}

// renewEarly reports whether the holders of the certificates of issuer
// id are told to renew now (Live.RenewEarly).
func (s *Service) renewEarly(id string) bool {
	id = IssuerOrDefault(id)
	return slices.Contains(s.rules().RenewEarly, id)
}

// IssuerCertificate returns the DER of issuer id's intermediate (the
// target of its certificates' AIA caIssuers URL), or nil for an unknown
// issuer; "" means the default issuer (DefaultURLIssuer).
func (s *Service) IssuerCertificate(id string) []byte {
	if id == "" {
		id = s.DefaultURLIssuer()
	}
	if c := s.issuerCA(id); c != nil {
		return c.Hierarchy().Intermediate.Raw
	}
	return nil
}

// DefaultURLIssuer is the issuer of the URLs that name none
// (/ca/crl.der, /ca/intermediate.der), which the certificates of a
// single-issuer weir name: DefaultIssuer while it is configured, else the
// active one.
func (s *Service) DefaultURLIssuer() string { return s.crlDefaultIssuer() }

// CRLShards is the number of CRL shards of issuer id whose CRLs are made
// and served (0: its one CRL), kept ones included.
func (s *Service) CRLShards(id string) int {
	if c := s.issuerCA(id); c != nil {
		return c.Config().CRLShards()
	}
	return 0
}
