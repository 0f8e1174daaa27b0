package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// authzInsert is what insertAuthz needs besides the authorization: its
// checked and encoded fields.
type authzInsert struct {
	what      string
	accountID int64
	problems  []*string // the encoded Error of each challenge
}

// authzArgs checks a new authorization and its challenges and encodes what
// insertAuthz needs, so that the transaction only runs statements.
func authzArgs(a *acme.Authorization) (*authzInsert, error) {
	what := fmt.Sprintf("create authorization %q", a.ID)
	if a.ID == "" {
		return nil, drv.Errorf("%s: empty id", what)
	}
	accountID, ok := sqlrow.ParseAccountID(a.AccountID)
	if !ok {
		return nil, drv.Errorf("%s: account %q: %w", what, a.AccountID, acme.ErrNotFound)
	}
	if err := drv.CheckTimes(what, a.Expires, a.CreatedAt); err != nil {
		return nil, err
	}
	args := &authzInsert{what: what, accountID: accountID, problems: make([]*string, len(a.Challenges))}
	for i, c := range a.Challenges {
		cwhat := fmt.Sprintf("create challenge %q of authorization %q", c.ID, a.ID)
		if c.ID == "" {
			return nil, drv.Errorf("%s: empty id", cwhat)
		}
		if err := drv.CheckTimes(cwhat, c.Validated, c.UpdatedAt); err != nil {
			return nil, err
		}
		var err error
		if args.problems[i], err = sqlrow.NullableJSON(cwhat+": error", c.Error); err != nil {
			return nil, err
		}
	}
	return args, nil
}

// insertAuthz inserts a new authorization and its challenges, which get the
// positions of their order in a.Challenges (c.AuthzID is ignored). args
// are a's arguments, from authzArgs.
func insertAuthz(ctx context.Context, tx pgx.Tx, a *acme.Authorization, args *authzInsert) error {
	_, err := tx.Exec(ctx, `INSERT INTO authzs (id, account_id, ident_type, ident_value, wildcard, status, expires, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		a.ID, args.accountID, string(a.Identifier.Type), a.Identifier.Value, a.Wildcard,
		string(a.Status), sqlrow.ToNanos(a.Expires), sqlrow.ToNanos(a.CreatedAt))
	if err != nil {
		return writeErr(args.what, err)
	}
	for i, c := range a.Challenges {
		_, err := tx.Exec(ctx, `INSERT INTO challenges (id, authz_id, position, type, token, status, validated, error, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			c.ID, a.ID, i, string(c.Type), c.Token, string(c.Status), sqlrow.ToNanos(c.Validated),
			args.problems[i], sqlrow.ToNanos(c.UpdatedAt))
		if err != nil {
			return writeErr(fmt.Sprintf("create challenge %q of authorization %q", c.ID, a.ID), err)
		}
	}
	return nil
}

// queryAuthz runs a query of sqlrow.AuthzChallengeCols and reads its one
// authorization.
func (s *Store) queryAuthz(ctx context.Context, what, query string, args ...any) (*acme.Authorization, error) {
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, drv.Wrap(what, err)
	}
	defer rows.Close()
	a, err := sqlrow.ScanAuthzRows(rows)
	if err != nil {
		return nil, drv.RowErr(what, err)
	}
	return a, nil
}

// GetAuthz returns the authorization with the given ID and its challenges,
// in creation order, read in one query.
func (s *Store) GetAuthz(ctx context.Context, id string) (*acme.Authorization, error) {
	what := fmt.Sprintf("authorization %q", id)
	if !validKey(id) {
		return nil, drv.NotFound(what)
	}
	return s.queryAuthz(ctx, what, `SELECT `+sqlrow.AuthzChallengeCols+`
		FROM authzs AS a LEFT JOIN challenges AS c ON c.authz_id = a.id
		WHERE a.id = $1 ORDER BY c.position`, id)
}

// FindValidAuthz returns the account's valid authorization for ident and
// wildcard that expires after notBefore, the latest-expiring one if there
// are several (then the greatest ID). The error wraps acme.ErrNotFound if
// there is none.
func (s *Store) FindValidAuthz(ctx context.Context, accountID string, ident acme.Identifier, wildcard bool, notBefore time.Time) (*acme.Authorization, error) {
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
	type chArgs struct {
		id                 string
		status             string
		problem            *string
		validated, updated int64
	}
	chs := make([]chArgs, len(a.Challenges))
	for i, c := range a.Challenges {
		cwhat := fmt.Sprintf("%s: challenge %q", what, c.ID)
		if !validKey(c.ID) {
			return drv.Errorf("%s: %w", cwhat, acme.ErrNotFound)
		}
		if err := drv.CheckTimes(cwhat, c.Validated, c.UpdatedAt); err != nil {
			return err
		}
		problem, err := sqlrow.NullableJSON(cwhat+": error", c.Error)
		if err != nil {
			return err
		}
		chs[i] = chArgs{c.ID, string(c.Status), problem, sqlrow.ToNanos(c.Validated), sqlrow.ToNanos(c.UpdatedAt)}
	}
	return s.inTx(ctx, what, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE authzs SET status = $1, expires = $2 WHERE id = $3 AND status = $4`,
			string(a.Status), sqlrow.ToNanos(a.Expires), a.ID, string(from))
		if err != nil {
			return writeErr(what, err)
		}
		if tag.RowsAffected() == 0 {
			return missErr(ctx, tx, what, "status is not "+string(from), authzExists, a.ID)
		}
		for _, c := range chs {
			tag, err := tx.Exec(ctx, `UPDATE challenges SET status = $1, error = $2, validated = $3, updated_at = $4, `+keepLease+`
				WHERE id = $5 AND authz_id = $6`,
				c.status, c.problem, c.validated, c.updated, c.id, a.ID)
			if err != nil {
				return writeErr(fmt.Sprintf("%s: challenge %q", what, c.id), err)
			}
			if tag.RowsAffected() == 0 {
				return drv.Errorf("%s: challenge %q: %w", what, c.id, acme.ErrNotFound)
			}
		}
		return nil
	})
}
