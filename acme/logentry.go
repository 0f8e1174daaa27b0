// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"fmt"
	"time"

	"github.com/weir-pki/weir/acme/transparency"
)

// The verifiable log's entries of what the use cases do (Config.Log). An
// entry is built before the store call that records the act and written
// by it, in its transaction (transparency.Store): the certificate stored
// without its entry, or a revocation recorded without its own, cannot
// happen.

// issuedEntry is the log entry of cert's issuance to the order's tenant
// (""for none), or nil when the log is off.
func (s *Service) issuedEntry(ctx context.Context, cert *Certificate, tenant string) ([]byte, error) {
	if !s.cfg.Log {
		return nil, nil
	}
	vs := make([]transparency.Validation, len(cert.Names))
	for i, n := range cert.Names {
		vs[i].Name = n
		if len(cert.Validations) == len(cert.Names) {
			vs[i].Method = cert.Validations[i].Method
		}
	}
	e, err := transparency.EncodeEntry(transparency.Entry{V: transparency.EntryVersion, Kind: transparency.KindIssued,
		Time: cert.IssuedAt.UTC(), Actor: logActor(s.actorOf(ctx)),
		Issued: &transparency.Issued{Certificate: cert.DER, Issuer: IssuerOrDefault(cert.Issuer), Account: string(cert.AccountID),
			Tenant: tenant, Order: string(cert.OrderID), Validations: vs}})
	if err != nil {
		return nil, fmt.Errorf("the log entry of certificate %s: %w", cert.Serial, err)
	}
	return e, nil
}

// revokedEntry is the log entry of cert's revocation at at for reason, or
// nil when the log is off.
func (s *Service) revokedEntry(ctx context.Context, cert *Certificate, reason int, at time.Time) ([]byte, error) {
	if !s.cfg.Log {
		return nil, nil
	}
	e, err := transparency.EncodeEntry(transparency.Entry{V: transparency.EntryVersion, Kind: transparency.KindRevoked,
		Time: at.UTC(), Actor: logActor(s.actorOf(ctx)),
		Revoked: &transparency.Revoked{Serial: cert.Serial, Issuer: IssuerOrDefault(cert.Issuer), Reason: reason}})
	if err != nil {
		return nil, fmt.Errorf("the log entry of the revocation of %s: %w", cert.Serial, err)
	}
	return e, nil
}

// logActor is a in the log's form.
func logActor(a Actor) transparency.Actor {
	la := transparency.Actor{Kind: a.Kind, ID: a.ID}
	if a.Address.IsValid() {
		la.Address = a.Address.String()
	}
	return la
}
