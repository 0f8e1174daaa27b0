// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"fmt"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// The administrators' named credentials (migration admin_credentials).
// The admin listener reads them every second or so and writes one per
// `weir admin token add` or revoke.

var _ acme.AdminCredentialStore = (*Store)(nil)

// CreateAdminCredential implements acme.AdminCredentialStore.
func (s *Store) CreateAdminCredential(ctx context.Context, c *acme.AdminCredential) error {
	what, err := sqlrow.CheckNewAdminCredential(drv, c)
	if err != nil {
		return err
	}
	return s.write(ctx, func(w *writeTx) error {
		_, err := w.tx.ExecContext(writeCtx, `INSERT INTO admin_credentials (`+sqlrow.AdminCredentialInsertCols+`) VALUES (?, ?, ?, ?, ?, ?)`,
			c.Name, c.Role, c.SHA256, sqlrow.ToNanos(c.CreatedAt), c.CreatedBy, sqlrow.NameLower(c.Name))
		if err != nil {
			return writeErr(what, err)
		}
		return nil
	})
}

// ListAdminCredentials implements acme.AdminCredentialStore.
func (s *Store) ListAdminCredentials(ctx context.Context) ([]*acme.AdminCredential, error) {
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, err
	}
	return collect(ctx, s, "list admin credentials", `SELECT `+sqlrow.AdminCredentialCols+` FROM admin_credentials ORDER BY name`, nil, sqlrow.ScanAdminCredential)
}

// DeleteAdminCredential implements acme.AdminCredentialStore.
func (s *Store) DeleteAdminCredential(ctx context.Context, name string) error {
	what := fmt.Sprintf("delete admin credential %q", name)
	return s.write(ctx, func(w *writeTx) error {
		res, err := w.tx.ExecContext(writeCtx, `DELETE FROM admin_credentials WHERE name = ?`, name)
		if err != nil {
			return writeErr(what, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return drv.Wrap(what, err)
		} else if n == 0 {
			return drv.NotFound(what)
		}
		return nil
	})
}
