package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/weir-pki/weir/acme"
)

// authzCols are the columns scanAuthz reads, in order.
const authzCols = "id, account_id, ident_type, ident_value, wildcard, status, expires, created_at"

// scanAuthz reads one row of authzCols; the challenges are left empty.
func scanAuthz(row scanner) (*acme.Authorization, error) {
	var (
		a                  acme.Authorization
		accountID          int64
		wildcard           int64
		expires, createdAt sql.NullInt64
	)
	if err := row.Scan(&a.ID, &accountID, &a.Identifier.Type, &a.Identifier.Value, &wildcard,
		&a.Status, &expires, &createdAt); err != nil {
		return nil, err
	}
	a.AccountID = formatAccountID(accountID)
	a.Wildcard = wildcard != 0
	a.Expires, a.CreatedAt = fromNanos(expires), fromNanos(createdAt)
	return &a, nil
}

// insertAuthz inserts a new authorization and its challenges, which get the
// positions of their order in a.Challenges.
func insertAuthz(ctx context.Context, tx *sql.Tx, a *acme.Authorization) error {
	what := fmt.Sprintf("create authorization %q", a.ID)
	if a.ID == "" {
		return fmt.Errorf("sqlite: %s: empty id", what)
	}
	accountID, ok := parseAccountID(a.AccountID)
	if !ok {
		return fmt.Errorf("sqlite: %s: account %q: %w", what, a.AccountID, acme.ErrNotFound)
	}
	if err := checkTimes(what, a.Expires, a.CreatedAt); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx,
		`INSERT INTO authzs (id, account_id, ident_type, ident_value, wildcard, status, expires, created_at)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, accountID, string(a.Identifier.Type), a.Identifier.Value, boolInt(a.Wildcard),
		string(a.Status), toNanos(a.Expires), toNanos(a.CreatedAt))
	if err != nil {
		return insertErr(what, err)
	}
	for i, c := range a.Challenges {
		if err := insertChallenge(ctx, tx, a.ID, i, c); err != nil {
			return err
		}
	}
	return nil
}

// loadChallenges sets a.Challenges to its challenges in creation order.
func loadChallenges(ctx context.Context, q querier, a *acme.Authorization) error {
	rows, err := q.QueryContext(ctx,
		`SELECT `+challengeCols+` FROM challenges WHERE authz_id = ? ORDER BY position`, a.ID)
	if err != nil {
		return fmt.Errorf("sqlite: challenges of authorization %q: %w", a.ID, err)
	}
	defer rows.Close()
	a.Challenges = nil
	for rows.Next() {
		c, err := scanChallenge(rows)
		if err != nil {
			return fmt.Errorf("sqlite: challenges of authorization %q: %w", a.ID, err)
		}
		a.Challenges = append(a.Challenges, c)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: challenges of authorization %q: %w", a.ID, err)
	}
	return nil
}

// GetAuthz returns the authorization with the given ID and its challenges,
// in creation order.
func (s *Store) GetAuthz(ctx context.Context, id string) (*acme.Authorization, error) {
	var a *acme.Authorization
	err := s.read(ctx, func(tx *sql.Tx) error {
		var err error
		a, err = scanAuthz(tx.QueryRowContext(ctx, `SELECT `+authzCols+` FROM authzs WHERE id = ?`, id))
		if err != nil {
			return rowErr(fmt.Sprintf("authorization %q", id), err)
		}
		return loadChallenges(ctx, tx, a)
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// FindValidAuthz returns the account's valid authorization for ident and
// wildcard that expires after notBefore, the latest-expiring one if there
// are several. The error wraps acme.ErrNotFound if there is none.
func (s *Store) FindValidAuthz(ctx context.Context, accountID string, ident acme.Identifier, wildcard bool, notBefore time.Time) (*acme.Authorization, error) {
	what := fmt.Sprintf("valid authorization of account %q for %s %q (wildcard %t)",
		accountID, ident.Type, ident.Value, wildcard)
	acct, ok := parseAccountID(accountID)
	if !ok {
		return nil, fmt.Errorf("sqlite: %s: %w", what, acme.ErrNotFound)
	}
	if err := checkTimes(what, notBefore); err != nil {
		return nil, err
	}
	var a *acme.Authorization
	err := s.read(ctx, func(tx *sql.Tx) error {
		var err error
		a, err = scanAuthz(tx.QueryRowContext(ctx,
			`SELECT `+authzCols+` FROM authzs
			 WHERE account_id = ? AND ident_type = ? AND ident_value = ? AND wildcard = ?
			   AND status = ? AND expires > ?
			 ORDER BY expires DESC, id DESC LIMIT 1`,
			acct, string(ident.Type), ident.Value, boolInt(wildcard),
			string(acme.StatusValid), toNanos(notBefore)))
		if err != nil {
			return rowErr(what, err)
		}
		return loadChallenges(ctx, tx, a)
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// UpdateAuthz writes a.Status and a.Expires, and the Status, Error,
// Validated and UpdatedAt of each of a.Challenges, in one transaction, if
// the authorization's stored status is still from. A challenge that does
// not belong to the authorization gives an error wrapping acme.ErrNotFound
// and nothing is written.
func (s *Store) UpdateAuthz(ctx context.Context, a *acme.Authorization, from acme.Status) error {
	what := fmt.Sprintf("update authorization %q", a.ID)
	if err := checkTimes(what, a.Expires); err != nil {
		return err
	}
	type chArgs struct {
		id        string
		status    string
		problem   sql.NullString
		validated int64
		updated   int64
	}
	chs := make([]chArgs, len(a.Challenges))
	for i, c := range a.Challenges {
		cwhat := fmt.Sprintf("%s: challenge %q", what, c.ID)
		if err := checkTimes(cwhat, c.Validated, c.UpdatedAt); err != nil {
			return err
		}
		problem, err := problemJSON(cwhat+": error", c.Error)
		if err != nil {
			return err
		}
		chs[i] = chArgs{c.ID, string(c.Status), problem, toNanos(c.Validated), toNanos(c.UpdatedAt)}
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx,
			`UPDATE authzs SET status = ?, expires = ? WHERE id = ? AND status = ?`,
			string(a.Status), toNanos(a.Expires), a.ID, string(from))
		if err != nil {
			return fmt.Errorf("sqlite: %s: %w", what, err)
		}
		if err := checkAffected(ctx, tx, res, what, "status is not "+string(from),
			`SELECT 1 FROM authzs WHERE id = ?`, a.ID); err != nil {
			return err
		}
		for _, c := range chs {
			res, err := tx.ExecContext(ctx,
				`UPDATE challenges SET status = ?, error = ?, validated = ?, updated_at = ?
				 WHERE id = ? AND authz_id = ?`,
				c.status, c.problem, c.validated, c.updated, c.id, a.ID)
			if err != nil {
				return fmt.Errorf("sqlite: %s: challenge %q: %w", what, c.id, err)
			}
			n, err := res.RowsAffected()
			if err != nil {
				return fmt.Errorf("sqlite: %s: challenge %q: rows affected: %w", what, c.id, err)
			}
			if n == 0 {
				return fmt.Errorf("sqlite: %s: challenge %q: %w", what, c.id, acme.ErrNotFound)
			}
		}
		return nil
	})
}

// CountPendingAuthzs counts the account's pending authorizations that
// expire after now.
func (s *Store) CountPendingAuthzs(ctx context.Context, accountID string, now time.Time) (int, error) {
	what := fmt.Sprintf("count pending authorizations of account %q", accountID)
	acct, ok := parseAccountID(accountID)
	if !ok {
		return 0, nil
	}
	if err := checkTimes(what, now); err != nil {
		return 0, err
	}
	var n int
	err := s.r.QueryRowContext(ctx,
		`SELECT count(*) FROM authzs WHERE account_id = ? AND status = ? AND expires > ?`,
		acct, string(acme.StatusPending), toNanos(now)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("sqlite: %s: %w", what, err)
	}
	return n, nil
}
