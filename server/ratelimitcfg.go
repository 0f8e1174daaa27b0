// SPDX-License-Identifier: Apache-2.0

package server

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/weir-pki/weir/acme"
)

// parsePrefixes reads IPs and CIDRs (acme.ParseIPRange), naming the key of
// a bad entry.
func parsePrefixes(key string, list []string) ([]netip.Prefix, []error) {
	var out []netip.Prefix
	var errs []error
	for i, s := range list {
		p, err := acme.ParseIPRange(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s[%d]: %v", key, i, err))
			continue
		}
		out = append(out, p)
	}
	return out, errs
}

// validateRateLimiting checks the rate-limiting block (ratelimit.Config)
// and what it must agree with elsewhere: acme.max-identifiers, the largest
// cost an order can ask of the SAN budget and of pending-authorizations;
// IP ranges and EAB labels as acme reads them.
func (c Config) validateRateLimiting() []error {
	rl := c.RateLimiting
	var errs []error
	if err := rl.Validate(); err != nil {
		errs = append(errs, err)
	}
	_, perrs := parsePrefixes("rate-limiting.whitelist", rl.Whitelist)
	errs = append(errs, perrs...)
	maxNames := int64(c.ACME.MaxIdentifiers)
	if san := rl.OrderCreation.SANBudgetPerAccountPerHour; rl.OrderCreation.Enabled && san >= 1 && san < maxNames {
		errs = append(errs, fmt.Errorf("rate-limiting.order-creation.san-budget-per-account-per-hour: %d is smaller than acme.max-identifiers (%d), so the largest orders could never pass", san, maxNames))
	}
	if p := rl.PendingAuthorizations.Max; rl.PendingAuthorizations.Enabled && p >= 1 && p < maxNames {
		errs = append(errs, fmt.Errorf("rate-limiting.pending-authorizations.max: %d is smaller than acme.max-identifiers (%d), so an order with that many new names could never be created", p, maxNames))
	}
	for i, o := range rl.Overrides {
		if label, ok := strings.CutPrefix(o.Key, acme.EABOverrideKey("")); ok {
			if err := acme.CheckEABLabel(label); err != nil {
				errs = append(errs, fmt.Errorf("rate-limiting.overrides[%d]: key %q: %w", i, o.Key, err))
			}
		}
		if name, ok := strings.CutPrefix(o.Key, acme.TenantOverrideKey("")); ok {
			if err := acme.CheckTenantName(name); err != nil {
				errs = append(errs, fmt.Errorf("rate-limiting.overrides[%d]: key %q: %w", i, o.Key, err))
			}
		}
	}
	return errs
}

// TenantOverride is a "tenant:NAME" entry of rate-limiting.overrides.
type TenantOverride struct {
	Index int    // its index in the list
	Name  string // the tenant's
}

// TenantOverrides lists the "tenant:NAME" overrides of c, whose tenants
// the store, not the file, holds (weir check-config asks the running
// weir for them).
func (c Config) TenantOverrides() []TenantOverride {
	var out []TenantOverride
	for i, o := range c.RateLimiting.Overrides {
		if name, ok := strings.CutPrefix(o.Key, acme.TenantOverrideKey("")); ok {
			out = append(out, TenantOverride{i, name})
		}
	}
	return out
}
