package sqlite

import (
	"context"
	"fmt"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// GetChallenge returns the challenge with the given ID, AuthzID set, from
// the cache (cache.go) if its authorization is there.
func (s *Store) GetChallenge(ctx context.Context, id acme.ChallengeID) (*acme.Challenge, error) {
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
	u, err := sqlrow.NewChallengeUpdate(drv, fmt.Sprintf("update challenge %q", c.ID), c)
	if err != nil {
		return err
	}
	return s.write(ctx, func(w *writeTx) error {
		res, err := w.exec(wUpdateChallenge, u.Status, u.Error, u.Validated, u.UpdatedAt, u.ID, string(from))
		if err != nil {
			return drv.Wrap(u.What, err)
		}
		if err := checkAffected(w, res, u.What, "status is not "+string(from), wChallengeExists, u.ID); err != nil {
			return err
		}
		w.edit(editChallenge(u.ID, acme.Status(u.Status), u.Error, u.Validated, u.UpdatedAt))
		return nil
	})
}
