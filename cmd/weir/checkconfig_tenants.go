// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/weir-pki/weir/server"
	"github.com/weir-pki/weir/web/admin"
)

// tenantWarnings are check-config's warnings about the tenants: the
// "tenant:NAME" rate-limit overrides of cfg (read from path) whose tenant
// does not exist (tenants live in the store, not the file, so an unknown
// name is valid, but it applies to no account until the tenant exists),
// and tenants that exist while new accounts need no EAB key
// (admin.TenantsEABWarning). The tenants are asked of the running weir's
// admin API (the store is the server's), within timeout; when it cannot
// be asked, one warning says so if overrides name tenants, and nothing
// is said of EAB (there may be no tenant).
func tenantWarnings(ctx context.Context, path string, cfg server.Config, timeout time.Duration) []string {
	uses := cfg.TenantOverrides()
	eabRequired := cfg.ACME.ExternalAccountBinding.Required
	if len(uses) == 0 && eabRequired {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	noURL, noToken := "", ""
	af := &adminFlags{config: &path, adminURL: &noURL, tokenFile: &noToken}
	c, err := af.client(io.Discard)
	var p admin.Page[admin.TenantView]
	if err == nil {
		err = c.Get(ctx, "/api/v1/tenants", nil, &p)
	}
	switch {
	case err != nil && len(uses) > 0:
		return []string{fmt.Sprintf("rate-limiting.overrides: could not check the tenant:NAME keys against the running weir's tenants: %v", err)}
	case err != nil:
		return nil
	}
	known := map[string]bool{}
	for _, t := range p.Items {
		known[t.Name] = true
	}
	var out []string
	for _, u := range uses {
		if !known[u.Name] {
			out = append(out, fmt.Sprintf("rate-limiting.overrides[%d]: tenant %q does not exist in the running weir's store: the override applies to no account until it does (weir tenant create)", u.Index, u.Name))
		}
	}
	if w := admin.TenantsEABWarning(len(p.Items), eabRequired); w != "" {
		out = append(out, w)
	}
	return out
}
