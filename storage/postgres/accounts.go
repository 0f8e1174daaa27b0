// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// CreateAccount stores a new account and sets a.ID. It fails with an error
// wrapping acme.ErrConflict if an account with the same key thumbprint
// exists. When a.EABKeyID is set it binds that EAB key to the account in
// the same transaction, or fails with an error wrapping
// acme.ErrEABUnusable, writing nothing, if the key is unknown, bound or
// revoked.
func (s *Store) CreateAccount(ctx context.Context, a *acme.Account) error {
	args, err := sqlrow.AccountValues(drv, a)
	if err != nil {
		return err
	}
	const insert = `INSERT INTO accounts (` + sqlrow.AccountInsertCols + `)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`
	var id int64
	if a.EABKeyID == "" {
		// One statement, one round trip.
		if err := s.pool.QueryRow(ctx, insert, args...).Scan(&id); err != nil {
			return writeErr("create account", err)
		}
	} else {
		err = s.inTx(ctx, "create account", func(tx pgx.Tx) error {
			if err := tx.QueryRow(ctx, insert, args...).Scan(&id); err != nil {
				return writeErr("create account", err)
			}
			return bindEABKey(ctx, tx, a.EABKeyID, id, a.CreatedAt)
		})
		if err != nil {
			return err
		}
	}
	a.ID = sqlrow.FormatAccountID(id)
	return nil
}

// GetAccount returns the account with the given ID.
func (s *Store) GetAccount(ctx context.Context, id acme.AccountID) (*acme.Account, error) {
	n, ok := sqlrow.ParseAccountID(id)
	if !ok {
		return nil, drv.Errorf("account %q: %w", id, acme.ErrNotFound)
	}
	a, err := sqlrow.ScanAccount(s.pool.QueryRow(ctx, `SELECT `+sqlrow.AccountCols+` FROM accounts WHERE id = $1`, n))
	if err != nil {
		return nil, drv.RowErr(fmt.Sprintf("account %s", id), err)
	}
	return a, nil
}

// GetAccountByKey returns the account whose key has the given thumbprint.
func (s *Store) GetAccountByKey(ctx context.Context, thumbprint acme.Thumbprint) (*acme.Account, error) {
	what := fmt.Sprintf("account with key %q", thumbprint)
	if !validKey(string(thumbprint)) {
		return nil, drv.NotFound(what)
	}
	a, err := sqlrow.ScanAccount(s.pool.QueryRow(ctx, `SELECT `+sqlrow.AccountCols+` FROM accounts WHERE key_thumbprint = $1`, string(thumbprint)))
	if err != nil {
		return nil, drv.RowErr(what, err)
	}
	return a, nil
}

// accountExists is the query missErr asks after a compare-and-set on an
// account misses.
const accountExists = `SELECT 1 FROM accounts WHERE id = $1`

// UpdateAccount writes a.Contact and a.Status if the stored status is still
// from.
func (s *Store) UpdateAccount(ctx context.Context, a *acme.Account, from acme.Status) error {
	u, err := sqlrow.NewAccountUpdate(drv, a)
	if err != nil {
		return err
	}
	return s.cas(ctx, u.What, "status is not "+string(from),
		`UPDATE accounts SET contact = $1, status = $2 WHERE id = $3 AND status = $4`,
		[]any{u.Contact, u.Status, u.ID, string(from)}, accountExists, u.ID)
}

// ChangeAccountKey replaces the key of account id, if its thumbprint is
// still old, with newKey, whose thumbprint is new. It fails with an error
// wrapping acme.ErrConflict if new belongs to an account or the old key
// no longer matches.
func (s *Store) ChangeAccountKey(ctx context.Context, id acme.AccountID, old, new acme.Thumbprint, newKey []byte) error {
	k, err := sqlrow.NewKeyChange(drv, id, new)
	if err != nil {
		return err
	}
	if !validKey(string(old)) {
		old = "" // matches no account: a conflict, or not found
	}
	err = s.cas(ctx, k.What, "old key no longer matches",
		`UPDATE accounts SET key_thumbprint = $1, jwk = $2 WHERE id = $3 AND key_thumbprint = $4`,
		[]any{string(new), newKey, k.ID, string(old)}, accountExists, k.ID)
	if isUniqueViolation(err) {
		return k.InUse(drv, new)
	}
	return err
}
