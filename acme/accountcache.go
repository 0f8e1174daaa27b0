// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"sync"
	"time"
)

// accountCacheTTL bounds how long an account read stays cached. Changes
// made through this Service drop the entry at once; the TTL bounds how
// long a change made by another replica can go unseen.
const accountCacheTTL = 5 * time.Second

// accountCacheMax bounds the entries kept; past it the cache starts over.
const accountCacheMax = 100_000

// accountCache keeps recently used accounts: every kid-signed request
// looks its account up, usually the same few accounts again and again.
type accountCache struct {
	mu sync.Mutex
	m  map[AccountID]cachedAccount
}

type cachedAccount struct {
	acct    Account
	fetched time.Time
}

// Account returns an account by ID, from the cache when fresh. The caller
// gets its own copy.
func (s *Service) Account(ctx context.Context, id AccountID) (*Account, error) {
	now := s.now()
	c := &s.accounts
	c.mu.Lock()
	if e, ok := c.m[id]; ok && now.Sub(e.fetched) < accountCacheTTL {
		c.mu.Unlock()
		a := e.acct
		return &a, nil
	}
	c.mu.Unlock()
	a, err := s.store.GetAccount(ctx, id)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= accountCacheMax {
		c.m = make(map[AccountID]cachedAccount)
	}
	c.m[id] = cachedAccount{acct: *a, fetched: now}
	c.mu.Unlock()
	return a, nil
}

// AccountFresh returns an account by ID from the store, and caches it:
// for when the cached copy may predate a change made by another replica
// (acme/jws asks again before refusing a signature, which a key change
// there would explain).
func (s *Service) AccountFresh(ctx context.Context, id AccountID) (*Account, error) {
	s.forgetAccount(id)
	return s.Account(ctx, id)
}

// forgetAccount drops an account from the cache after a change.
func (s *Service) forgetAccount(id AccountID) {
	s.accounts.mu.Lock()
	delete(s.accounts.m, id)
	s.accounts.mu.Unlock()
}
