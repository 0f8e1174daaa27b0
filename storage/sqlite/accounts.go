package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/weir-pki/weir/acme"
)

// accountCols are the columns scanAccount reads, in order.
const accountCols = "id, key_thumbprint, jwk, contact, status, created_at, created_ip"

// scanAccount reads one row of accountCols.
func scanAccount(row scanner) (*acme.Account, error) {
	var (
		id      int64
		a       acme.Account
		contact string
		created sql.NullInt64
	)
	if err := row.Scan(&id, &a.KeyThumbprint, &a.Key, &contact, &a.Status, &created, &a.CreatedIP); err != nil {
		return nil, err
	}
	a.ID = formatAccountID(id)
	a.CreatedAt = fromNanos(created)
	var err error
	if a.Contact, err = stringsFromJSON("account "+a.ID+" contact", contact); err != nil {
		return nil, err
	}
	return &a, nil
}

// CreateAccount stores a new account and sets a.ID. It fails with an error
// wrapping acme.ErrConflict if an account with the same key thumbprint
// exists.
func (s *Store) CreateAccount(ctx context.Context, a *acme.Account) error {
	if a.KeyThumbprint == "" {
		return errors.New("sqlite: create account: empty key thumbprint")
	}
	if err := checkTimes("create account", a.CreatedAt); err != nil {
		return err
	}
	contact, err := stringsJSON("create account: contact", a.Contact)
	if err != nil {
		return err
	}
	res, err := s.w.ExecContext(ctx,
		`INSERT INTO accounts (key_thumbprint, jwk, contact, status, created_at, created_ip)
		 VALUES (?, ?, ?, ?, ?, ?)`,
		a.KeyThumbprint, a.Key, contact, string(a.Status), toNanos(a.CreatedAt), a.CreatedIP)
	if err != nil {
		return insertErr("create account", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return fmt.Errorf("sqlite: create account: last insert id: %w", err)
	}
	a.ID = formatAccountID(id)
	return nil
}

// GetAccount returns the account with the given ID.
func (s *Store) GetAccount(ctx context.Context, id string) (*acme.Account, error) {
	n, ok := parseAccountID(id)
	if !ok {
		return nil, fmt.Errorf("sqlite: account %q: %w", id, acme.ErrNotFound)
	}
	a, err := scanAccount(s.r.QueryRowContext(ctx,
		`SELECT `+accountCols+` FROM accounts WHERE id = ?`, n))
	if err != nil {
		return nil, rowErr("account "+id, err)
	}
	return a, nil
}

// GetAccountByKey returns the account whose key has the given thumbprint.
func (s *Store) GetAccountByKey(ctx context.Context, thumbprint string) (*acme.Account, error) {
	a, err := scanAccount(s.r.QueryRowContext(ctx,
		`SELECT `+accountCols+` FROM accounts WHERE key_thumbprint = ?`, thumbprint))
	if err != nil {
		return nil, rowErr("account with key "+thumbprint, err)
	}
	return a, nil
}

// UpdateAccount writes a.Contact and a.Status if the stored status is still
// from.
func (s *Store) UpdateAccount(ctx context.Context, a *acme.Account, from acme.Status) error {
	what := fmt.Sprintf("update account %q", a.ID)
	n, ok := parseAccountID(a.ID)
	if !ok {
		return fmt.Errorf("sqlite: %s: %w", what, acme.ErrNotFound)
	}
	contact, err := stringsJSON(what+": contact", a.Contact)
	if err != nil {
		return err
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx,
			`UPDATE accounts SET contact = ?, status = ? WHERE id = ? AND status = ?`,
			contact, string(a.Status), n, string(from))
		if err != nil {
			return fmt.Errorf("sqlite: %s: %w", what, err)
		}
		return checkAffected(ctx, tx, res, what, "status is not "+string(from),
			`SELECT 1 FROM accounts WHERE id = ?`, n)
	})
}

// ChangeAccountKey replaces the key of account id if its thumbprint is
// still oldThumbprint. It fails with an error wrapping acme.ErrConflict if
// newThumbprint belongs to an account or the old key no longer matches.
func (s *Store) ChangeAccountKey(ctx context.Context, id, oldThumbprint, newThumbprint string, newKey []byte) error {
	what := fmt.Sprintf("change key of account %q", id)
	n, ok := parseAccountID(id)
	if !ok {
		return fmt.Errorf("sqlite: %s: %w", what, acme.ErrNotFound)
	}
	if newThumbprint == "" {
		return fmt.Errorf("sqlite: %s: empty key thumbprint", what)
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx,
			`UPDATE accounts SET key_thumbprint = ?, jwk = ? WHERE id = ? AND key_thumbprint = ?`,
			newThumbprint, newKey, n, oldThumbprint)
		if err != nil {
			if isUniqueViolation(err) {
				return fmt.Errorf("sqlite: %s: key %s is in use: %w", what, newThumbprint, acme.ErrConflict)
			}
			return fmt.Errorf("sqlite: %s: %w", what, err)
		}
		return checkAffected(ctx, tx, res, what, "old key no longer matches",
			`SELECT 1 FROM accounts WHERE id = ?`, n)
	})
}
