// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"errors"
	"slices"
	"time"
)

// NewOrderRequest is the payload of new-order (RFC 8555 §7.4).
type NewOrderRequest struct {
	Identifiers []Identifier `json:"identifiers"`
	NotBefore   string       `json:"notBefore,omitempty"`
	NotAfter    string       `json:"notAfter,omitempty"`
	Replaces    string       `json:"replaces,omitempty"`
	Profile     string       `json:"profile,omitempty"`
}

// parseOrderTime parses an RFC 3339 notBefore/notAfter.
func parseOrderTime(field, v string) (time.Time, *Problem) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, Malformed("%s %q is not an RFC 3339 date-time", field, v)
	}
	return t.UTC(), nil
}

// checkWindow checks the form of a requested validity window: a
// notBefore at most an hour in the past and at most OrderLifetime ahead,
// and a notAfter after it. Its length is a rule of the profile
// (checkLifetime, in admitOrder).
func (s *Service) checkWindow(nb, na time.Time) *Problem {
	now := s.now()
	start := nb
	if start.IsZero() {
		start = now
	}
	switch {
	case !nb.IsZero() && nb.Before(now.Add(-time.Hour)):
		return Malformed("notBefore %s is more than an hour in the past", nb.Format(time.RFC3339))
	case !nb.IsZero() && nb.After(now.Add(s.cfg.OrderLifetime)):
		return Malformed("notBefore %s is too far in the future: at most %s from now", nb.Format(time.RFC3339), s.cfg.OrderLifetime)
	case !na.IsZero() && !na.After(start):
		return Malformed("notAfter %s is not after notBefore %s", na.Format(time.RFC3339), start.Format(time.RFC3339))
	}
	return nil
}

// NewOrder creates an order and its authorizations (RFC 8555 §7.4),
// reusing the account's still-valid authorizations where it can.
func (s *Service) NewOrder(ctx context.Context, c Caller, req NewOrderRequest) (*Order, error) {
	plan, err := s.planOrder(ctx, c, req)
	if err != nil {
		if len(plan.refused) > 0 {
			s.reportTenantRefusals(plan.tenant, "new-order", c.Account.ID, plan.refused)
		}
		return nil, err
	}
	o := plan.order
	refund, err := s.limits.NewOrder(ctx, c.Account, o, plan.fresh)
	if err != nil {
		return nil, err
	}
	if err := s.store.CreateOrder(ctx, o, plan.fresh); err != nil {
		refund()
		return nil, Internal(err)
	}
	// The authorizations are in hand, as the order was made with them:
	// its status needs no read.
	return s.withAuthzStatus(o, func(i int) (*Authorization, error) { return plan.authzs[i], nil })
}

// orderPlan is what a new order would be.
type orderPlan struct {
	// idents are the request's identifiers, canonical; set once they
	// are, even when a later check refuses the order.
	idents []Identifier
	order  *Order
	// authzs are the authorizations of order.AuthzIDs, in order: the
	// account's valid ones it reuses, as found, and the new ones.
	authzs []*Authorization
	// fresh are the new ones, which the order creates.
	fresh []*Authorization
	// tenant and refused are the account's tenant and the refusals of its
	// rules, when it refused the order (new-order reports them).
	tenant  *Tenant
	refused []tenantRefusal
}

