// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"net/netip"
)

// Limits is where Service consults the rate limiter, at the points named in
// docs/ARCHITECTURE.md. A refusal is returned as a *Problem of type
// rateLimited; any other error is a backend failure the implementation has
// already resolved per its on-backend-error policy (so it is logged, not
// sent). A refund func undoes exactly what its call spent, at most once.
type Limits interface {
	// NewAccount runs before an account is created for clientIP.
	NewAccount(ctx context.Context, clientIP netip.Addr) (refund func(), err error)
	// NewOrder runs before order o of acct is stored (o.Identifiers are
	// canonical; o.Replaces is set for an ARI renewal). fresh are the
	// authorizations the order creates (reused ones are not new).
	NewOrder(ctx context.Context, acct *Account, o *Order, fresh []*Authorization) (refund func(), err error)
	// Finalize runs before the certificate for o is issued.
	Finalize(ctx context.Context, acct *Account, o *Order) (refund func(), err error)
	// AuthzFinished records that authz left pending (valid, invalid or
	// deactivated); an invalid one counts as a failed validation.
	AuthzFinished(ctx context.Context, authz *Authorization)
	// Revoked records that cert was revoked (it frees a
	// duplicate-certificate slot).
	Revoked(ctx context.Context, cert *Certificate)
}

// NoLimits is a Limits that admits everything.
type NoLimits struct{}

func noRefund() {}

// NewAccount implements Limits.
func (NoLimits) NewAccount(context.Context, netip.Addr) (func(), error) { return noRefund, nil }

// NewOrder implements Limits.
func (NoLimits) NewOrder(context.Context, *Account, *Order, []*Authorization) (func(), error) {
	return noRefund, nil
}

// Finalize implements Limits.
func (NoLimits) Finalize(context.Context, *Account, *Order) (func(), error) { return noRefund, nil }

// AuthzFinished implements Limits.
func (NoLimits) AuthzFinished(context.Context, *Authorization) {}

// Revoked implements Limits.
func (NoLimits) Revoked(context.Context, *Certificate) {}
