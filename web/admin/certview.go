// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"crypto/x509"
	"encoding/pem"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ca"
)

// CertView is a certificate as administrators see it.
type CertView struct {
	Serial    string     `json:"serial"`
	Account   string     `json:"account"`
	Order     string     `json:"order"`
	Names     []string   `json:"names"`
	State     string     `json:"state"`
	NotBefore time.Time  `json:"not_before"`
	NotAfter  time.Time  `json:"not_after"`
	IssuedAt  time.Time  `json:"issued_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
	Reason    string     `json:"revocation_reason,omitempty"`
	// Subject, Issuer, PEM and Validations are filled for one
	// certificate.
	Subject string `json:"subject,omitempty"`
	Issuer  string `json:"issuer,omitempty"`
	PEM     string `json:"pem,omitempty"`
	// Validations are how each name was validated, as stored at
	// issuance; null for a certificate issued before they were recorded
	// (unknown).
	Validations *[]acme.NameValidation `json:"validations,omitempty"`
}

// ValidationsKnown reports whether the certificate's validations are
// known: it was issued since they are recorded.
func (v CertView) ValidationsKnown() bool { return v.Validations != nil && *v.Validations != nil }

// NameValidations are the certificate's validations, nil when unknown.
func (v CertView) NameValidations() []acme.NameValidation {
	if v.Validations == nil {
		return nil
	}
	return *v.Validations
}

func certState(c *acme.Certificate, now time.Time) acme.CertState {
	switch {
	case c.Revoked():
		return acme.CertRevoked
	case !c.NotAfter.After(now):
		return acme.CertExpired
	}
	return acme.CertActive
}

func certView(c *acme.Certificate, now time.Time, full bool) CertView {
	v := CertView{Serial: c.Serial, Account: string(c.AccountID), Order: string(c.OrderID), Names: c.Names, State: string(certState(c, now)),
		NotBefore: c.NotBefore, NotAfter: c.NotAfter, IssuedAt: c.IssuedAt}
	if c.Revoked() {
		at := c.RevokedAt
		v.RevokedAt, v.Reason = &at, ca.ReasonString(c.RevocationReason)
	}
	if full {
		if leaf, err := x509.ParseCertificate(c.DER); err == nil {
			v.Subject, v.Issuer = leaf.Subject.String(), leaf.Issuer.String()
		}
		v.PEM = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.DER}))
		v.Validations = &c.Validations
	}
	return v
}
