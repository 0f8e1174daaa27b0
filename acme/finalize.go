// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"bytes"
	"context"
	"crypto"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/weir-pki/weir/ca"
)

// csrIdentifiers checks a CSR's signature (its algorithm and that it
// verifies: ca.CheckCSRSignature) and returns its names as canonical,
// sorted identifiers: the DNS and IP SANs plus a subject CN, which must
// also be among the SANs. Other SAN types are refused (RFC 8555 §7.4: the
// CSR must only ask for the order's identifiers).
func csrIdentifiers(csr *x509.CertificateRequest) ([]Identifier, *Problem) {
	if err := ca.CheckCSRSignature(csr); err != nil {
		return nil, NewProblem(ProbBadCSR, "%v", err)
	}
	if len(csr.EmailAddresses) > 0 || len(csr.URIs) > 0 {
		return nil, NewProblem(ProbBadCSR, "the CSR asks for e-mail or URI names; only DNS names and IP addresses are issued")
	}
	var raw []Identifier
	for _, n := range csr.DNSNames {
		raw = append(raw, Identifier{Type: IdentifierDNS, Value: n})
	}
	for _, ip := range csr.IPAddresses {
		raw = append(raw, Identifier{Type: IdentifierIP, Value: ip.String()})
	}
	idents, p := canonicalIdentifiers(raw)
	if p != nil {
		return nil, NewProblem(ProbBadCSR, "the CSR has an invalid name: %s", p.Detail)
	}
	if cn := csr.Subject.CommonName; cn != "" {
		var id Identifier
		if ip := net.ParseIP(cn); ip != nil {
			id = Identifier{Type: IdentifierIP, Value: cn}
		} else {
			id = Identifier{Type: IdentifierDNS, Value: cn}
		}
		c, p := canonicalIdentifier(id)
		if p != nil || !containsIdent(idents, c) {
			return nil, NewProblem(ProbBadCSR, "the CSR's common name %q is not one of its subject alternative names", cn)
		}
	}
	if len(idents) == 0 {
		return nil, NewProblem(ProbBadCSR, "the CSR has no DNS names or IP addresses")
	}
	return idents, nil
}

func containsIdent(list []Identifier, id Identifier) bool {
	for _, x := range list {
		if x == id {
			return true
		}
	}
	return false
}

// diffIdentifiers describes how got differs from want.
func diffIdentifiers(want, got []Identifier) string {
	var missing, extra []string
	for _, w := range want {
		if !containsIdent(got, w) {
			missing = append(missing, w.Value)
		}
	}
	for _, g := range got {
		if !containsIdent(want, g) {
			extra = append(extra, g.Value)
		}
	}
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "missing "+strings.Join(missing, ", "))
	}
	if len(extra) > 0 {
		parts = append(parts, "not in the order: "+strings.Join(extra, ", "))
	}
	return strings.Join(parts, "; ")
}

// Finalize checks the CSR of a ready order, issues the certificate and
// stores it before returning the now-valid order (RFC 8555 §7.4). The
// order's move from pending to processing is compare-and-set, so of many
// concurrent finalize calls exactly one issues. The move stores the CSR
// and leases the issuance to this replica (acme/lease.go): if it dies
// before the certificate is stored, another replica issues from the stored
// CSR once the lease ends. A repeat of the finalize request that moved the
// order (the same CSR), such as a client's retry after a lost response or
// a 5xx, gets the order as it now is instead of orderNotReady. The order
// is admitted again under the CA's policy, profiles and tenant in force,
// and its authorizations checked again (readmitOrder): one they no longer
// admit gets new-order's problem, and one with an authorization that no
// longer counts (fulfilled by a challenge type no longer allowed, or
// under a zone no longer delegated) gets that authorization's; either
// becomes invalid, and nothing is spent or issued.
func (s *Service) Finalize(ctx context.Context, c Caller, orderID OrderID, csrDER []byte) (*Order, error) {
	// A ready order's authorizations were all read to derive its status:
	// readmitOrder checks them again without reading them twice.
	o, authzs, err := s.getOrder(ctx, c, orderID)
	if err != nil {
		return nil, err
	}
	if o.Status == StatusProcessing || o.Status == StatusValid {
		if len(o.CSR) > 0 && bytes.Equal(o.CSR, csrDER) {
			return o, nil
		}
	}
	if o.Status != StatusReady {
		p := NewProblem(ProbOrderNotReady, "order %s is %s, not ready; it cannot be finalized", o.ID, o.Status)
		p.Status = http.StatusForbidden
		return nil, p
	}
	csr, err := x509.ParseCertificateRequest(csrDER)
	if err != nil {
		return nil, NewProblem(ProbBadCSR, "the CSR cannot be parsed: %v", err)
	}
	idents, p := csrIdentifiers(csr)
	if p != nil {
		return nil, p
	}
	if !sameIdentifiers(idents, o.Identifiers) {
		return nil, NewProblem(ProbBadCSR, "the CSR's names do not equal the order's identifiers: %s", diffIdentifiers(o.Identifiers, idents))
	}
	if err := s.ca.Config().KeyPolicy.CheckKey(csr.PublicKey); err != nil {
		return nil, NewProblem(ProbBadCSR, "the CSR's public key is not acceptable: %v", err)
	}
	if sameKey(csr.PublicKey, c.Key) {
		return nil, NewProblem(ProbBadCSR, "the CSR's public key is the account key; use a separate key for the certificate")
	}
	// A finalize with a good CSR, before anything is spent or leased: an
	// order the rules in force no longer admit can never be finalized, so
	// it becomes invalid (RFC 8555 §7.1.6) rather than stay ready until it
	// expires.
	adm, p, err := s.readmitOrder(ctx, o, c.Account, authzs)
	if err != nil {
		return nil, Internal(err)
	}
	if p != nil {
		s.failOrder(ctx, o, StatusPending, p, "marking an order the CA's policy no longer admits invalid")
		return nil, p
	}
	refund, err := s.limits.Finalize(ctx, c.Account, o)
	if err != nil {
		return nil, err
	}
	if err := s.store.StartFinalize(ctx, o.ID, s.cfg.Owner, csrDER, s.now().UTC(), s.cfg.ValidationLease); err != nil {
		refund()
		if errors.Is(err, ErrConflict) {
			p := NewProblem(ProbOrderNotReady, "order %s is already being finalized", o.ID)
			p.Status = http.StatusForbidden
			return nil, p
		}
		return nil, Internal(err)
	}
	o.Status, o.CSR = StatusProcessing, csrDER
	return s.completeFinalize(WithActor(ctx, callerActor(c)), o, csr, adm, refund)
}

