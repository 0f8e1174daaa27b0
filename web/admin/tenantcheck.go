// SPDX-License-Identifier: Apache-2.0

package admin

import "fmt"

// TenantOverride is a "tenant:NAME" key of rate-limiting.overrides: its
// index in the list and the tenant's name (server.Config.TenantOverrides).
type TenantOverride struct {
	Index int
	Name  string
}

// TenantConfigWarnings are weir check-config's warnings about the
// tenants, given the running weir's tenants (asked of its admin API, as
// the store is the server's) or err, why they could not be asked: each
// override of a tenant that does not exist (tenants live in the store,
// not the file, so an unknown name is valid, but it applies to no
// account until the tenant exists), and TenantsEABWarning. When the
// tenants could not be asked, one warning says so if overrides name
// tenants, and nothing is said of EAB (there may be no tenant).
func TenantConfigWarnings(overrides []TenantOverride, tenants []TenantView, err error, eabRequired bool) []string {
	switch {
	case err != nil && len(overrides) > 0:
		return []string{fmt.Sprintf("rate-limiting.overrides: could not check the tenant:NAME keys against the running weir's tenants: %v", err)}
	case err != nil:
		return nil
	}
	known := map[string]bool{}
	for _, t := range tenants {
		known[t.Name] = true
	}
	var out []string
	for _, u := range overrides {
		if !known[u.Name] {
			out = append(out, fmt.Sprintf("rate-limiting.overrides[%d]: tenant %q does not exist in the running weir's store: the override applies to no account until it does (weir tenant create)", u.Index, u.Name))
		}
	}
	if w := TenantsEABWarning(len(tenants), eabRequired); w != "" {
		out = append(out, w)
	}
	return out
}
