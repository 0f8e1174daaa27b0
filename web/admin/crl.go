// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"context"
	"crypto/x509"
	"fmt"
	"time"

	"github.com/weir-pki/weir/ca"
)

// CRLView describes the current CRL.
type CRLView struct {
	Number     string     `json:"number"`
	ThisUpdate time.Time  `json:"this_update"`
	NextUpdate time.Time  `json:"next_update"`
	Issuer     string     `json:"issuer"`
	Entries    []CRLEntry `json:"entries"`
	URL        string     `json:"url,omitempty"`
}

// CRLEntry is one revoked certificate on the CRL.
type CRLEntry struct {
	Serial    string    `json:"serial"`
	RevokedAt time.Time `json:"revoked_at"`
	Reason    string    `json:"reason"`
}

// CRL describes the current CRL, the one the ACME listener serves: made
// anew when there is none yet or when a certificate was revoked since, by
// any replica.
func (s *Server) CRL(ctx context.Context) (*CRLView, []byte, error) {
	der, _, err := s.cfg.Service.CurrentCRL(ctx)
	if err != nil {
		return nil, nil, err
	}
	rl, err := x509.ParseRevocationList(der)
	if err != nil {
		return nil, nil, fmt.Errorf("admin: parsing the CRL: %w", err)
	}
	v := &CRLView{ThisUpdate: rl.ThisUpdate.UTC(), NextUpdate: rl.NextUpdate.UTC(), Issuer: rl.Issuer.String(), Entries: []CRLEntry{}}
	if rl.Number != nil {
		v.Number = rl.Number.String()
	}
	for _, e := range rl.RevokedCertificateEntries {
		v.Entries = append(v.Entries, CRLEntry{Serial: ca.SerialHex(e.SerialNumber), RevokedAt: e.RevocationTime.UTC(), Reason: ca.ReasonString(e.ReasonCode)})
	}
	return v, der, nil
}