// completeFinalize issues the certificate of o, in processing and leased
// to this replica, for csr under profile, and stores it with the order
// made valid. A CA that refuses to sign makes the order invalid and
// refunds what its finalization spent; a CA whose key is unavailable
// (ca.ErrSignerUnavailable) leaves it processing, for a replica to issue
// once its lease ends, and answers 503 with a Retry-After. A store that cannot be written leaves the
// order processing: its lease ends and a replica issues it again (the
// certificate signed here was never stored nor sent, so it does not
// exist for anyone). When another replica stored a certificate first, its
// order is returned.
func (s *Service) completeFinalize(ctx context.Context, o *Order, csr *x509.CertificateRequest, adm admission, refund func()) (*Order, error) {
	cert, err := s.issue(o, csr, adm)
	if errors.Is(err, ca.ErrSignerUnavailable) {
		// The CA's key failed, not the request: the order stays
		// processing and leased, and a replica issues it once the lease
		// ends and the key is back (claimFinalizations); what the
		// finalization spent stays spent, as the certificate will be
		// issued.
		return nil, signerUnavailable(o.ID, err)
	}
	if err != nil {
		refund()
		s.failOrder(ctx, o, StatusProcessing, Internal(err), "marking order invalid after failed issuance")
		return nil, Internal(fmt.Errorf("finalize order %s: %w", o.ID, err))
	}
	cert.RenewalStart, cert.RenewalEnd = s.renewalWindow(cert.Serial, o.AccountID, len(o.Identifiers), cert.NotBefore, cert.NotAfter)
	if cert.LogEntry, err = s.issuedEntry(ctx, cert, adm.tenant); err != nil {
		// The certificate could not be logged, so it is not stored: as
		// a failed issuance.
		refund()
		s.failOrder(ctx, o, StatusProcessing, Internal(err), "marking order invalid after its log entry failed")
		return nil, Internal(fmt.Errorf("finalize order %s: %w", o.ID, err))
	}
	err = s.store.FinalizeOrder(ctx, cert)
	if err != nil {
		// Not stored (or, if a commit failed after all, the planner's
		// next refresh reads it back).
		s.unplace(cert)
	}
	if errors.Is(err, ErrConflict) {
		cur, gerr := s.store.GetOrder(ctx, o.ID)
		switch {
		case gerr != nil:
			return nil, Internal(fmt.Errorf("finalize order %s: %w; reading it again: %w", o.ID, err, gerr))
		case cur.Status == StatusValid:
			// A replica that took the finalization over stored its
			// certificate first.
			return cur, nil
		case cur.Status == StatusProcessing && o.Replaces != "":
			// Another renewal of the same certificate became valid first.
			refund()
			s.failOrder(ctx, o, StatusProcessing, alreadyReplaced(o.Replaces), "marking order invalid after a concurrent replacement")
			return nil, alreadyReplaced(o.Replaces)
		case cur.Status == StatusInvalid && cur.Error != nil:
			return nil, cur.Error
		}
	}
	if err != nil {
		return nil, Internal(fmt.Errorf("finalize order %s: storing the certificate: %w", o.ID, err))
	}
	o.Status, o.CertSerial = StatusValid, cert.Serial
	s.observer.Issued(cert, cert.IssuedAt.Sub(o.CreatedAt))
	s.audit.Issued(ctx, cert, o, s.actorOf(ctx))
	return o, nil
}

