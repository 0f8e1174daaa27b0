package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/weir-pki/weir/acme"
)

// challengeCols are the columns scanChallenge reads, in order.
const challengeCols = "id, authz_id, type, token, status, validated, error, updated_at"

// scanChallenge reads one row of challengeCols.
func scanChallenge(row scanner) (*acme.Challenge, error) {
	var (
		c                  acme.Challenge
		validated, updated sql.NullInt64
		problem            sql.NullString
	)
	if err := row.Scan(&c.ID, &c.AuthzID, &c.Type, &c.Token, &c.Status, &validated, &problem, &updated); err != nil {
		return nil, err
	}
	c.Validated, c.UpdatedAt = fromNanos(validated), fromNanos(updated)
	var err error
	if c.Error, err = problemFromJSON(fmt.Sprintf("challenge %q error", c.ID), problem); err != nil {
		return nil, err
	}
	return &c, nil
}

// insertChallenge inserts challenge c of authorization authzID at position
// pos. c.AuthzID is ignored.
func insertChallenge(ctx context.Context, tx *sql.Tx, authzID string, pos int, c *acme.Challenge) error {
	what := fmt.Sprintf("create challenge %q of authorization %q", c.ID, authzID)
	if c.ID == "" {
		return fmt.Errorf("sqlite: %s: empty id", what)
	}
	if err := checkTimes(what, c.Validated, c.UpdatedAt); err != nil {
		return err
	}
	problem, err := problemJSON(what+": error", c.Error)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx,
		`INSERT INTO challenges (id, authz_id, position, type, token, status, validated, error, updated_at)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, authzID, pos, string(c.Type), c.Token, string(c.Status), toNanos(c.Validated),
		problem, toNanos(c.UpdatedAt))
	if err != nil {
		return insertErr(what, err)
	}
	return nil
}

// GetChallenge returns the challenge with the given ID, AuthzID set.
func (s *Store) GetChallenge(ctx context.Context, id string) (*acme.Challenge, error) {
	c, err := scanChallenge(s.r.QueryRowContext(ctx,
		`SELECT `+challengeCols+` FROM challenges WHERE id = ?`, id))
	if err != nil {
		return nil, rowErr(fmt.Sprintf("challenge %q", id), err)
	}
	return c, nil
}

// UpdateChallenge writes c.Status, c.Error, c.Validated and c.UpdatedAt if
// the stored status is still from.
func (s *Store) UpdateChallenge(ctx context.Context, c *acme.Challenge, from acme.Status) error {
	what := fmt.Sprintf("update challenge %q", c.ID)
	if err := checkTimes(what, c.Validated, c.UpdatedAt); err != nil {
		return err
	}
	problem, err := problemJSON(what+": error", c.Error)
	if err != nil {
		return err
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx,
			`UPDATE challenges SET status = ?, error = ?, validated = ?, updated_at = ?
			 WHERE id = ? AND status = ?`,
			string(c.Status), problem, toNanos(c.Validated), toNanos(c.UpdatedAt), c.ID, string(from))
		if err != nil {
			return fmt.Errorf("sqlite: %s: %w", what, err)
		}
		return checkAffected(ctx, tx, res, what, "status is not "+string(from),
			`SELECT 1 FROM challenges WHERE id = ?`, c.ID)
	})
}

// ListChallenges returns up to limit challenges in status whose UpdatedAt
// is before olderThan, least recently updated first.
func (s *Store) ListChallenges(ctx context.Context, status acme.Status, olderThan time.Time, limit int) ([]*acme.Challenge, error) {
	what := fmt.Sprintf("list %s challenges", status)
	if limit <= 0 {
		return nil, fmt.Errorf("sqlite: %s: limit %d is not positive", what, limit)
	}
	if err := checkTimes(what, olderThan); err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx,
		`SELECT `+challengeCols+` FROM challenges WHERE status = ? AND updated_at < ?
		 ORDER BY updated_at, id LIMIT ?`,
		string(status), toNanos(olderThan), limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", what, err)
	}
	defer rows.Close()
	var cs []*acme.Challenge
	for rows.Next() {
		c, err := scanChallenge(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: %s: %w", what, err)
		}
		cs = append(cs, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", what, err)
	}
	return cs, nil
}
