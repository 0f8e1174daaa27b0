// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// The root's CRL, an authority revocation list: the root signs only
// intermediates, and lists there those it revoked (a retired intermediate
// whose key leaked, say), so that a relying party that checks every CA of
// a chain (openssl verify -crl_check_all) refuses their leaves, and the
// root stays trusted. It is signed in an offline ceremony with the root's
// key (weir ca sign-root-crl); weir only serves the file.

// rootCRLIDP is the root CRL's critical issuingDistributionPoint:
//
//	IssuingDistributionPoint ::= SEQUENCE { onlyContainsCACerts [2] BOOLEAN TRUE }
//
// (RFC 5280 §5.2.5: a CRL whose scope is only CA certificates says so).
// It names no distributionPoint: the CRL covers every certificate the
// root signed, whatever distribution point it names, and the
// intermediates made before they named one.
var rootCRLIDP = pkix.Extension{Id: oidIssuingDistributionPoint, Critical: true, Value: []byte{0x30, 0x03, 0x82, 0x01, 0xff}}

// DefaultRootCRLValidity is how long a root CRL is valid when the
// ceremony says nothing else: a year, so that the offline root key comes
// out once a year (weir warns a month ahead), and no more, as the CA/Browser
// Forum's Baseline Requirements (§4.9.7) allow for the CRL of a root
// about its subordinate CAs. A relying party refuses the CRL after its
// nextUpdate, and then every chain under the root.
const DefaultRootCRLValidity = 365 * 24 * time.Hour

// RootCRLRequest is one signing of the root's CRL.
type RootCRLRequest struct {
	// Previous is the root's last CRL (ParseRootCRL), nil for the
	// first: its entries are kept, and the new CRL's number is one more
	// than its.
	Previous *x509.RevocationList
	// Revoke are the intermediates to add, revoked at Now with Reason;
	// one listed already keeps its entry.
	Revoke []*x509.Certificate
	Reason int
	// Now is thisUpdate (zero: time.Now).
	Now time.Time
	// Validity is nextUpdate − thisUpdate (zero: DefaultRootCRLValidity).
	Validity time.Duration
}

// SignRootCRL signs the root's next CRL with rootKey, as req says, and
// returns its DER and the intermediates it added. Each intermediate to
// revoke must be a CA certificate that root signed (not root itself); the
// reason one an operator may give (OperatorReason: keyCompromise,
// cACompromise, superseded, cessationOfOperation, ...).
func SignRootCRL(root *x509.Certificate, rootKey crypto.Signer, req RootCRLRequest) ([]byte, []*x509.Certificate, error) {
	if root == nil || rootKey == nil {
		return nil, nil, errors.New("ca: signing the root's CRL: the root and its key are both needed")
	}
	pub, ok := rootKey.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(root.PublicKey) {
		return nil, nil, fmt.Errorf("ca: the root key does not match the public key of root %q", root.Subject)
	}
	if len(req.Revoke) > 0 && !OperatorReason(req.Reason) {
		return nil, nil, fmt.Errorf("ca: %s is not a reason to revoke an intermediate with", ReasonString(req.Reason))
	}
	if req.Now.IsZero() {
		req.Now = time.Now()
	}
	if req.Validity == 0 {
		req.Validity = DefaultRootCRLValidity
	}
	if req.Validity < 0 {
		return nil, nil, fmt.Errorf("ca: the root CRL's validity %s is negative", req.Validity)
	}
	now := req.Now.UTC().Truncate(time.Second)
	number := big.NewInt(1)
	var entries []x509.RevocationListEntry
	listed := map[string]bool{}
	if p := req.Previous; p != nil {
		if p.Number == nil {
			return nil, nil, errors.New("ca: the previous root CRL has no number")
		}
		number.Add(p.Number, big.NewInt(1))
		for _, e := range p.RevokedCertificateEntries {
			entries = append(entries, x509.RevocationListEntry{SerialNumber: e.SerialNumber, RevocationTime: e.RevocationTime, ReasonCode: e.ReasonCode})
			listed[e.SerialNumber.String()] = true
		}
	}
	var added []*x509.Certificate
	for _, c := range req.Revoke {
		switch {
		case bytes.Equal(c.Raw, root.Raw):
			return nil, nil, fmt.Errorf("ca: %q is the root itself: a root is not revoked on its own CRL, it is distrusted", c.Subject)
		case !c.IsCA || !bytes.Equal(c.RawIssuer, root.RawSubject) || c.CheckSignatureFrom(root) != nil:
			return nil, nil, fmt.Errorf("ca: %q (serial %s) is not an intermediate signed by root %q", c.Subject, SerialHex(c.SerialNumber), root.Subject)
		case listed[c.SerialNumber.String()]:
			continue
		}
		listed[c.SerialNumber.String()] = true
		entries = append(entries, x509.RevocationListEntry{SerialNumber: c.SerialNumber, RevocationTime: now, ReasonCode: req.Reason})
		added = append(added, c)
	}
	der, err := x509.CreateRevocationList(rand.Reader, &x509.RevocationList{
		Number: number, ThisUpdate: now, NextUpdate: now.Add(req.Validity),
		RevokedCertificateEntries: entries, ExtraExtensions: []pkix.Extension{rootCRLIDP},
	}, root, rootKey)
	if err != nil {
		return nil, nil, fmt.Errorf("ca: signing the root's CRL: %w", err)
	}
	return der, added, nil
}

// ParseRootCRL parses der, a CRL that must be root's: issued by its name
// and signed by its key. Whether it is past its nextUpdate is the
// caller's to say.
func ParseRootCRL(der []byte, root *x509.Certificate) (*x509.RevocationList, error) {
	rl, err := x509.ParseRevocationList(der)
	if err != nil {
		return nil, fmt.Errorf("ca: the root CRL: %w", err)
	}
	if !bytes.Equal(rl.RawIssuer, root.RawSubject) {
		return nil, fmt.Errorf("ca: the CRL is issued by %q, not by the root %q", rl.Issuer, root.Subject)
	}
	if err := rl.CheckSignatureFrom(root); err != nil {
		return nil, fmt.Errorf("ca: the CRL is not signed by the root %q: %w", root.Subject, err)
	}
	if rl.NextUpdate.IsZero() {
		return nil, errors.New("ca: the root CRL has no nextUpdate")
	}
	return rl, nil
}
