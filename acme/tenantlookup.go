// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// tenantCacheTTL bounds how long new-order uses a tenant read before: a
// change made through this Service drops it at once, one made through
// another replica is seen by new-order within the TTL. Finalize reads
// the tenant from the store every time (accountTenant's fresh), so a
// narrowed tenant stops the pending orders of every replica at once.
const tenantCacheTTL = 2 * time.Second

// tenantCacheMax bounds the EAB keys and tenants kept; past it a map
// starts over.
const tenantCacheMax = 100_000

// tenantCache keeps the tenant of each EAB key (a key's tenant never
// changes, so it is kept until the map starts over) and the tenants read
// recently.
type tenantCache struct {
	mu      sync.Mutex
	keys    map[string]string // EAB key ID -> tenant name, "" for none
	tenants map[string]cachedTenant
}

type cachedTenant struct {
	t       *Tenant // never changed once cached
	fetched time.Time
}

// tenantStore returns the store's tenants; false if it keeps none.
func (s *Service) tenantStore() (TenantStore, bool) {
	t, ok := s.store.(TenantStore)
	return t, ok
}

// accountTenant returns the tenant of acct: the tenant of the EAB key it
// was bound with. fresh reads the tenant from the store (finalize, so
// that a narrowed tenant applies to the orders its accounts have
// pending); otherwise a copy read within tenantCacheTTL may do
// (new-order and the answer to a challenge, which finalize checks
// again). nil is the default tenant (no
// EAB key, or a key of no tenant). A key whose tenant is gone is an
// error: the account's orders are not admitted under the default
// tenant's wider rules. The returned tenant must not be changed.
func (s *Service) accountTenant(ctx context.Context, acct *Account, fresh bool) (*Tenant, error) {
	if acct == nil || acct.EABKeyID == "" {
		return nil, nil
	}
	name, err := s.keyTenant(ctx, acct)
	if err != nil || name == "" {
		return nil, err
	}
	c := &s.tenants
	now := s.now()
	if !fresh {
		c.mu.Lock()
		e, ok := c.tenants[name]
		c.mu.Unlock()
		if ok && now.Sub(e.fetched) < tenantCacheTTL {
			return e.t, nil
		}
	}
	tenants, ok := s.tenantStore()
	if !ok {
		return nil, fmt.Errorf("account %s belongs to tenant %q, but the store keeps no tenants", acct.ID, name)
	}
	t, err := tenants.GetTenant(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("tenant %q of account %s: %w", name, acct.ID, err)
	}
	c.mu.Lock()
	if c.tenants == nil || len(c.tenants) >= tenantCacheMax {
		c.tenants = make(map[string]cachedTenant)
	}
	c.tenants[name] = cachedTenant{t: t, fetched: now}
	c.mu.Unlock()
	return t, nil
}

// keyTenant returns the name of the tenant of acct's EAB key, "" for
// none (a key of no tenant, or one the store does not have).
func (s *Service) keyTenant(ctx context.Context, acct *Account) (string, error) {
	c := &s.tenants
	c.mu.Lock()
	name, ok := c.keys[acct.EABKeyID]
	c.mu.Unlock()
	if ok {
		return name, nil
	}
	keys, ok := s.eabStore()
	if !ok {
		return "", nil
	}
	k, err := keys.GetEABKey(ctx, acct.EABKeyID)
	switch {
	case errors.Is(err, ErrNotFound):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("the EAB key of account %s: %w", acct.ID, err)
	}
	c.mu.Lock()
	if c.keys == nil || len(c.keys) >= tenantCacheMax {
		c.keys = make(map[string]string)
	}
	c.keys[acct.EABKeyID] = k.Tenant
	c.mu.Unlock()
	return k.Tenant, nil
}

// forgetTenant drops a tenant from the cache after a change.
func (s *Service) forgetTenant(name string) {
	s.tenants.mu.Lock()
	delete(s.tenants.tenants, name)
	s.tenants.mu.Unlock()
}
