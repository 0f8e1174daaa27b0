// SPDX-License-Identifier: Apache-2.0

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
