// SPDX-License-Identifier: Apache-2.0

package limits

import (
	"context"
	"errors"
	"sync"

	"github.com/weir-pki/weir/acme"
)

// eabLabelCacheMax bounds the labels eabLabels keeps; past it the cache
// starts over.
const eabLabelCacheMax = 100_000

// eabLabels finds the label and tenant of an account's EAB key, whose
// overrides the account's own limits take. A key's label and tenant never
// change and an account never changes its key, so their group keys are
// cached.
type eabLabels struct {
	keys acme.EABStore
	mu   sync.Mutex
	m    map[string]string // key ID -> group override key
}

// overrideKey returns the group override key of acct's limits
// (acme.GroupOverrideKey: "eab:LABEL tenant:NAME"), "" when acct was
// created without an EAB key.
func (l *eabLabels) overrideKey(ctx context.Context, acct *acme.Account) (string, error) {
	if l == nil || acct == nil || acct.EABKeyID == "" {
		return "", nil
	}
	l.mu.Lock()
	key, ok := l.m[acct.EABKeyID]
	l.mu.Unlock()
	if !ok {
		k, err := l.keys.GetEABKey(ctx, acct.EABKeyID)
		switch {
		case errors.Is(err, acme.ErrNotFound):
		case err != nil:
			return "", err
		default:
			key = acme.GroupOverrideKey(k)
		}
		l.mu.Lock()
		if l.m == nil || len(l.m) >= eabLabelCacheMax {
			l.m = make(map[string]string)
		}
		l.m[acct.EABKeyID] = key
		l.mu.Unlock()
	}
	return key, nil
}
