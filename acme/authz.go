// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"errors"
	"time"
)

// GetAuthz returns the caller's authorization with its current status.
func (s *Service) GetAuthz(ctx context.Context, c Caller, id AuthzID) (*Authorization, error) {
	if p := requireAccount(c); p != nil {
		return nil, p
	}
	a, err := s.store.GetAuthz(ctx, id)
	if err != nil {
		return nil, storeErr(err, "authorization %s", id)
	}
	if a.AccountID != c.Account.ID {
		return nil, Unauthorized("authorization %s belongs to another account", id)
	}
	a.Status = authzStatus(a, s.now())
	return a, nil
}

// DeactivateAuthz deactivates a pending or valid authorization (RFC 8555
// §7.5.2).
func (s *Service) DeactivateAuthz(ctx context.Context, c Caller, id AuthzID) (*Authorization, error) {
	a, err := s.GetAuthz(ctx, c, id)
	if err != nil {
		return nil, err
	}
	from := a.Status
	if from != StatusPending && from != StatusValid {
		return nil, Malformed("authorization %s is %s; only pending or valid authorizations can be deactivated", id, from)
	}
	a.Status = StatusDeactivated
	if err := s.store.UpdateAuthz(ctx, a, from); err != nil {
		if errors.Is(err, ErrConflict) {
			return nil, Malformed("authorization %s changed concurrently; retry", id)
		}
		return nil, Internal(err)
	}
	if from == StatusPending {
		s.limits.AuthzFinished(ctx, a)
	}
	return a, nil
}

// GetChallenge returns the caller's challenge and its authorization.
func (s *Service) GetChallenge(ctx context.Context, c Caller, id ChallengeID) (*Challenge, *Authorization, error) {
	if p := requireAccount(c); p != nil {
		return nil, nil, p
	}
	ch, err := s.store.GetChallenge(ctx, id)
	if err != nil {
		return nil, nil, storeErr(err, "challenge %s", id)
	}
	a, err := s.store.GetAuthz(ctx, ch.AuthzID)
	if err != nil {
		return nil, nil, Internal(err)
	}
	if a.AccountID != c.Account.ID {
		return nil, nil, Unauthorized("challenge %s belongs to another account", id)
	}
	a.Status = authzStatus(a, s.now())
	return ch, a, nil
}

// RespondChallenge is the client's "ready for validation" (RFC 8555
// §7.5.1): it moves a pending challenge to processing, claims its
// validation job and queues it (lease.go). A challenge that is no longer
// pending is returned as it is; one of a type the rules in force no
// longer allow for the authorization is refused (challengerule.go).
func (s *Service) RespondChallenge(ctx context.Context, c Caller, id ChallengeID) (*Challenge, *Authorization, error) {
	ch, a, err := s.GetChallenge(ctx, c, id)
	if err != nil {
		return nil, nil, err
	}
	if ch.Status != StatusPending {
		return ch, a, nil
	}
	if a.Status != StatusPending {
		return nil, nil, Malformed("authorization %s is %s, so its challenges can no longer be attempted", a.ID, a.Status)
	}
	// The rules may have changed since the authorization offered it
	// (challengerule.go): refused, nothing is written and the challenge
	// stays pending.
	if p, err := s.answerable(ctx, c.Account, a, ch.Type); err != nil || p != nil {
		if err != nil {
			return nil, nil, Internal(err)
		}
		return nil, nil, p
	}
	ch.Status = StatusProcessing
	ch.UpdatedAt = s.now().UTC()
	var done chan *Authorization
	if s.cfg.ChallengeWait > 0 && s.running.Load() {
		done = make(chan *Authorization, 1)
		s.waiters.Store(ch.ID, done)
		defer s.waiters.Delete(ch.ID)
	}
	queued, err := s.startValidation(ctx, ch, a.AccountID)
	if err != nil {
		if !errors.Is(err, ErrConflict) {
			return nil, nil, Internal(err)
		}
		// A concurrent POST started it first; show its state.
		return s.GetChallenge(ctx, c, id)
	}
	if done == nil || !queued {
		return ch, a, nil
	}
	// This replica's workers validate it: answer with the outcome if it
	// comes within ChallengeWait, which spares the client its polls.
	t := time.NewTimer(s.cfg.ChallengeWait)
	defer t.Stop()
	select {
	case settled := <-done:
		for _, sc := range settled.Challenges {
			if sc.ID == ch.ID {
				return sc, settled, nil
			}
		}
	case <-t.C:
	case <-ctx.Done():
	}
	return ch, a, nil
}

// settled hands the authorization a, whose challenge id a worker has just
// validated and stored, to the POST of that challenge if it still waits.
func (s *Service) settled(id ChallengeID, a *Authorization) {
	if w, ok := s.waiters.Load(id); ok {
		select {
		case w.(chan *Authorization) <- a:
		default:
		}
	}
}
