// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"fmt"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// Tenants (migration 0011). Administrators write them; new-order and
// finalize read one per order of an account bound with a tenant's EAB key.

var _ acme.TenantStore = (*Store)(nil)

// CreateTenant implements acme.TenantStore.
func (s *Store) CreateTenant(ctx context.Context, t *acme.Tenant) error {
	what := fmt.Sprintf("create tenant %q", t.Name)
	policy, err := sqlrow.TenantRow(drv, what, t)
	if err != nil {
		return err
	}
	return s.write(ctx, func(w *writeTx) error {
		_, err := w.tx.ExecContext(writeCtx, `INSERT INTO tenants (name, policy, created_at, updated_at) VALUES (?, ?, ?, ?)`,
			t.Name, policy, sqlrow.ToNanos(t.CreatedAt), sqlrow.ToNanos(t.UpdatedAt))
		if err != nil {
			return writeErr(what, err)
		}
		return nil
	})
}

// GetTenant implements acme.TenantStore.
func (s *Store) GetTenant(ctx context.Context, name string) (*acme.Tenant, error) {
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, err
	}
	t, err := sqlrow.ScanTenant(s.r.QueryRowContext(ctx, `SELECT `+sqlrow.TenantCols+` FROM tenants WHERE name = ?`, name))
	if err != nil {
		return nil, drv.RowErr(fmt.Sprintf("tenant %q", name), err)
	}
	return t, nil
}

// ListTenants implements acme.TenantStore.
func (s *Store) ListTenants(ctx context.Context) ([]*acme.Tenant, error) {
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, err
	}
	return collect(ctx, s, "list tenants", `SELECT `+sqlrow.TenantCols+` FROM tenants ORDER BY name`, nil, sqlrow.ScanTenant)
}

// UpdateTenant implements acme.TenantStore.
func (s *Store) UpdateTenant(ctx context.Context, t *acme.Tenant) error {
	what := fmt.Sprintf("update tenant %q", t.Name)
	policy, err := sqlrow.TenantRow(drv, what, t)
	if err != nil {
		return err
	}
	return s.write(ctx, func(w *writeTx) error {
		res, err := w.tx.ExecContext(writeCtx, `UPDATE tenants SET policy = ?, updated_at = ? WHERE name = ?`,
			policy, sqlrow.ToNanos(t.UpdatedAt), t.Name)
		return tenantChanged(what, res, err)
	})
}

// DeleteTenant implements acme.TenantStore: refused while an EAB key
// names the tenant, checked in the deleting transaction.
func (s *Store) DeleteTenant(ctx context.Context, name string) error {
	what := fmt.Sprintf("delete tenant %q", name)
	return s.write(ctx, func(w *writeTx) error {
		var keys int
		if err := w.tx.QueryRowContext(writeCtx, `SELECT count(*) FROM eab_keys WHERE tenant = ?`, name).Scan(&keys); err != nil {
			return drv.Wrap(what, err)
		}
		if keys > 0 {
			return drv.Errorf("%s: %d EAB keys belong to it: %w", what, keys, acme.ErrConflict)
		}
		res, err := w.tx.ExecContext(writeCtx, `DELETE FROM tenants WHERE name = ?`, name)
		return tenantChanged(what, res, err)
	})
}

// tenantChanged is the error of a write to one tenant: ErrNotFound when
// it changed no row.
func tenantChanged(what string, res interface{ RowsAffected() (int64, error) }, err error) error {
	if err != nil {
		return writeErr(what, err)
	}
	n, err := res.RowsAffected()
	switch {
	case err != nil:
		return drv.Errorf("%s: rows affected: %w", what, err)
	case n == 0:
		return drv.NotFound(what)
	}
	return nil
}
