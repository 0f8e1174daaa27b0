// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"net/netip"
)

// Auditor receives the issuances and revocations for the audit trail
// (internal/audit). Its methods are called after the store has recorded
// the event and before the client gets the answer; they are safe for
// concurrent use and deal with their own failures (logged and counted):
// a certificate the store holds is issued whether or not its record was
// written (docs/ARCHITECTURE.md, "Audit trail").
type Auditor interface {
	Issued(ctx context.Context, cert *Certificate, order *Order, actor Actor)
	Revoked(ctx context.Context, cert *Certificate, reason int, actor Actor)
}

// Actor is who asked for what an Auditor records.
type Actor struct {
	// Kind is "account", "certificate-key" (a revocation signed with the
	// certificate's own key), "admin" or "system" (a replica resuming an
	// interrupted finalization).
	Kind string
	// ID is the account ID, the admin identity or the replica.
	ID string
	// Address is the client's address; invalid for "system".
	Address netip.Addr
}

// NopAuditor records nothing.
type NopAuditor struct{}

// Issued implements Auditor.
func (NopAuditor) Issued(context.Context, *Certificate, *Order, Actor) {}

// Revoked implements Auditor.
func (NopAuditor) Revoked(context.Context, *Certificate, int, Actor) {}

type actorKey struct{}

// WithActor returns ctx carrying the actor of the use case it is given
// to: web/admin sets the administrator of a request.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// actorOf is the actor ctx carries, else a system actor of this replica.
func (s *Service) actorOf(ctx context.Context) Actor {
	if a, ok := ctx.Value(actorKey{}).(Actor); ok {
		return a
	}
	return Actor{Kind: "system", ID: s.cfg.Owner}
}

// callerActor is the actor of an ACME request by c.
func callerActor(c Caller) Actor {
	if c.Account == nil {
		return Actor{Kind: "certificate-key", ID: string(c.Thumbprint), Address: c.IP}
	}
	return Actor{Kind: "account", ID: string(c.Account.ID), Address: c.IP}
}
