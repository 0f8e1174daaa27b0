// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"context"
	"fmt"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// The administrators' named credentials, as storage/sqlite keeps them.
// Every replica reads the table every second or so, so that an addition
// or a revocation on one is seen by all.

var _ acme.AdminCredentialStore = (*Store)(nil)

// CreateAdminCredential implements acme.AdminCredentialStore.
func (s *Store) CreateAdminCredential(ctx context.Context, c *acme.AdminCredential) error {
	what, err := sqlrow.CheckNewAdminCredential(drv, c)
	if err != nil {
		return err
	}
	if !validKey(c.Name) || !validKey(c.Role) || !validKey(c.CreatedBy) {
		return drv.Errorf("%s: not storable text", what)
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO admin_credentials (`+sqlrow.AdminCredentialInsertCols+`) VALUES ($1, $2, $3, $4, $5, $6)`,
		c.Name, c.Role, c.SHA256, sqlrow.ToNanos(c.CreatedAt), c.CreatedBy, sqlrow.NameLower(c.Name))
	if err != nil {
		return writeErr(what, err)
	}
	return nil
}

// ListAdminCredentials implements acme.AdminCredentialStore.
func (s *Store) ListAdminCredentials(ctx context.Context) ([]*acme.AdminCredential, error) {
	return collect(ctx, s.pool, "list admin credentials", `SELECT `+sqlrow.AdminCredentialCols+` FROM admin_credentials ORDER BY name`, nil, sqlrow.ScanAdminCredential)
}

// DeleteAdminCredential implements acme.AdminCredentialStore.
func (s *Store) DeleteAdminCredential(ctx context.Context, name string) error {
	what := fmt.Sprintf("delete admin credential %q", name)
	if !validKey(name) {
		return drv.NotFound(what)
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM admin_credentials WHERE name = $1`, name)
	if err != nil {
		return writeErr(what, err)
	}
	if tag.RowsAffected() == 0 {
		return drv.NotFound(what)
	}
	return nil
}