// planOrder is new-order up to the limiter: every check of the request,
// in the order new-order makes them (the identifier cap, canonical
// identifiers, notBefore/notAfter, the naming policy and the profile
// (admitOrder), the validity window, ARI's replaces), and the reuse of the
// account's valid authorizations. NewOrder stores what it plans and
// ExplainNewOrder predicts with it, so that the two answer alike. The
// error is a *Problem: a refusal, or serverInternal for the store's.
func (s *Service) planOrder(ctx context.Context, c Caller, req NewOrderRequest) (*orderPlan, error) {
	plan := &orderPlan{}
	if p := requireAccount(c); p != nil {
		return plan, p
	}
	if len(req.Identifiers) == 0 {
		return plan, Malformed("an order needs at least one identifier")
	}
	if len(req.Identifiers) > s.cfg.MaxIdentifiers {
		return plan, NewProblem(ProbRejectedIdentifier, "an order may have at most %d identifiers; this one has %d", s.cfg.MaxIdentifiers, len(req.Identifiers))
	}
	idents, p := canonicalIdentifiers(req.Identifiers)
	if p != nil {
		return plan, p
	}
	plan.idents = idents
	nb, p := parseOrderTime("notBefore", req.NotBefore)
	if p != nil {
		return plan, p
	}
	na, p := parseOrderTime("notAfter", req.NotAfter)
	if p != nil {
		return plan, p
	}
	tenant, err := s.accountTenant(ctx, c.Account, false)
	if err != nil {
		return plan, Internal(err)
	}
	adm, p, refused := s.admitOrder(tenant, idents, req.Profile, nb, na)
	if p != nil {
		plan.tenant, plan.refused = tenant, refused
		return plan, p
	}
	if p := s.checkWindow(nb, na); p != nil {
		return plan, p
	}
	var (
		replaces string
		urgent   bool
	)
	if req.Replaces != "" {
		if replaces, urgent, p = s.checkReplaces(ctx, c.Account, req.Replaces, idents); p != nil {
			return plan, p
		}
	}

	now := s.now().UTC()
	o := &Order{
		ID: newID[OrderID](), AccountID: c.Account.ID, Status: StatusPending, Identifiers: idents,
		NotBefore: nb, NotAfter: na, Expires: now.Add(s.cfg.OrderLifetime), CreatedAt: now, Replaces: replaces, Urgent: urgent,
		Profile: adm.profile.name(),
	}
	for i, id := range idents {
		base, wildcard := id.SplitWildcard()
		delegated := adm.zones[i] != ""
		// Reuse only an authorization that outlives the order (RFC 8555
		// §7.1.3), one a delegated zone made valid only while the name
		// is still delegated, and one a challenge made valid only while
		// its type may still validate the name (challengerule.go).
		a, err := s.store.FindValidAuthz(ctx, c.Account.ID, base, wildcard, o.Expires)
		if err == nil && a.isDelegated() && !delegated {
			err = ErrNotFound
		}
		if err == nil && !s.stillAllowed(tenant, a) {
			err = ErrNotFound
		}
		// dns-persist-01 validates again at each order (docs/challenges.md).
		notReused := err == nil && validatedBy(a, ChallengeDNSPersist01)
		switch {
		case (errors.Is(err, ErrNotFound) || notReused) && delegated:
			a = s.newDelegatedAuthz(c.Account.ID, base, wildcard, now)
			plan.fresh = append(plan.fresh, a)
		case errors.Is(err, ErrNotFound) || notReused:
			a = s.newAuthz(c.Account.ID, base, wildcard, s.challengeTypes(tenant, base, wildcard), now)
			plan.fresh = append(plan.fresh, a)
		case err != nil:
			return plan, Internal(err)
		}
		plan.authzs = append(plan.authzs, a)
		o.AuthzIDs = append(o.AuthzIDs, a.ID)
	}
	plan.order = o
	return plan, nil
}

// newAuthz makes a pending authorization with one challenge per type of
// types (challengeTypes).
func (s *Service) newAuthz(accountID AccountID, id Identifier, wildcard bool, types []ChallengeType, now time.Time) *Authorization {
	a := &Authorization{
		ID: newID[AuthzID](), AccountID: accountID, Identifier: id, Wildcard: wildcard,
		Status: StatusPending, Expires: now.Add(s.cfg.PendingAuthzLifetime), CreatedAt: now,
	}
	token := newToken()
	for _, t := range types {
		a.Challenges = append(a.Challenges, &Challenge{
			ID: newID[ChallengeID](), AuthzID: a.ID, Type: t, Token: token, Status: StatusPending, UpdatedAt: now,
		})
	}
	return a
}

// GetOrder returns the caller's order with its current status.
func (s *Service) GetOrder(ctx context.Context, c Caller, id OrderID) (*Order, error) {
	o, _, err := s.getOrder(ctx, c, id)
	return o, err
}

