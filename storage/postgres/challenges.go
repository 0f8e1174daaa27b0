package postgres

import (
	"context"
	"fmt"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// GetChallenge returns the challenge with the given ID, AuthzID set.
func (s *Store) GetChallenge(ctx context.Context, id acme.ChallengeID) (*acme.Challenge, error) {
	what := fmt.Sprintf("challenge %q", id)
	if !validKey(id) {
		return nil, drv.NotFound(what)
	}
	c, err := sqlrow.ScanChallenge(s.pool.QueryRow(ctx, `SELECT `+sqlrow.ChallengeCols+` FROM challenges WHERE id = $1`, id))
	if err != nil {
		return nil, drv.RowErr(what, err)
	}
	return c, nil
}

// UpdateChallenge writes c.Status, c.Error, c.Validated and c.UpdatedAt if
// the stored status is still from.
func (s *Store) UpdateChallenge(ctx context.Context, c *acme.Challenge, from acme.Status) error {
	what := fmt.Sprintf("update challenge %q", c.ID)
	if !validKey(c.ID) {
		return drv.NotFound(what)
	}
	u, err := sqlrow.NewChallengeUpdate(drv, what, c)
	if err != nil {
		return err
	}
	return s.cas(ctx, what, "status is not "+string(from),
		`UPDATE challenges SET status = $1, error = $2, validated = $3, updated_at = $4, `+keepLease+`
		WHERE id = $5 AND status = $6`,
		[]any{u.Status, u.Error, u.Validated, u.UpdatedAt, u.ID, string(from)},
		`SELECT 1 FROM challenges WHERE id = $1`, c.ID)
}
