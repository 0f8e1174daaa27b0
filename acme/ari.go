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

// ParseCertID splits an ARI certificate identifier into the issuer's key
// identifier and the serial in weir's hex form.
func ParseCertID(id string) (aki []byte, serial string, p *Problem) {
	a, s, ok := strings.Cut(id, ".")
	if !ok || a == "" || s == "" || strings.ContainsAny(id, "=+/") {
		return nil, "", Malformed("%q is not an ARI certificate identifier (base64url(AKI).base64url(serial), RFC 9773 §4.1)", id)
	}
	aki, err1 := base64.RawURLEncoding.DecodeString(a)
	raw, err2 := base64.RawURLEncoding.DecodeString(s)
	if err1 != nil || err2 != nil || len(raw) == 0 || len(raw) > 21 {
		return nil, "", Malformed("%q is not an ARI certificate identifier: bad base64url or serial length", id)
	}
	// DER INTEGER content: no redundant leading zero, not negative.
	if raw[0]&0x80 != 0 || (len(raw) > 1 && raw[0] == 0 && raw[1]&0x80 == 0) {
		return nil, "", Malformed("%q is not an ARI certificate identifier: the serial is not a minimal positive DER integer", id)
	}
	return aki, ca.SerialHex(new(big.Int).SetBytes(raw)), nil
}

// certByID finds the certificate an ARI identifier names: the serial must
// exist and its issuer's key identifier must match.
func (s *Service) certByID(ctx context.Context, id string) (*Certificate, *Problem) {
	aki, serial, p := ParseCertID(id)
	if p != nil {
		return nil, p
	}
	if id != canonicalCertID(aki, serial) {
		return nil, Malformed("%q is not an ARI certificate identifier in canonical form", id)
	}
	cert, err := s.store.GetCertificate(ctx, serial)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, NotFound("no certificate %s was issued by this CA", id)
		}
		return nil, Internal(err)
	}
	leaf, err := x509.ParseCertificate(cert.DER)
	if err != nil {
		return nil, Internal(err)
	}
	if !bytes.Equal(leaf.AuthorityKeyId, aki) {
		return nil, NotFound("no certificate %s was issued by this CA (the authority key identifier differs)", id)
	}
	return cert, nil
}

// canonicalCertID re-encodes a parsed identifier.
func canonicalCertID(aki []byte, serial string) string {
	n, _ := new(big.Int).SetString(serial, 16)
	return base64.RawURLEncoding.EncodeToString(aki) + "." + base64.RawURLEncoding.EncodeToString(serialOctets(n))
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
// day; close to it, often enough not to miss it.
const (
	ariPollFar  = 6 * time.Hour
	ariPollNear = time.Hour
)

// RenewalInfo returns the suggested renewal window of the certificate an
// ARI identifier names. A revoked certificate's window is in the past, so
// clients renew at once (RFC 9773 §4.2).
func (s *Service) RenewalInfo(ctx context.Context, certID string) (*RenewalInfo, error) {
	cert, p := s.certByID(ctx, certID)
	if p != nil {
		return nil, p
	}
	now := s.now().UTC()
	ri := &RenewalInfo{}
	switch {
	case cert.Revoked():
		ri.Start, ri.End = cert.RevokedAt.Add(-2*time.Hour), cert.RevokedAt.Add(-time.Hour)
		ri.ExplanationURL = s.ariConfig().ExplanationURL
	case !cert.RenewalStart.IsZero():
		ri.Start, ri.End = cert.RenewalStart, cert.RenewalEnd
		if !ri.End.After(now) && s.ariConfig().ExplanationURL != "" {
			ri.ExplanationURL = s.ariConfig().ExplanationURL
		}
	default:
		ri.Start, ri.End = defaultWindow(cert.NotBefore, cert.NotAfter)
	}
	switch {
	case now.Before(ri.Start):
		ri.RetryAfter = min(ariPollFar, max(ri.Start.Sub(now), time.Minute))
	case now.Before(ri.End):
		ri.RetryAfter = ariPollNear
	default:
		ri.RetryAfter = ariPollFar
	}
	return ri, nil
}

// defaultWindow is the window of a certificate the planner never placed:
// from two thirds of its lifetime, 1/45 of the lifetime wide (two days for
// 90 days).
func defaultWindow(nb, na time.Time) (time.Time, time.Time) {
	life := na.Sub(nb)
	start := nb.Add(life * 2 / 3)
	return start, start.Add(max(life/45, time.Minute))
}

// checkReplaces validates an order's replaces field (RFC 9773 §5): the
// certificate exists, belongs to the account, shares an identifier with
// the order, and was not already replaced (409 alreadyReplaced). It
// returns the identifier, which the order stores.
func (s *Service) checkReplaces(ctx context.Context, acct *Account, certID string, idents []Identifier) (string, bool, *Problem) {
	id, p := s.checkReplacesCert(ctx, acct, certID, idents)
	if p != nil {
		return "", false, p
	}
	return certID, urgentReplacement(id), nil
}

func (s *Service) checkReplacesCert(ctx context.Context, acct *Account, certID string, idents []Identifier) (*Certificate, *Problem) {
	cert, p := s.certByID(ctx, certID)
	if p != nil {
		if p.Type == ProbMalformed || p.Status == http.StatusNotFound {
			return nil, Malformed("replaces: %s", p.Detail)
		}
		return nil, p
	}
	if cert.AccountID != acct.ID {
		return nil, Malformed("replaces: certificate %s belongs to another account", certID)
	}
	shared := false
	for _, id := range idents {
		for _, n := range cert.Names {
			shared = shared || id.Value == n
		}
	}
	if !shared {
		return nil, Malformed("replaces: certificate %s shares no identifier with this order", certID)
	}
	if _, err := s.store.ReplacingOrder(ctx, certID); err == nil {
		return nil, alreadyReplaced(certID)
	} else if !errors.Is(err, ErrNotFound) {
		return nil, Internal(err)
	}
	return cert, nil
}

func alreadyReplaced(certID string) *Problem {
	p := NewProblem(ProbAlreadyReplaced, "certificate %s has already been replaced by a renewal", certID)
	p.Status = http.StatusConflict
	return p
}
