// SPDX-License-Identifier: Apache-2.0

package sqlrow

import (
	"fmt"
	"time"

	"github.com/weir-pki/weir/acme"
)

// TenantCols are the columns of tenants that ScanTenant reads, in order.
const TenantCols = "name, policy, created_at, updated_at"

// ScanTenant reads one row of TenantCols.
func ScanTenant(row Scanner) (*acme.Tenant, error) {
	var (
		t      acme.Tenant
		name   string
		policy string
	)
	if err := row.Scan(&name, &policy, nanos(&t.CreatedAt), nanos(&t.UpdatedAt)); err != nil {
		return nil, err
	}
	created, updated := t.CreatedAt, t.UpdatedAt
	if err := FromJSON(fmt.Sprintf("tenant %q: policy", name), policy, &t); err != nil {
		return nil, err
	}
	t.Name, t.CreatedAt, t.UpdatedAt = name, created, updated
	return &t, nil
}

// TenantRow checks a tenant for writing (what names the write) and
// returns its policy column.
func TenantRow(d Driver, what string, t *acme.Tenant) (policy string, err error) {
	if t.Name == "" {
		return "", d.Errorf("%s: empty name", what)
	}
	if err := d.CheckTimes(what, t.CreatedAt, t.UpdatedAt); err != nil {
		return "", err
	}
	p := *t
	p.Name, p.CreatedAt, p.UpdatedAt = "", time.Time{}, time.Time{}
	policy, err = ToJSON(what+": policy", p)
	if err != nil {
		return "", d.Errorf("%w", err)
	}
	return policy, nil
}
