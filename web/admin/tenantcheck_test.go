// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"errors"
	"strings"
	"testing"
)

// TestTenantConfigWarnings: an override of a tenant the running weir
// lacks is named by its index; tenants without required EAB add the EAB
// warning; when the tenants could not be asked, one warning says so if
// overrides name tenants, and nothing otherwise.
func TestTenantConfigWarnings(t *testing.T) {
	overrides := []TenantOverride{{Index: 0, Name: "payments"}, {Index: 2, Name: "ghost"}}
	tenants := []TenantView{{Name: "payments"}}
	got := TenantConfigWarnings(overrides, tenants, nil, true)
	if len(got) != 1 || !strings.HasPrefix(got[0], `rate-limiting.overrides[2]: tenant "ghost" does not exist`) {
		t.Errorf("an unknown tenant: %q", got)
	}
	got = TenantConfigWarnings(nil, tenants, nil, false)
	if len(got) != 1 || got[0] != TenantsEABWarning(1, false) {
		t.Errorf("tenants without required EAB: %q", got)
	}
	if got := TenantConfigWarnings(nil, nil, nil, false); got != nil {
		t.Errorf("no tenants, no overrides: %q", got)
	}
	down := errors.New("connection refused")
	got = TenantConfigWarnings(overrides, nil, down, false)
	if len(got) != 1 || !strings.Contains(got[0], "could not check the tenant:NAME keys") || !strings.HasSuffix(got[0], "connection refused") {
		t.Errorf("tenants not asked, with overrides: %q", got)
	}
	if got := TenantConfigWarnings(nil, nil, down, false); got != nil {
		t.Errorf("tenants not asked, no overrides: %q", got)
	}
}
