package sqlite

import (
	"context"
	"fmt"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// challengeArgs checks challenge c of authorization authzID for insertion
// and returns its encoded Error.
func challengeArgs(authzID string, c *acme.Challenge) (*string, error) {
	if c.ID == "" {
		return nil, drv.Errorf("%s: empty id", createChallengeWhat(authzID, c))
	}
	if !sqlrow.TimesInRange(c.Validated, c.UpdatedAt) {
		return nil, drv.CheckTimes(createChallengeWhat(authzID, c), c.Validated, c.UpdatedAt)
	}
	return sqlrow.NullableJSON(createChallengeWhat(authzID, c)+": error", c.Error)
}

// createChallengeWhat names the creation of a challenge in errors.
func createChallengeWhat(authzID string, c *acme.Challenge) string {
	return fmt.Sprintf("create challenge %q of authorization %q", c.ID, authzID)
}

// insertChallenge inserts challenge c of authorization authzID at position
// pos, with problem its Error encoded by challengeArgs. c.AuthzID is
// ignored.
func insertChallenge(w *writeTx, authzID string, pos int, c *acme.Challenge, problem *string) error {
	_, err := w.exec(wInsertChallenge,
		c.ID, authzID, pos, string(c.Type), c.Token, string(c.Status), sqlrow.ToNanos(c.Validated),
		problem, sqlrow.ToNanos(c.UpdatedAt))
	if err != nil {
		return writeErr(createChallengeWhat(authzID, c), err)
	}
	return nil
}

// GetChallenge returns the challenge with the given ID, AuthzID set, from
// the cache (cache.go) if its authorization is there.
func (s *Store) GetChallenge(ctx context.Context, id string) (*acme.Challenge, error) {
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, err
	}
	if c := s.cache.challenge(id); c != nil {
		return c, nil
	}
	c, err := sqlrow.ScanChallenge(s.queryRow(ctx, rGetChallenge, id))
	if err != nil {
		return nil, drv.RowErr(fmt.Sprintf("challenge %q", id), err)
	}
	return c, nil
}

// UpdateChallenge writes c.Status, c.Error, c.Validated and c.UpdatedAt if
// the stored status is still from.
func (s *Store) UpdateChallenge(ctx context.Context, c *acme.Challenge, from acme.Status) error {
	what := fmt.Sprintf("update challenge %q", c.ID)
	if err := drv.CheckTimes(what, c.Validated, c.UpdatedAt); err != nil {
		return err
	}
	problem, err := sqlrow.NullableJSON(what+": error", c.Error)
	if err != nil {
		return err
	}
	id, status, validated, updated := c.ID, string(c.Status), sqlrow.ToNanos(c.Validated), sqlrow.ToNanos(c.UpdatedAt)
	return s.write(ctx, func(w *writeTx) error {
		res, err := w.exec(wUpdateChallenge, status, problem, validated, updated, id, string(from))
		if err != nil {
			return drv.Wrap(what, err)
		}
		if err := checkAffected(w, res, what, "status is not "+string(from), wChallengeExists, id); err != nil {
			return err
		}
		w.edit(editChallenge(id, acme.Status(status), problem, validated, updated))
		return nil
	})
}
