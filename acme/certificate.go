// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/weir-pki/weir/ca"
)

// GetCertificate returns an issued certificate by its hex serial. Issued
// certificates are public, so any valid account may fetch one.
func (s *Service) GetCertificate(ctx context.Context, c Caller, serial string) (*Certificate, error) {
	if p := requireAccount(c); p != nil {
		return nil, p
	}
	cert, err := s.store.GetCertificate(ctx, serial)
	if err != nil {
		return nil, storeErr(err, "certificate %s", serial)
	}
	return cert, nil
}

// RevokeRequest is the payload of revokeCert (RFC 8555 §7.6).
type RevokeRequest struct {
	Certificate string `json:"certificate"`
	Reason      *int   `json:"reason,omitempty"`
}

// Revoke revokes a certificate (RFC 8555 §7.6). A kid-signed request must
// come from the account that ordered it or one holding valid authorizations
// for all its names; a jwk-signed request must be signed by the
// certificate's own key.
func (s *Service) Revoke(ctx context.Context, c Caller, der []byte, reason int) error {
	if !ca.SubscriberReason(reason) {
		return subscriberReasonProblem(reason)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return Malformed("the certificate to revoke cannot be parsed: %v", err)
	}
	serial := ca.SerialHex(leaf.SerialNumber)
	cert, err := s.store.GetCertificate(ctx, serial)
	if err != nil || string(cert.DER) != string(der) {
		if err != nil && !errors.Is(err, ErrNotFound) {
			return Internal(err)
		}
		return NotFound("certificate %s was not issued by this CA", serial)
	}
	if p := s.mayRevoke(ctx, c, cert, leaf); p != nil {
		return p
	}
	return s.markRevoked(WithActor(ctx, callerActor(c)), cert, reason)
}

// subscriberReasonProblem refuses a reason a subscriber may not give
// (ca.SubscriberReasons), naming the ones it may.
func subscriberReasonProblem(code int) *Problem {
	may := make([]string, len(ca.SubscriberReasons))
	for i, r := range ca.SubscriberReasons {
		may[i] = fmt.Sprintf("%s (%d)", ca.ReasonString(r), r)
	}
	return NewProblem(ProbBadRevocationReason, "revocation reason %d%s is not one a subscriber may give; use %s (Baseline Requirements §7.2.2)",
		code, reasonName(code), strings.Join(may, ", "))
}

// operatorReasonProblem is nil when an operator may revoke with code
// (ca.OperatorReason), else the problem that says why not.
func operatorReasonProblem(code int) *Problem {
	switch {
	case ca.OperatorReason(code):
		return nil
	case ca.ValidReason(code):
		return NewProblem(ProbBadRevocationReason, "revocation reason %d%s cannot be used: a revocation is permanent, so a hold (certificateHold) could never be lifted (removeFromCRL)", code, reasonName(code))
	default:
		return NewProblem(ProbBadRevocationReason, "revocation reason %d is not an RFC 5280 reason code (§5.3.1)", code)
	}
}

// reasonName is " (name)" for an RFC 5280 reason code, else "".
func reasonName(code int) string {
	if !ca.ValidReason(code) {
		return ""
	}
	return " (" + ca.ReasonString(code) + ")"
}

// revoked is what follows every revocation once the store has recorded
// it, whichever path revoked (ACME revokeCert or an administrator): the
// renewal planner drops its window, the limiter frees the
// duplicate-certificate slot and the observer counts it. The CRL is not
// made here: the updater (acme/crl), or the next read with CRLDelay
// 0, sees the store's revocation count move.
func (s *Service) revoked(ctx context.Context, cert *Certificate, reason int, at time.Time) {
	cert.RevokedAt, cert.RevocationReason = at, reason
	s.unplan(cert)
	s.limits.Revoked(ctx, cert)
	s.observer.Revoked(cert, reason)
	s.audit.Revoked(ctx, cert, reason, s.actorOf(ctx))
}

func (s *Service) mayRevoke(ctx context.Context, c Caller, cert *Certificate, leaf *x509.Certificate) *Problem {
	if c.Account == nil {
		if sameKey(leaf.PublicKey, c.Key) {
			return nil
		}
		return Unauthorized("the request is signed by neither an account nor the certificate's key")
	}
	if p := requireAccount(c); p != nil {
		return p
	}
	if cert.AccountID == c.Account.ID {
		return nil
	}
	// RFC 8555 §7.6: an account that holds authorizations for every name.
	for _, name := range cert.Names {
		id := Identifier{Type: IdentifierDNS, Value: name}
		if ip := net.ParseIP(name); ip != nil {
			id.Type = IdentifierIP
		}
		base, wildcard := id.SplitWildcard()
		if _, err := s.store.FindValidAuthz(ctx, c.Account.ID, base, wildcard, s.now()); err != nil {
			return Unauthorized("account %s did not order certificate %s and holds no valid authorization for %s", c.Account.ID, cert.Serial, name)
		}
	}
	return nil
}