// getOrder is GetOrder that also returns the authorizations it read to
// derive the status (withStatus): every one of an order that is ready.
func (s *Service) getOrder(ctx context.Context, c Caller, id OrderID) (*Order, []*Authorization, error) {
	if p := requireAccount(c); p != nil {
		return nil, nil, p
	}
	o, err := s.store.GetOrder(ctx, id)
	if err != nil {
		return nil, nil, storeErr(err, "order %s", id)
	}
	if o.AccountID != c.Account.ID {
		return nil, nil, Unauthorized("order %s belongs to another account", id)
	}
	return s.withStatus(ctx, o)
}

// withStatus derives a pending order's current status from its stored
// authorizations (withAuthzStatus), read in one store call (GetAuthzs)
// when the status depends on them, and returns those it read, in the
// order's order.
func (s *Service) withStatus(ctx context.Context, o *Order) (*Order, []*Authorization, error) {
	var read []*Authorization
	o, err := s.withAuthzStatus(o, func(i int) (*Authorization, error) {
		if read == nil {
			as, err := s.store.GetAuthzs(ctx, o.AuthzIDs)
			if err != nil {
				return nil, Internal(err)
			}
			read = as
		}
		return read[i], nil
	})
	if err != nil {
		return nil, nil, err
	}
	return o, read, nil
}

// withAuthzStatus derives a pending order's current status from its
// authorizations and expiry (RFC 8555 §7.1.6): ready when all are valid,
// invalid when one failed or the order expired. authz returns the i-th
// authorization of o.AuthzIDs; it is called in order, and not after one
// that makes the order invalid.
func (s *Service) withAuthzStatus(o *Order, authz func(i int) (*Authorization, error)) (*Order, error) {
	now := s.now()
	if o.Status != StatusPending {
		return o, nil
	}
	if now.After(o.Expires) {
		o.Status = StatusInvalid
		o.Error = Unauthorized("the order expired at %s before it was finalized", o.Expires.Format(time.RFC3339))
		return o, nil
	}
	ready := true
	for i := range o.AuthzIDs {
		a, err := authz(i)
		if err != nil {
			return nil, err
		}
		switch st := authzStatus(a, now); st {
		case StatusValid:
		case StatusPending:
			ready = false
		default:
			o.Status = StatusInvalid
			o.Error = Unauthorized("the authorization for %s is %s", a.Name(), st)
			for _, ch := range a.Challenges {
				if ch.Error != nil {
					o.Error = ch.Error
				}
			}
			return o, nil
		}
	}
	if ready {
		o.Status = StatusReady
	}
	return o, nil
}

// authzStatus is an authorization's status at now: expired once past
// Expires while pending or valid.
func authzStatus(a *Authorization, now time.Time) Status {
	if (a.Status == StatusPending || a.Status == StatusValid) && now.After(a.Expires) {
		return StatusExpired
	}
	return a.Status
}

// ListOrders returns a page of the account's order IDs (RFC 8555 §7.1.2.1)
// and the cursor of the next page.
func (s *Service) ListOrders(ctx context.Context, c Caller, accountID AccountID, cursor string, limit int) ([]OrderID, string, error) {
	if p := requireAccount(c); p != nil {
		return nil, "", p
	}
	if c.Account.ID != accountID {
		return nil, "", Unauthorized("the orders of account %s are not yours", accountID)
	}
	ids, next, err := s.store.ListOrders(ctx, accountID, cursor, limit)
	if errors.Is(err, ErrBadCursor) {
		// The client's text, not the store's failure: at most a
		// prefix of it goes into the detail.
		return nil, "", Malformed("the cursor %.40q is not one this server gave out; follow the orders list's Link rel=\"next\" (RFC 8555 §7.1.2.1)", cursor)
	}
	if err != nil {
		return nil, "", Internal(err)
	}
	return ids, next, nil
}

// sameIdentifiers reports whether two canonical sorted lists are equal.
func sameIdentifiers(a, b []Identifier) bool { return slices.Equal(a, b) }

// validatedBy reports whether challenge type t validated a. An
// authorization validated by dns-persist-01 is not reused by a later
// order: the record persists, so the next order's challenge reads it
// again, and removing the record takes effect at the next order instead
// of when the authorization expires (docs/challenges.md).
func validatedBy(a *Authorization, t ChallengeType) bool {
	c := a.fulfilledBy()
	return c != nil && c.Type == t
}
