// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weir-pki/weir/ratelimit"
)

// The administrators' use cases: web/admin and the weir CLI call these with
// the authority of the admin token, so they skip the ACME ownership checks
// but keep every other rule (reason codes, compare-and-set, limiter
// bookkeeping, CRL regeneration).

// Inventory returns the store's read side for administrators; false if the
// store has none.
func (s *Service) Inventory() (Inventory, bool) {
	inv, ok := s.store.(Inventory)
	return inv, ok
}

// AdminRevoke revokes a certificate by serial with an RFC 5280 reason code
// an operator may give (ca.OperatorReason).
func (s *Service) AdminRevoke(ctx context.Context, serial string, reason int) (*Certificate, error) {
	if p := operatorReasonProblem(reason); p != nil {
		return nil, p
	}
	cert, err := s.store.GetCertificate(ctx, serial)
	if err != nil {
		return nil, storeErr(err, "certificate %s", serial)
	}
	if err := s.markRevoked(ctx, cert, reason); err != nil {
		return nil, err
	}
	return s.store.GetCertificate(ctx, serial)
}

// markRevoked records a revocation (compare-and-set: a second one is
// alreadyRevoked) and then does what follows every revocation.
func (s *Service) markRevoked(ctx context.Context, cert *Certificate, reason int) error {
	at := s.now().UTC()
	entry, err := s.revokedEntry(ctx, cert, reason, at)
	if err != nil {
		return Internal(err)
	}
	if err := s.store.RevokeCertificate(ctx, cert.Serial, reason, at, entry); err != nil {
		if errors.Is(err, ErrConflict) {
			return NewProblem(ProbAlreadyRevoked, "certificate %s is already revoked", cert.Serial)
		}
		return Internal(err)
	}
	s.revoked(ctx, cert, reason, at)
	return nil
}

// AdminDeactivateAccount deactivates an account (RFC 8555 §7.3.6 lets the
// server do so); its requests are refused from then on.
func (s *Service) AdminDeactivateAccount(ctx context.Context, id AccountID) (*Account, error) {
	a, err := s.store.GetAccount(ctx, id)
	if err != nil {
		return nil, storeErr(err, "account %s", id)
	}
	if a.Status != StatusValid {
		return nil, Malformed("account %s is already %s", id, a.Status)
	}
	a.Status = StatusDeactivated
	defer s.forgetAccount(id)
	if err := s.store.UpdateAccount(ctx, a, StatusValid); err != nil {
		if errors.Is(err, ErrConflict) {
			return nil, Malformed("account %s changed meanwhile; try again", id)
		}
		return nil, Internal(err)
	}
	return a, nil
}

// AccountBuckets names the limiter buckets of an account: its own, and
// those of the names and name sets it used within the longest window.
func (s *Service) AccountBuckets(ctx context.Context, accountID AccountID) ([]ratelimit.Request, error) {
	acct, err := s.store.GetAccount(ctx, accountID)
	if err != nil {
		return nil, storeErr(err, "account %s", accountID)
	}
	// An account bound with an EAB key has the overrides of its label.
	override := s.eabOverrideKey(ctx, acct)
	inv, ok := s.Inventory()
	if !ok {
		return ratelimit.AccountBuckets(string(accountID), override, nil, nil), nil
	}
	names, sets, err := inv.RecentNames(ctx, accountID, s.now().Add(-statusWindow), 200)
	if err != nil {
		return nil, Internal(err)
	}
	return ratelimit.AccountBuckets(string(accountID), override, names, sets), nil
}

// statusWindow is how far back AccountBuckets looks for names: the longest
// default window (duplicate-certificate, 168 h).
const statusWindow = 7 * 24 * time.Hour

// Explanation is what a new order would meet now.
type Explanation struct {
	// Identifiers are the canonical identifiers of the order.
	Identifiers []Identifier
	// Problem is set when the order would be refused before the limiter:
	// malformed or forbidden identifiers, an unusable account.
	Problem *Problem
	// Decision is the limiter's prediction.
	Decision ratelimit.Decision
	// FreshAuthzs is how many new authorizations the order would create
	// (the others would reuse valid ones).
	FreshAuthzs int
}

// explainer is the Limits of a server with rate limiting.
type explainer interface {
	ExplainNewOrder(ctx context.Context, acct *Account, o *Order, fresh []*Authorization) (ratelimit.Decision, error)
}

// ExplainNewOrder predicts what new-order would answer now to req from
// accountID, spending nothing and writing nothing: the same checks
// (planOrder), then the limiter's prediction.
func (s *Service) ExplainNewOrder(ctx context.Context, accountID AccountID, req NewOrderRequest) (*Explanation, error) {
	acct, err := s.store.GetAccount(ctx, accountID)
	if err != nil {
		return nil, storeErr(err, "account %s", accountID)
	}
	plan, err := s.planOrder(ctx, Caller{Account: acct}, req)
	ex := &Explanation{Identifiers: req.Identifiers}
	if plan.idents != nil {
		ex.Identifiers = plan.idents
	}
	if p := AsProblem(err); p != nil && p.Type != ProbServerInternal {
		ex.Problem = p
		return ex, nil
	}
	if err != nil {
		return nil, err
	}
	ex.FreshAuthzs = len(plan.fresh)
	lim, ok := s.limits.(explainer)
	if !ok {
		ex.Decision = ratelimit.Decision{Allowed: true, At: s.now().UTC()}
		return ex, nil
	}
	if ex.Decision, err = lim.ExplainNewOrder(ctx, acct, plan.order, plan.fresh); err != nil {
		return nil, fmt.Errorf("acme: explain: %w", err)
	}
	return ex, nil
}

// OrderStatusNow derives a stored order's status as a client fetching it
// would see it (RFC 8555 §7.1.6): a pending order is ready once all its
// authorizations are valid, and invalid once one failed or it expired.
// The store keeps "pending" for those; administrators read them here. o
// is updated in place and returned.
func (s *Service) OrderStatusNow(ctx context.Context, o *Order) (*Order, error) {
	o, _, err := s.withStatus(ctx, o)
	return o, err
}
