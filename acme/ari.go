// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"math/big"
	"net/http"
	"strings"
	"time"

	"github.com/weir-pki/weir/acme/renewal"
	"github.com/weir-pki/weir/ca"
)

// ACME Renewal Information (RFC 9773): the server tells each client when to
// renew, and a renewal names the certificate it replaces.

// CertID returns the ARI certificate identifier of leaf (RFC 9773 §4.1):
// base64url of its Authority Key Identifier's keyIdentifier, ".", and
// base64url of the DER encoding of its serial number's content octets.
func CertID(leaf *x509.Certificate) string {
	return base64.RawURLEncoding.EncodeToString(leaf.AuthorityKeyId) + "." +
		base64.RawURLEncoding.EncodeToString(serialOctets(leaf.SerialNumber))
}

// serialOctets is the content of a DER INTEGER for a positive n: big-endian,
// with a leading zero octet when the high bit is set.
func serialOctets(n *big.Int) []byte {
	b := n.Bytes()
	if len(b) == 0 || b[0]&0x80 != 0 {
		b = append([]byte{0}, b...)
	}
	return b
}

// parseCertID splits an ARI certificate identifier into the issuer's key
// identifier and the serial in weir's hex form. RFC 9773 §4.1 asks for the
// content octets of the serial's DER INTEGER, which for a serial whose
// high bit is set begin with a zero octet; a serial given without that
// octet (Apache mod_md sends it so) is accepted too: read as unsigned, as
// serials are positive (RFC 5280 §4.1.2.2), it names the same serial.
// Anything else is malformed: base64url that does not re-encode to the
// same text (padding, line breaks, set bits past the data), a redundant
// leading zero octet, or a serial longer than 20 octets.
func parseCertID(id string) (aki []byte, serial string, p *Problem) {
	a, s, ok := strings.Cut(id, ".")
	if !ok || a == "" || s == "" || strings.ContainsAny(id, "=+/") {
		return nil, "", Malformed("%q is not an ARI certificate identifier (base64url(AKI).base64url(serial), RFC 9773 §4.1)", id)
	}
	aki, err1 := base64.RawURLEncoding.DecodeString(a)
	raw, err2 := base64.RawURLEncoding.DecodeString(s)
	if err1 != nil || err2 != nil || len(raw) == 0 || len(raw) > 21 {
		return nil, "", Malformed("%q is not an ARI certificate identifier: bad base64url or serial length", id)
	}
	if base64.RawURLEncoding.EncodeToString(aki) != a || base64.RawURLEncoding.EncodeToString(raw) != s {
		return nil, "", Malformed("%q is not an ARI certificate identifier in canonical base64url", id)
	}
	// A zero octet is there only to keep the next one's high bit from
	// reading as a sign.
	if len(raw) > 1 && raw[0] == 0 && raw[1]&0x80 == 0 {
		return nil, "", Malformed("%q is not an ARI certificate identifier: the serial has a redundant leading zero octet", id)
	}
	if len(raw) == 21 && raw[0] != 0 {
		return nil, "", Malformed("%q is not an ARI certificate identifier: the serial is longer than 20 octets", id)
	}
	return aki, ca.SerialHex(new(big.Int).SetBytes(raw)), nil
}

// certByID finds the certificate an ARI identifier names: the serial must
// exist and its issuer's key identifier must match. It returns the
// certificate's identifier as CertID makes it, whichever of the accepted
// forms id was.
func (s *Service) certByID(ctx context.Context, id string) (*Certificate, string, *Problem) {
	aki, serial, p := parseCertID(id)
	if p != nil {
		return nil, "", p
	}
	cert, err := s.store.GetCertificate(ctx, serial)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, "", NotFound("no certificate %s was issued by this CA", id)
		}
		return nil, "", Internal(err)
	}
	leaf, err := x509.ParseCertificate(cert.DER)
	if err != nil {
		return nil, "", Internal(err)
	}
	if !bytes.Equal(leaf.AuthorityKeyId, aki) {
		return nil, "", NotFound("no certificate %s was issued by this CA (the authority key identifier differs)", id)
	}
	return cert, CertID(leaf), nil
}

