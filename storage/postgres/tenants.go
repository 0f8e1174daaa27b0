// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// Tenants (migration 0007), as storage/sqlite keeps them.

var _ acme.TenantStore = (*Store)(nil)

// CreateTenant implements acme.TenantStore.
func (s *Store) CreateTenant(ctx context.Context, t *acme.Tenant) error {
	what := fmt.Sprintf("create tenant %q", t.Name)
	policy, err := sqlrow.TenantRow(drv, what, t)
	if err != nil {
		return err
	}
	if !validKey(t.Name) {
		return drv.Errorf("%s: the name is not storable", what)
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO tenants (name, policy, created_at, updated_at) VALUES ($1, $2, $3, $4)`,
		t.Name, policy, sqlrow.ToNanos(t.CreatedAt), sqlrow.ToNanos(t.UpdatedAt))
	if err != nil {
		return writeErr(what, err)
	}
	return nil
}

// GetTenant implements acme.TenantStore.
func (s *Store) GetTenant(ctx context.Context, name string) (*acme.Tenant, error) {
	what := fmt.Sprintf("tenant %q", name)
	if !validKey(name) {
		return nil, drv.NotFound(what)
	}
	t, err := sqlrow.ScanTenant(s.pool.QueryRow(ctx, `SELECT `+sqlrow.TenantCols+` FROM tenants WHERE name = $1`, name))
	if err != nil {
		return nil, drv.RowErr(what, err)
	}
	return t, nil
}

// ListTenants implements acme.TenantStore.
func (s *Store) ListTenants(ctx context.Context) ([]*acme.Tenant, error) {
	return collect(ctx, s.pool, "list tenants", `SELECT `+sqlrow.TenantCols+` FROM tenants ORDER BY name`, nil, sqlrow.ScanTenant)
}

// UpdateTenant implements acme.TenantStore.
func (s *Store) UpdateTenant(ctx context.Context, t *acme.Tenant) error {
	what := fmt.Sprintf("update tenant %q", t.Name)
	policy, err := sqlrow.TenantRow(drv, what, t)
	if err != nil {
		return err
	}
	if !validKey(t.Name) {
		return drv.NotFound(what)
	}
	tag, err := s.pool.Exec(ctx, `UPDATE tenants SET policy = $1, updated_at = $2 WHERE name = $3`,
		policy, sqlrow.ToNanos(t.UpdatedAt), t.Name)
	if err != nil {
		return writeErr(what, err)
	}
	if tag.RowsAffected() == 0 {
		return drv.NotFound(what)
	}
	return nil
}

// DeleteTenant implements acme.TenantStore: refused while an EAB key
// names the tenant. A key created for it concurrently may still name
// it afterwards: the accounts bound with such a key are refused orders
// (acme's accountTenant fails closed), never given the default tenant.
func (s *Store) DeleteTenant(ctx context.Context, name string) error {
	what := fmt.Sprintf("delete tenant %q", name)
	if !validKey(name) {
		return drv.NotFound(what)
	}
	return s.inTx(ctx, what, func(tx pgx.Tx) error {
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1 FROM tenants WHERE name = $1 FOR UPDATE`, name).Scan(&one); err != nil {
			return drv.RowErr(what, err)
		}
		var keys int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM eab_keys WHERE tenant = $1`, name).Scan(&keys); err != nil {
			return drv.Wrap(what, err)
		}
		if keys > 0 {
			return drv.Errorf("%s: %d EAB keys belong to it: %w", what, keys, acme.ErrConflict)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM tenants WHERE name = $1`, name); err != nil {
			return writeErr(what, err)
		}
		return nil
	})
}
