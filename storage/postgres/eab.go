// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// CreateEABKey implements acme.EABStore. A key is created unbound and
// unrevoked whatever k says.
func (s *Store) CreateEABKey(ctx context.Context, k *acme.EABKey) error {
	what, err := sqlrow.CheckNewEABKey(drv, k)
	if err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO eab_keys (id, label, hmac_key, created_at, tenant) VALUES ($1, $2, $3, $4, $5)`,
		k.ID, k.Label, k.HMACKey, sqlrow.ToNanos(k.CreatedAt), k.Tenant)
	if err != nil {
		return writeErr(what, err)
	}
	return nil
}

// GetEABKey implements acme.EABStore.
func (s *Store) GetEABKey(ctx context.Context, id string) (*acme.EABKey, error) {
	what := fmt.Sprintf("EAB key %q", id)
	if !validKey(id) {
		return nil, drv.NotFound(what)
	}
	k, err := sqlrow.ScanEABKey(s.pool.QueryRow(ctx, `SELECT `+sqlrow.EABCols+` FROM eab_keys WHERE id = $1`, id))
	if err != nil {
		return nil, drv.RowErr(what, err)
	}
	return k, nil
}

// ListEABKeys implements acme.EABStore: newest first, then by ID.
func (s *Store) ListEABKeys(ctx context.Context, label string) ([]*acme.EABKey, error) {
	if label == "" {
		return collect(ctx, s.pool, "list EAB keys",
			`SELECT `+sqlrow.EABCols+` FROM eab_keys ORDER BY created_at DESC, id`, nil, sqlrow.ScanEABKey)
	}
	if !validKey(label) {
		return nil, nil
	}
	return collect(ctx, s.pool, "list EAB keys",
		`SELECT `+sqlrow.EABCols+` FROM eab_keys WHERE label = $1 ORDER BY created_at DESC, id`, []any{label}, sqlrow.ScanEABKey)
}

// RevokeEABKey implements acme.EABStore, compare-and-set on the key not
// being revoked.
func (s *Store) RevokeEABKey(ctx context.Context, id string, at time.Time) error {
	what := fmt.Sprintf("revoke EAB key %q", id)
	if err := drv.CheckRevocation(what, at); err != nil {
		return err
	}
	if !validKey(id) {
		return drv.NotFound(what)
	}
	return s.cas(ctx, what, "already revoked",
		`UPDATE eab_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL`,
		[]any{sqlrow.ToNanos(at), id}, eabKeyExists, id)
}

// eabKeyExists is the query that tells a missing EAB key from one that
// failed a compare-and-set.
const eabKeyExists = `SELECT 1 FROM eab_keys WHERE id = $1`

// bindEABKey binds key id to account, compare-and-set on the key being
// unbound and unrevoked, inside the transaction of CreateAccount: if it
// fails, the account is not created either. A concurrent binding of the
// same key waits for this transaction and then finds the key bound.
func bindEABKey(ctx context.Context, tx pgx.Tx, id string, account int64, at time.Time) error {
	what := fmt.Sprintf("bind EAB key %q", id)
	if !validKey(id) {
		return drv.NoSuchEABKey(what)
	}
	tag, err := tx.Exec(ctx, `UPDATE eab_keys SET bound_account = $1, bound_at = $2
		WHERE id = $3 AND bound_account IS NULL AND revoked_at IS NULL`, account, sqlrow.NullNanos(at), id)
	if err != nil {
		return drv.Wrap(what, err)
	}
	if tag.RowsAffected() > 0 {
		return nil
	}
	var one int
	return drv.BindMissed(what, tx.QueryRow(ctx, eabKeyExists, id).Scan(&one))
}
