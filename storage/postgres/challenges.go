// SPDX-License-Identifier: Apache-2.0

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