// RenewalInfo is the answer of the renewalInfo resource (RFC 9773 §4.2).
type RenewalInfo struct {
	Start, End time.Time
	// ExplanationURL explains an unusual window (an incident); may be "".
	ExplanationURL string
	// RetryAfter is when the client should ask again.
	RetryAfter time.Duration
}

// renewalInfo polling intervals: far from the window clients check twice a
// day; close to it, often enough not to miss it. A short lifetime polls
// more often (ariPolls): a sixteenth of the lifetime, at least ariPollMin.
const (
	ariPollFar  = 6 * time.Hour
	ariPollNear = time.Hour
	ariPollMin  = time.Minute
)

// ariPolls are the polling intervals for a certificate of lifetime life:
// far from its window and near or in it. A 90-day certificate polls every
// 6 hours and every hour; a 24-hour one every 90 minutes and every hour;
// one of 10 to 16 minutes every minute, so that a window moved into the
// past (renew-early, an incident) is seen within a minute.
func ariPolls(life time.Duration) (far, near time.Duration) {
	far = min(ariPollFar, max(life/16, ariPollMin))
	return far, min(ariPollNear, far)
}

// RenewalInfo returns the suggested renewal window of the certificate an
// ARI identifier names. A revoked certificate's window is in the past, so
// clients renew at once (RFC 9773 §4.2).
func (s *Service) RenewalInfo(ctx context.Context, certID string) (*RenewalInfo, error) {
	cert, _, p := s.certByID(ctx, certID)
	if p != nil {
		return nil, p
	}
	now := s.now().UTC()
	explanation := s.rules().ARI.ExplanationURL
	ri := &RenewalInfo{}
	switch {
	case cert.Revoked():
		ri.Start, ri.End = cert.RevokedAt.Add(-2*time.Hour), cert.RevokedAt.Add(-time.Hour)
		ri.ExplanationURL = explanation
	case s.renewEarly(cert.Issuer) && cert.NotAfter.After(now):
		// A retired issuer's: renew now, as in an incident.
		ri.Start, ri.End = incidentWindow(now)
		ri.ExplanationURL = explanation
	case !cert.RenewalStart.IsZero():
		ri.Start, ri.End = cert.RenewalStart, cert.RenewalEnd
		if !ri.End.After(now) {
			ri.ExplanationURL = explanation
		}
	default:
		ri.Start, ri.End = renewal.DefaultWindow(cert.NotBefore, cert.NotAfter)
	}
	far, near := ariPolls(cert.NotAfter.Sub(cert.NotBefore))
	switch {
	case now.Before(ri.Start):
		ri.RetryAfter = min(far, max(ri.Start.Sub(now), ariPollMin))
	case now.Before(ri.End):
		ri.RetryAfter = near
	default:
		ri.RetryAfter = far
	}
	return ri, nil
}

// checkReplaces validates an order's replaces field (RFC 9773 §5): the
// certificate exists, belongs to the account, shares an identifier with
// the order, and was not already replaced (409 alreadyReplaced). It
// returns the certificate's identifier in CertID's form, which the order
// stores, so that each certificate has one identifier to be replaced by.
func (s *Service) checkReplaces(ctx context.Context, acct *Account, certID string, idents []Identifier) (string, bool, *Problem) {
	cert, canon, p := s.certByID(ctx, certID)
	if p != nil {
		if p.Type == ProbMalformed || p.Status == http.StatusNotFound {
			return "", false, Malformed("replaces: %s", p.Detail)
		}
		return "", false, p
	}
	if cert.AccountID != acct.ID {
		return "", false, Malformed("replaces: certificate %s belongs to another account", certID)
	}
	shared := false
	for _, id := range idents {
		for _, n := range cert.Names {
			shared = shared || id.Value == n
		}
	}
	if !shared {
		return "", false, Malformed("replaces: certificate %s shares no identifier with this order", certID)
	}
	if _, err := s.store.ReplacingOrder(ctx, canon); err == nil {
		return "", false, alreadyReplaced(certID)
	} else if !errors.Is(err, ErrNotFound) {
		return "", false, Internal(err)
	}
	return canon, s.urgentReplacement(cert), nil
}

func alreadyReplaced(certID string) *Problem {
	p := NewProblem(ProbAlreadyReplaced, "certificate %s has already been replaced by a renewal", certID)
	p.Status = http.StatusConflict
	return p
}
