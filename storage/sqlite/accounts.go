// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"fmt"

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
	var id int64
	err = s.write(ctx, func(w *writeTx) error {
		res, err := w.exec(wInsertAccount, args...)
		if err != nil {
			return writeErr("create account", err)
		}
		if id, err = res.LastInsertId(); err != nil {
			return drv.Errorf("create account: last insert id: %w", err)
		}
		if a.EABKeyID != "" {
			return bindEABKey(w, a.EABKeyID, id, a.CreatedAt)
		}
		return nil
	})
	if err != nil {
		return err
	}
	a.ID = sqlrow.FormatAccountID(id)
	return nil
}

// GetAccount returns the account with the given ID, from the cache
// (cache.go) or else read.
func (s *Store) GetAccount(ctx context.Context, id acme.AccountID) (*acme.Account, error) {
	n, ok := sqlrow.ParseAccountID(id)
	if !ok {
		return nil, drv.Errorf("account %q: %w", id, acme.ErrNotFound)
	}
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, err
	}
	key := sqlrow.FormatAccountID(n)
	if a := s.cache.account(key); a != nil {
		return a, nil
	}
	gen := s.cache.generation()
	a, err := sqlrow.ScanAccount(s.queryRow(ctx, rGetAccount, n))
	if err != nil {
		return nil, drv.RowErr(fmt.Sprintf("account %s", id), err)
	}
	s.cache.fillAccount(a, gen)
	return a, nil
}

// GetAccountByKey returns the account whose key has the given thumbprint.
func (s *Store) GetAccountByKey(ctx context.Context, thumbprint acme.Thumbprint) (*acme.Account, error) {
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, err
	}
	a, err := sqlrow.ScanAccount(s.queryRow(ctx, rGetAccountByKey, string(thumbprint)))
	if err != nil {
		return nil, drv.RowErr(fmt.Sprintf("account with key %s", thumbprint), err)
	}
	return a, nil
}

// UpdateAccount writes a.Contact and a.Status if the stored status is still
// from.
func (s *Store) UpdateAccount(ctx context.Context, a *acme.Account, from acme.Status) error {
	u, err := sqlrow.NewAccountUpdate(drv, a)
	if err != nil {
		return err
	}
	return s.write(ctx, func(w *writeTx) error {
		res, err := w.exec(wUpdateAccount, u.Contact, u.Status, u.ID, string(from))
		if err != nil {
			return drv.Wrap(u.What, err)
		}
		if err := checkAffected(w, res, u.What, "status is not "+string(from), wAccountExists, u.ID); err != nil {
			return err
		}
		w.edit(editDropAccount(sqlrow.FormatAccountID(u.ID)))
		return nil
	})
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
	return s.write(ctx, func(w *writeTx) error {
		res, err := w.exec(wChangeAccountKey, string(new), newKey, k.ID, string(old))
		if err != nil {
			if isUniqueViolation(err) {
				return k.InUse(drv, new)
			}
			return drv.Wrap(k.What, err)
		}
		if err := checkAffected(w, res, k.What, "old key no longer matches", wAccountExists, k.ID); err != nil {
			return err
		}
		w.edit(editDropAccount(sqlrow.FormatAccountID(k.ID)))
		return nil
	})
}
