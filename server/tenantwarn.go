// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"

	"github.com/weir-pki/weir/web/admin"
)

// warnTenantsEAB logs, at start, that the store's tenants do not keep
// their names to their accounts while new accounts need no EAB key
// (admin.TenantsEABWarning). acme.external-account-binding.required needs
// a restart, so the start is where it is decided; the tenant pages say
// it of tenants made later.
func (s *Server) warnTenantsEAB(ctx context.Context) {
	required := s.cfg.ACME.ExternalAccountBinding.Required
	if required {
		return
	}
	ts, err := s.svc.ListTenants(ctx)
	if err != nil {
		s.log.Warn("the tenants could not be listed to check them against acme.external-account-binding.required", "err", err)
		return
	}
	if w := admin.TenantsEABWarning(len(ts), required); w != "" {
		s.log.Warn(w, "key", "acme.external-account-binding.required", "tenants", len(ts))
	}
}