// signerRetryAfter is the Retry-After of a finalization that waits for
// the CA's key: a poll of the order after it sees whether a replica has
// issued it since.
const signerRetryAfter = 5 * time.Second

// signerUnavailable is the problem of a finalization the CA's key could
// not sign: 503 serverInternal with a Retry-After; the order stays
// processing.
func signerUnavailable(id OrderID, cause error) *Problem {
	return &Problem{Type: ProbServerInternal, Status: http.StatusServiceUnavailable, RetryAfter: signerRetryAfter,
		Detail: fmt.Sprintf("the CA's signing key is unavailable; order %s stays processing and is issued once the key is back: poll it", id),
		Cause:  fmt.Errorf("finalize order %s: %w", id, cause)}
}

// failOrder moves o from its stored status from (pending or processing)
// to invalid with problem p, logging what failed under msg.
func (s *Service) failOrder(ctx context.Context, o *Order, from Status, p *Problem, msg string) {
	o.Status, o.Error = StatusInvalid, p
	if err := s.store.UpdateOrder(ctx, o, from); err != nil {
		s.log.Error(msg, "order", o.ID, "err", err)
	}
}

// resumeFinalize completes the finalization of o, a processing order this
// replica claimed because the replica finalizing it stopped before storing
// the certificate: it issues from the stored CSR, as Finalize would have,
// once the rules in force now admit the order again (the CA's policy or
// profiles may have changed since). An order without a usable CSR, or
// that they no longer admit, becomes invalid and nothing is issued.
func (s *Service) resumeFinalize(ctx context.Context, o *Order) {
	nothing := func() {}
	csr, err := x509.ParseCertificateRequest(o.CSR)
	if err != nil {
		s.failOrder(ctx, o, StatusProcessing, NewProblem(ProbServerInternal, "the finalization of this order was interrupted and cannot be resumed; create a new order"),
			"marking an interrupted finalization invalid")
		s.log.Warn("an interrupted finalization has no usable CSR; the order is invalid", "order", o.ID, "err", err)
		return
	}
	adm, p, err := s.readmitOrder(ctx, o, nil, nil)
	if err != nil {
		// The order stays processing: its lease ends and a replica
		// tries again.
		s.log.Error("reading the tenant of an interrupted finalization", "order", o.ID, "err", err)
		return
	}
	if p != nil {
		s.failOrder(ctx, o, StatusProcessing, p, "marking an interrupted finalization invalid")
		s.log.Warn("the CA's policy no longer admits an interrupted finalization; the order is invalid and nothing is issued",
			"order", o.ID, "problem", p.Detail)
		return
	}
	if _, err := s.completeFinalize(ctx, o, csr, adm, nothing); err != nil {
		s.log.Error("resuming an interrupted finalization", "order", o.ID, "err", err)
		return
	}
	s.log.Info("issued the certificate of a finalization a stopped replica left", "order", o.ID)
}

// issue signs the certificate of o for the CSR's key under the admission's
// profile (nil: the CA's defaults), its lifetime cut to the tenant's cap,
// backdated as the live rules say unless the order asked for a validity
// period (RFC 8555 §7.4: that is kept as asked).
func (s *Service) issue(o *Order, csr *x509.CertificateRequest, adm admission) (*Certificate, error) {
	profile := adm.profile
	req := ca.IssueRequest{PublicKey: csr.PublicKey, NotBefore: o.NotBefore, NotAfter: o.NotAfter, Backdate: s.rules().Backdate}
	for _, id := range o.Identifiers {
		if id.Type == IdentifierIP {
			req.IPAddresses = append(req.IPAddresses, net.ParseIP(id.Value))
		} else {
			req.DNSNames = append(req.DNSNames, id.Value)
		}
	}
	profileRequest(&req, profile, csr)
	if c := adm.lifetimeCap; c > 0 && (req.Lifetime == 0 || req.Lifetime > c) {
		req.Lifetime = c
	}
	iss, err := s.ca.Issue(req)
	if err != nil {
		return nil, err
	}
	return &Certificate{
		Serial: ca.SerialHex(iss.Cert.SerialNumber), AccountID: o.AccountID, OrderID: o.ID,
		DER: iss.DER, ChainPEM: s.ca.ChainPEM(iss.DER), Names: IdentifierValues(o.Identifiers),
		NotBefore: iss.Cert.NotBefore, NotAfter: iss.Cert.NotAfter, IssuedAt: s.now().UTC(),
		Profile: profile.name(), Issuer: s.activeIssuer(), CRLShard: iss.CRLShard, Validations: adm.validations,
	}, nil
}

// sameKey reports whether two public keys are equal.
func sameKey(a, b crypto.PublicKey) bool {
	if a == nil || b == nil {
		return false
	}
	eq, ok := a.(interface{ Equal(x crypto.PublicKey) bool })
	return ok && eq.Equal(b)
}
