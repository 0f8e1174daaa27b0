// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"io"
	"time"

	"github.com/weir-pki/weir/server"
	"github.com/weir-pki/weir/web/admin"
)

// tenantWarnings are check-config's warnings about the tenants
// (admin.TenantConfigWarnings), asked of the admin API of the running weir
// that cfg (read from path) describes, within timeout. It asks nothing
// when there is nothing to warn of: no tenant:NAME override and EAB
// required.
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
	overrides := make([]admin.TenantOverride, len(uses))
	for i, u := range uses {
		overrides[i] = admin.TenantOverride(u)
	}
	return admin.TenantConfigWarnings(overrides, p.Items, err, eabRequired)
}
