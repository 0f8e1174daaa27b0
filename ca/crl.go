// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// oidIssuingDistributionPoint is id-ce-issuingDistributionPoint.
var oidIssuingDistributionPoint = asn1.ObjectIdentifier{2, 5, 29, 28}

// issuingDistributionPoint is the critical CRL extension
//
//	IssuingDistributionPoint ::= SEQUENCE {
//	    distributionPoint     [0] DistributionPointName OPTIONAL,
//	    onlyContainsUserCerts [1] BOOLEAN DEFAULT FALSE, ... }
//
// with distributionPoint fullName [0] { uniformResourceIdentifier [6] url,
// ... } (every URL the CRL is published at that a certificate names) and
// onlyContainsUserCerts TRUE (RFC 5280 §5.2.5, implicit tags; the CHOICE
// DistributionPointName is tagged explicitly).
func issuingDistributionPoint(urls []string) (pkix.Extension, error) {
	var names []byte
	for _, url := range urls {
		uri, err := asn1.Marshal(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 6, Bytes: []byte(url)})
		if err != nil {
			return pkix.Extension{}, err
		}
		names = append(names, uri...)
	}
	fullName, err := asn1.Marshal(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: names})
	if err != nil {
		return pkix.Extension{}, err
	}
	dp, err := asn1.Marshal(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: fullName})
	if err != nil {
		return pkix.Extension{}, err
	}
	onlyUser := []byte{0x81, 0x01, 0xff}
	value, err := asn1.Marshal(asn1.RawValue{Class: asn1.ClassUniversal, Tag: asn1.TagSequence, IsCompound: true, Bytes: append(dp, onlyUser...)})
	if err != nil {
		return pkix.Extension{}, err
	}
	return pkix.Extension{Id: oidIssuingDistributionPoint, Critical: true, Value: value}, nil
}

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
	return c.ShardCRL(entries, number, thisUpdate, nextUpdate)
}

// ShardCRL is CRL for one partition of the CRLs (RFC 5280 §5.2.5): with
// idpURLs given, the CRL carries a critical issuingDistributionPoint that
// names them as its distribution point, with onlyContainsUserCerts, so
// that it covers only the leaves whose distribution point is one of them
// (the URL it is published at, and any other URL of the same CRL that
// earlier certificates name, Config.CRLAliases).
func (c *CA) ShardCRL(entries []RevokedEntry, number *big.Int, thisUpdate, nextUpdate time.Time, idpURLs ...string) ([]byte, error) {
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
	if len(idpURLs) > 0 {
		ext, err := issuingDistributionPoint(idpURLs)
		if err != nil {
			return nil, err
		}
		tmpl.ExtraExtensions = []pkix.Extension{ext}
	}
	der, err := x509.CreateRevocationList(rand.Reader, tmpl, c.h.Intermediate, c.h.IntermediateKey)
	if err != nil {
		return nil, fmt.Errorf("ca: signing CRL: %w", err)
	}
	return der, nil
}
