package acme

import (
	"context"
	"errors"
	"fmt"
)

// tenantStore returns the store's tenants; false if it keeps none.
func (s *Service) tenantStore() (TenantStore, bool) {
	t, ok := s.store.(TenantStore)
	return t, ok
}

// accountTenant returns the live tenant of acct: the tenant of the EAB key
// it was bound with, read from the store now, so that a narrowed tenant
// applies to the orders its accounts have pending. nil is the default
// tenant (no EAB key, or a key of no tenant). A key whose tenant is gone
// is an error: the account's orders are not admitted under the default
// tenant's wider rules.
func (s *Service) accountTenant(ctx context.Context, acct *Account) (*Tenant, error) {
	if acct == nil || acct.EABKeyID == "" {
		return nil, nil
	}
	keys, ok := s.eabStore()
	if !ok {
		return nil, nil
	}
	k, err := keys.GetEABKey(ctx, acct.EABKeyID)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("the EAB key of account %s: %w", acct.ID, err)
	case k.Tenant == "":
		return nil, nil
	}
	tenants, ok := s.tenantStore()
	if !ok {
		return nil, fmt.Errorf("account %s belongs to tenant %q, but the store keeps no tenants", acct.ID, k.Tenant)
	}
	t, err := tenants.GetTenant(ctx, k.Tenant)
	if err != nil {
		return nil, fmt.Errorf("tenant %q of account %s: %w", k.Tenant, acct.ID, err)
	}
	return t, nil
}
