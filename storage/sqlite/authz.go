// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// insertAuthz inserts a new authorization and its challenges, which get
// the positions of their order in a.Challenges.
func insertAuthz(w *writeTx, a *sqlrow.AuthzRow) error {
	if _, err := w.exec(wInsertAuthz, a.Values()...); err != nil {
		return writeErr(a.What, err)
	}
	for i := range a.Authz.Challenges {
		if _, err := w.exec(wInsertChallenge, a.ChallengeValues(i)...); err != nil {
			return writeErr(a.ChallengeWhat(i), err)
		}
	}
	return nil
}

// GetAuthz returns the authorization with the given ID and its challenges,
// in creation order, from the cache (cache.go) or else read in one query.
func (s *Store) GetAuthz(ctx context.Context, id acme.AuthzID) (*acme.Authorization, error) {
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, err
	}
	if a := s.cache.authz(id); a != nil {
		return a, nil
	}
	gen := s.cache.generation()
	rows, err := s.query(ctx, rGetAuthz, id)
	if err != nil {
		return nil, drv.Errorf("authorization %q: %w", id, err)
	}
	defer rows.Close()
	a, err := sqlrow.ScanAuthzRows(rows)
	if err != nil {
		return nil, drv.RowErr(fmt.Sprintf("authorization %q", id), err)
	}
	s.cache.fillAuthz(a, gen)
	return a, nil
}

// GetAuthzs returns the authorizations ids name, with their challenges,
// in the order of ids: each from the cache or else read in one query, in
// process (no round trip to spare). The error wraps acme.ErrNotFound if
// one of them does not exist.
func (s *Store) GetAuthzs(ctx context.Context, ids []acme.AuthzID) ([]*acme.Authorization, error) {
	out := make([]*acme.Authorization, len(ids))
	for i, id := range ids {
		a, err := s.GetAuthz(ctx, id)
		if err != nil {
			return nil, err
		}
		out[i] = a
	}
	return out, nil
}

// FindValidAuthz returns the account's valid authorization for ident and
// wildcard that expires after notBefore, the latest-expiring one if there
// are several. The error wraps acme.ErrNotFound if there is none.
func (s *Store) FindValidAuthz(ctx context.Context, accountID acme.AccountID, ident acme.Identifier, wildcard bool, notBefore time.Time) (*acme.Authorization, error) {
	acct, ok := sqlrow.ParseAccountID(accountID)
	if !ok {
		return nil, drv.NotFound(validAuthzWhat(accountID, ident, wildcard))
	}
	if !sqlrow.TimesInRange(notBefore) {
		return nil, drv.CheckTimes(validAuthzWhat(accountID, ident, wildcard), notBefore)
	}
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, err
	}
	stmt := rFindValidAuthz
	if wildcard {
		stmt = rFindValidAuthzWildcard
	}
	rows, err := s.query(ctx, stmt,
		acct, string(ident.Type), ident.Value, sqlrow.ToNanos(notBefore))
	if err != nil {
		return nil, drv.Wrap(validAuthzWhat(accountID, ident, wildcard), err)
	}
	defer rows.Close()
	a, err := sqlrow.ScanAuthzRows(rows)
	if err != nil {
		return nil, drv.RowErr(validAuthzWhat(accountID, ident, wildcard), err)
	}
	return a, nil
}

// validAuthzWhat names a FindValidAuthz in its errors.
func validAuthzWhat(accountID acme.AccountID, ident acme.Identifier, wildcard bool) string {
	return fmt.Sprintf("valid authorization of account %q for %s %q (wildcard %t)",
		accountID, ident.Type, ident.Value, wildcard)
}

// UpdateAuthz writes a.Status and a.Expires, and the Status, Error,
// Validated and UpdatedAt of each of a.Challenges, in one transaction, if
// the authorization's stored status is still from. A challenge that does
// not belong to the authorization gives an error wrapping acme.ErrNotFound
// and nothing is written.
func (s *Store) UpdateAuthz(ctx context.Context, a *acme.Authorization, from acme.Status) error {
	what := fmt.Sprintf("update authorization %q", a.ID)
	if err := drv.CheckTimes(what, a.Expires); err != nil {
		return err
	}
	chs := make([]sqlrow.ChallengeUpdate, len(a.Challenges))
	for i, c := range a.Challenges {
		var err error
		if chs[i], err = sqlrow.NewChallengeUpdate(drv, fmt.Sprintf("%s: challenge %q", what, c.ID), c); err != nil {
			return err
		}
	}
	id, status, expires := a.ID, string(a.Status), sqlrow.ToNanos(a.Expires)
	return s.write(ctx, func(w *writeTx) error {
		res, err := w.exec(wUpdateAuthz, status, expires, id, string(from))
		if err != nil {
			return drv.Wrap(what, err)
		}
		if err := checkAffected(w, res, what, "status is not "+string(from), wAuthzExists, id); err != nil {
			return err
		}
		w.edit(editAuthz(id, acme.Status(status), expires))
		for _, c := range chs {
			w.edit(editChallenge(c.ID, acme.Status(c.Status), c.Error, c.Validated, c.UpdatedAt))
			res, err := w.exec(wUpdateAuthzChallenge,
				c.Status, c.Error, c.Validated, c.UpdatedAt, c.ID, id)
			if err != nil {
				return drv.Wrap(c.What, err)
			}
			n, err := res.RowsAffected()
			if err != nil {
				return drv.Errorf("%s: rows affected: %w", c.What, err)
			}
			if n == 0 {
				return drv.NotFound(c.What)
			}
		}
		return nil
	})
}
