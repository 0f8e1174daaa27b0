package acme

import (
	"context"
	"crypto"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/weir-pki/weir/ca"
)

// CSRIdentifiers checks a CSR's signature and returns its names as
// canonical, sorted identifiers: the DNS and IP SANs plus a subject CN,
// which must also be among the SANs. Other SAN types are refused (RFC 8555
// §7.4: the CSR must only ask for the order's identifiers).
func CSRIdentifiers(csr *x509.CertificateRequest) ([]Identifier, *Problem) {
	if err := csr.CheckSignature(); err != nil {
		return nil, NewProblem(ProbBadCSR, "the CSR signature is invalid: %v", err)
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
	idents, p := CanonicalIdentifiers(raw)
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
		c, p := CanonicalIdentifier(id)
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
// concurrent finalize calls exactly one issues.
func (s *Service) Finalize(ctx context.Context, c Caller, orderID string, csrDER []byte) (*Order, error) {
	o, err := s.GetOrder(ctx, c, orderID)
	if err != nil {
		return nil, err
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
	idents, p := CSRIdentifiers(csr)
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
	profile, p := s.orderProfile(o)
	if p != nil {
		return nil, p
	}
	refund, err := s.lim().Finalize(ctx, c.Account, o)
	if err != nil {
		return nil, err
	}
	o.Status = StatusProcessing
	if err := s.store.UpdateOrder(ctx, o, StatusPending); err != nil {
		refund()
		if errors.Is(err, ErrConflict) {
			p := NewProblem(ProbOrderNotReady, "order %s is already being finalized", o.ID)
			p.Status = http.StatusForbidden
			return nil, p
		}
		return nil, Internal(err)
	}
	cert, err := s.issue(o, csr, profile)
	if err == nil {
		cert.RenewalStart, cert.RenewalEnd = s.renewalWindow(ctx, o.AccountID, len(o.Identifiers), cert.NotBefore, cert.NotAfter)
		err = s.store.FinalizeOrder(ctx, cert)
		if errors.Is(err, ErrConflict) && o.Replaces != "" {
			// Another renewal of the same certificate became valid first.
			refund()
			o.Status, o.Error = StatusInvalid, alreadyReplaced(o.Replaces)
			if uerr := s.store.UpdateOrder(ctx, o, StatusProcessing); uerr != nil {
				s.log.Error("marking order invalid after a concurrent replacement", "order", o.ID, "err", uerr)
			}
			return nil, alreadyReplaced(o.Replaces)
		}
	}
	if err != nil {
		refund()
		o.Status, o.Error = StatusInvalid, Internal(err)
		if uerr := s.store.UpdateOrder(ctx, o, StatusProcessing); uerr != nil {
			s.log.Error("marking order invalid after failed issuance", "order", o.ID, "err", uerr)
		}
		return nil, Internal(fmt.Errorf("finalize order %s: %w", o.ID, err))
	}
	o.Status, o.CertSerial = StatusValid, cert.Serial
	s.obs().Issued(cert, cert.IssuedAt.Sub(o.CreatedAt))
	return o, nil
}

// issue signs the certificate of o for the CSR's key under profile (nil:
// the CA's defaults).
func (s *Service) issue(o *Order, csr *x509.CertificateRequest, profile *Profile) (*Certificate, error) {
	req := ca.IssueRequest{PublicKey: csr.PublicKey, NotBefore: o.NotBefore, NotAfter: o.NotAfter}
	for _, id := range o.Identifiers {
		if id.Type == IdentifierIP {
			req.IPAddresses = append(req.IPAddresses, net.ParseIP(id.Value))
		} else {
			req.DNSNames = append(req.DNSNames, id.Value)
		}
	}
	profileRequest(&req, profile, csr)
	iss, err := s.ca.Issue(req)
	if err != nil {
		return nil, err
	}
	return &Certificate{
		Serial: ca.SerialHex(iss.Cert.SerialNumber), AccountID: o.AccountID, OrderID: o.ID,
		DER: iss.DER, ChainPEM: s.ca.ChainPEM(iss.DER), Names: IdentifierValues(o.Identifiers),
		NotBefore: iss.Cert.NotBefore, NotAfter: iss.Cert.NotAfter, IssuedAt: s.now().UTC(),
		Profile: profile.name(),
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
