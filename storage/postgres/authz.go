// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// queueAuthz queues the inserts of a new authorization and its
// challenges, which get the positions of their order in a.Challenges: one
// statement for the authorization, then one per challenge.
func queueAuthz(b *pgx.Batch, a *sqlrow.AuthzRow) {
	b.Queue(`INSERT INTO authzs (`+sqlrow.AuthzCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, a.Values()...)
	for i := range a.Authz.Challenges {
		b.Queue(`INSERT INTO challenges (`+sqlrow.ChallengeInsertCols+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, a.ChallengeValues(i)...)
	}
}

// queryAuthz runs a query of sqlrow.AuthzChallengeCols and reads its one
// authorization.
func (s *Store) queryAuthz(ctx context.Context, what, query string, args ...any) (*acme.Authorization, error) {
	return scanQuery(ctx, s, what, sqlrow.ScanAuthzRows, query, args...)
}

// scanQuery runs a query and reads all its rows with scan.
func scanQuery[T any](ctx context.Context, s *Store, what string, scan func(sqlrow.Rows) (T, error), query string, args ...any) (T, error) {
	var zero T
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return zero, drv.Wrap(what, err)
	}
	defer rows.Close()
	v, err := scan(rows)
	if err != nil {
		return zero, drv.RowErr(what, err)
	}
	return v, nil
}

// GetAuthz returns the authorization with the given ID and its challenges,
// in creation order, read in one query.
func (s *Store) GetAuthz(ctx context.Context, id acme.AuthzID) (*acme.Authorization, error) {
	what := fmt.Sprintf("authorization %q", id)
	if !validKey(id) {
		return nil, drv.NotFound(what)
	}
	return s.queryAuthz(ctx, what, `SELECT `+sqlrow.AuthzChallengeCols+`
		FROM authzs AS a LEFT JOIN challenges AS c ON c.authz_id = a.id
		WHERE a.id = $1 ORDER BY c.position`, id)
}

// GetAuthzs returns the authorizations ids name, with their challenges,
// in the order of ids, read in one query. The error wraps
// acme.ErrNotFound if one of them does not exist.
func (s *Store) GetAuthzs(ctx context.Context, ids []acme.AuthzID) ([]*acme.Authorization, error) {
	what := fmt.Sprintf("%d authorizations", len(ids))
	keys := make([]string, len(ids))
	for i, id := range ids {
		if !validKey(id) {
			return nil, drv.NotFound(fmt.Sprintf("authorization %q", id))
		}
		keys[i] = string(id)
	}
	switch len(ids) {
	case 0:
		return nil, nil
	case 1: // GetAuthz's statement, prepared on every connection already
		a, err := s.GetAuthz(ctx, ids[0])
		if err != nil {
			return nil, err
		}
		return []*acme.Authorization{a}, nil
	}
	got, err := scanQuery(ctx, s, what, sqlrow.ScanAuthzsRows, `SELECT `+sqlrow.AuthzChallengeCols+`
		FROM authzs AS a LEFT JOIN challenges AS c ON c.authz_id = a.id
		WHERE a.id = ANY($1) ORDER BY a.id, c.position`, keys)
	if err != nil {
		return nil, err
	}
	return sqlrow.InOrder(drv, ids, got)
}

// FindValidAuthz returns the account's valid authorization for ident and
// wildcard that expires after notBefore, the latest-expiring one if there
// are several (then the greatest ID). The error wraps acme.ErrNotFound if
// there is none.
func (s *Store) FindValidAuthz(ctx context.Context, accountID acme.AccountID, ident acme.Identifier, wildcard bool, notBefore time.Time) (*acme.Authorization, error) {
	what := fmt.Sprintf("valid authorization of account %q for %s %q (wildcard %t)",
		accountID, ident.Type, ident.Value, wildcard)
	acct, ok := sqlrow.ParseAccountID(accountID)
	if !ok || !validKey(string(ident.Type)) || !validKey(ident.Value) {
		return nil, drv.NotFound(what)
	}
	if err := drv.CheckTimes(what, notBefore); err != nil {
		return nil, err
	}
	return s.queryAuthz(ctx, what, `SELECT `+sqlrow.AuthzChallengeCols+`
		FROM (SELECT `+sqlrow.AuthzCols+` FROM authzs
		      WHERE account_id = $1 AND ident_type = $2 AND ident_value = $3 AND wildcard = $4
		        AND status = 'valid' AND expires > $5
		      ORDER BY expires DESC, id DESC LIMIT 1) AS a
		LEFT JOIN challenges AS c ON c.authz_id = a.id
		ORDER BY c.position`,
		acct, string(ident.Type), ident.Value, wildcard, sqlrow.ToNanos(notBefore))
}

// authzExists is the query missErr asks after a compare-and-set on an
// authorization misses.
const authzExists = `SELECT 1 FROM authzs WHERE id = $1`

// UpdateAuthz writes a.Status and a.Expires, and the Status, Error,
// Validated and UpdatedAt of each of a.Challenges, in one transaction, if
// the authorization's stored status is still from. A challenge that does
// not belong to the authorization gives an error wrapping acme.ErrNotFound
// and nothing is written.
func (s *Store) UpdateAuthz(ctx context.Context, a *acme.Authorization, from acme.Status) error {
	what := fmt.Sprintf("update authorization %q", a.ID)
	if !validKey(a.ID) {
		return drv.NotFound(what)
	}
	if err := drv.CheckTimes(what, a.Expires); err != nil {
		return err
	}
	chs := make([]sqlrow.ChallengeUpdate, len(a.Challenges))
	for i, c := range a.Challenges {
		cwhat := fmt.Sprintf("%s: challenge %q", what, c.ID)
		if !validKey(c.ID) {
			return drv.NotFound(cwhat)
		}
		var err error
		if chs[i], err = sqlrow.NewChallengeUpdate(drv, cwhat, c); err != nil {
			return err
		}
	}
	// One round trip for the updates, one for the COMMIT (pipeline.go).
	return s.inPipelinedTx(ctx, what, func(b *pgx.Batch) {
		b.Queue(`UPDATE authzs SET status = $1, expires = $2 WHERE id = $3 AND status = $4`,
			string(a.Status), sqlrow.ToNanos(a.Expires), a.ID, string(from))
		for _, c := range chs {
			b.Queue(`UPDATE challenges SET status = $1, error = $2, validated = $3, updated_at = $4, `+keepLease+`
				WHERE id = $5 AND authz_id = $6`,
				c.Status, c.Error, c.Validated, c.UpdatedAt, c.ID, a.ID)
		}
	}, func(q querier, tags []pgconn.CommandTag, failed *stmtError) error {
		if len(tags) > 0 && tags[0].RowsAffected() == 0 {
			// The challenges' updates are rolled back.
			return missErr(ctx, q, what, "status is not "+string(from), authzExists, a.ID)
		}
		if failed != nil {
			if failed.Index == 0 {
				return writeErr(what, failed.Err)
			}
			return writeErr(chs[failed.Index-1].What, failed.Err)
		}
		for i, c := range chs {
			if tags[i+1].RowsAffected() == 0 {
				return drv.NotFound(c.What)
			}
		}
		return nil
	})
}
