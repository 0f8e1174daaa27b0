// SPDX-License-Identifier: Apache-2.0

package limits

import (
	"context"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ratelimit"
)

// limitsOrder is o, placed by acct, as the limits see it; overrideKey is
// the account's group override.
func limitsOrder(acct *acme.Account, o *acme.Order, overrideKey string) ratelimit.Order {
	return ratelimit.Order{ID: string(o.ID), Account: string(acct.ID), OverrideKey: overrideKey, Names: acme.IdentifierValues(o.Identifiers),
		Renewal: o.Replaces != "", Urgent: o.Urgent}
}

// limitsOrder is o with the override of acct's EAB label.
func (r *Adapter) limitsOrder(ctx context.Context, acct *acme.Account, o *acme.Order) ratelimit.Order {
	return limitsOrder(acct, o, r.overrideKey(ctx, acct))
}

// newOrderRequests are ratelimit.NewOrderRequests of o and its new
// pending authorizations.
func newOrderRequests(o ratelimit.Order, fresh []*acme.Authorization) []ratelimit.Request {
	authzs := make([]ratelimit.Authz, 0, len(fresh))
	for _, a := range fresh {
		// A delegated zone's authorization is valid when created: it
		// is never pending.
		if a.Status == acme.StatusPending {
			authzs = append(authzs, ratelimit.Authz{ID: string(a.ID), Expires: a.Expires})
		}
	}
	return ratelimit.NewOrderRequests(o, authzs)
}

// SetEABKeys makes the account limits of accounts bound with an EAB key
// take the overrides of the key's label ("eab:LABEL") and tenant
// ("tenant:NAME"), looked up in keys; nil turns that off.
func (r *Adapter) SetEABKeys(keys acme.EABStore) {
	if keys == nil {
		r.eabLabels.Store(nil)
		return
	}
	r.eabLabels.Store(&eabLabels{keys: keys})
}

// overrideKey is the override key of acct's limits, that of its EAB
// key's label. A failed lookup is logged and leaves the default limits.
func (r *Adapter) overrideKey(ctx context.Context, acct *acme.Account) string {
	key, err := r.eabLabels.Load().overrideKey(ctx, acct)
	if err != nil {
		r.log.Warn("rate limits: looking up the EAB label of an account; its default limits apply", "account", acct.ID, "err", err)
	}
	return key
}
