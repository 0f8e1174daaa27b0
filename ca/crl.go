package ca

import (
	"crypto/rand"
	"crypto/x509"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// RevokedEntry is one revoked certificate to list in a CRL.
type RevokedEntry struct {
	Serial    *big.Int
	RevokedAt time.Time
	Reason    int // RFC 5280 reason code; see ValidReason
}

// CRL returns a DER-encoded X.509 v2 CRL signed by the intermediate, with
// the given CRL number and thisUpdate/nextUpdate times. Each entry carries
// its reason code (omitted for unspecified, as RFC 5280 recommends), and
// the authority key identifier is taken from the intermediate.
func (c *CA) CRL(entries []RevokedEntry, number *big.Int, thisUpdate, nextUpdate time.Time) ([]byte, error) {
	if number == nil || number.Sign() < 0 {
		return nil, errors.New("ca: CRL number must be a non-negative integer")
	}
	if thisUpdate.IsZero() {
		return nil, errors.New("ca: CRL thisUpdate is zero")
	}
	if !nextUpdate.After(thisUpdate) {
		return nil, fmt.Errorf("ca: CRL nextUpdate %s is not after thisUpdate %s",
			nextUpdate.Format(time.RFC3339), thisUpdate.Format(time.RFC3339))
	}
	revoked := make([]x509.RevocationListEntry, 0, len(entries))
	for i, e := range entries {
		if e.Serial == nil || e.Serial.Sign() <= 0 {
			return nil, fmt.Errorf("ca: CRL entry %d: serial must be positive", i)
		}
		if e.RevokedAt.IsZero() {
			return nil, fmt.Errorf("ca: CRL entry %d (serial %s): revocation time is zero", i, SerialHex(e.Serial))
		}
		if !ValidReason(e.Reason) {
			return nil, fmt.Errorf("ca: CRL entry %d (serial %s): invalid reason code %d", i, SerialHex(e.Serial), e.Reason)
		}
		revoked = append(revoked, x509.RevocationListEntry{
			SerialNumber:   e.Serial,
			RevocationTime: e.RevokedAt.UTC(),
			ReasonCode:     e.Reason,
		})
	}
	tmpl := &x509.RevocationList{
		Number:                    number,
		ThisUpdate:                thisUpdate.UTC(),
		NextUpdate:                nextUpdate.UTC(),
		RevokedCertificateEntries: revoked,
	}
	der, err := x509.CreateRevocationList(rand.Reader, tmpl, c.h.Intermediate, c.h.IntermediateKey)
	if err != nil {
		return nil, fmt.Errorf("ca: signing CRL: %w", err)
	}
	return der, nil
}
