// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// External Account Binding keys (migration 0004). They are created and
// revoked by administrators and read once per new account, so their
// statements are built per call rather than prepared; the binding is part
// of CreateAccount's write (bindEABKey).

var _ acme.EABStore = (*Store)(nil)

// CreateEABKey implements acme.EABStore. A key is created unbound and
// unrevoked whatever k says.
func (s *Store) CreateEABKey(ctx context.Context, k *acme.EABKey) error {
	what, err := sqlrow.CheckNewEABKey(drv, k)
	if err != nil {
		return err
	}
	return s.write(ctx, func(w *writeTx) error {
		_, err := w.tx.ExecContext(writeCtx,
			`INSERT INTO eab_keys (id, label, hmac_key, created_at, tenant) VALUES (?, ?, ?, ?, ?)`,
			k.ID, k.Label, k.HMACKey, sqlrow.ToNanos(k.CreatedAt), k.Tenant)
		if err != nil {
			return writeErr(what, err)
		}
		return nil
	})
}

// GetEABKey implements acme.EABStore.
func (s *Store) GetEABKey(ctx context.Context, id string) (*acme.EABKey, error) {
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, err
	}
	k, err := sqlrow.ScanEABKey(s.r.QueryRowContext(ctx, `SELECT `+sqlrow.EABCols+` FROM eab_keys WHERE id = ?`, id))
	if err != nil {
		return nil, drv.RowErr(fmt.Sprintf("EAB key %q", id), err)
	}
	return k, nil
}

// ListEABKeys implements acme.EABStore: newest first, then by ID.
func (s *Store) ListEABKeys(ctx context.Context, label string) ([]*acme.EABKey, error) {
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, err
	}
	q, args := `SELECT `+sqlrow.EABCols+` FROM eab_keys ORDER BY created_at DESC, id`, []any(nil)
	if label != "" {
		q = `SELECT ` + sqlrow.EABCols + ` FROM eab_keys WHERE label = ? ORDER BY created_at DESC, id`
		args = []any{label}
	}
	return collect(ctx, s, "list EAB keys", q, args, sqlrow.ScanEABKey)
}

// RevokeEABKey implements acme.EABStore, compare-and-set on the key not
// being revoked.
func (s *Store) RevokeEABKey(ctx context.Context, id string, at time.Time) error {
	what := fmt.Sprintf("revoke EAB key %q", id)
	if err := drv.CheckRevocation(what, at); err != nil {
		return err
	}
	return s.write(ctx, func(w *writeTx) error {
		res, err := w.tx.ExecContext(writeCtx,
			`UPDATE eab_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, sqlrow.ToNanos(at), id)
		if err != nil {
			return drv.Wrap(what, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return drv.Errorf("%s: rows affected: %w", what, err)
		} else if n > 0 {
			return nil
		}
		return drv.Missed(what, "already revoked", eabKeyExists(w, id))
	})
}

// bindEABKey binds key id to account, compare-and-set on the key being
// unbound and unrevoked, inside the transaction of CreateAccount: if it
// fails, the account is not created either.
func bindEABKey(w *writeTx, id string, account int64, at time.Time) error {
	what := fmt.Sprintf("bind EAB key %q", id)
	res, err := w.tx.ExecContext(writeCtx,
		`UPDATE eab_keys SET bound_account = ?, bound_at = ? WHERE id = ? AND bound_account IS NULL AND revoked_at IS NULL`,
		account, sqlrow.NullNanos(at), id)
	if err != nil {
		return drv.Wrap(what, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return drv.Errorf("%s: rows affected: %w", what, err)
	} else if n > 0 {
		return nil
	}
	return drv.BindMissed(what, eabKeyExists(w, id))
}

// eabKeyExists asks, in w's transaction, whether key id exists: nil if
// it does, and an error wrapping sql.ErrNoRows if not.
func eabKeyExists(w *writeTx, id string) error {
	var one int
	return w.tx.QueryRowContext(writeCtx, `SELECT 1 FROM eab_keys WHERE id = ?`, id).Scan(&one)
}
