// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"errors"
	"time"
)

func (s *Service) worker(ctx context.Context) {
	for {
		// Once stopping, the queued jobs are handed over (releaseQueued).
		j, ok := s.jobs.take(ctx)
		if !ok {
			return
		}
		// A validation in progress finishes even during shutdown.
		vctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ValidationTimeout)
		if s.holdJob(vctx, j) {
			if err := s.validate(vctx, j.id); err != nil {
				s.log.Error("validation", "challenge", j.id, "err", err)
			}
		}
		cancel()
		s.jobs.done(j)
	}
}

// validate runs one challenge and records the outcome on the challenge and
// its authorization in one store update (RFC 8555 §7.5.1: the
// authorization becomes valid with one valid challenge, invalid with one
// failed one).
func (s *Service) validate(ctx context.Context, id ChallengeID) error {
	ch, err := s.store.GetChallenge(ctx, id)
	if err != nil {
		return err
	}
	if ch.Status != StatusProcessing {
		return nil
	}
	a, err := s.store.GetAuthz(ctx, ch.AuthzID)
	if err != nil {
		return err
	}
	// From the store, not the account cache: the key authorization must
	// use the account's current key (RFC 8555 §8.1), and a key change made
	// on another replica seconds ago is not in this replica's cache yet.
	acct, err := s.store.GetAccount(ctx, a.AccountID)
	if err != nil {
		return err
	}
	if st := authzStatus(a, s.now()); st != StatusPending {
		// Settled some other way (another challenge, deactivation, expiry):
		// close this challenge and leave the authorization as it is, unless
		// it changed meanwhile.
		ch.Status, ch.Error, ch.UpdatedAt = StatusInvalid, Unauthorized("the authorization is %s", st).WithIdentifier(a.Identifier), s.now().UTC()
		only := *a
		only.Challenges = []*Challenge{ch}
		if err := s.store.UpdateAuthz(ctx, &only, a.Status); err != nil {
			return err
		}
		for i, c := range a.Challenges {
			if c.ID == ch.ID {
				a.Challenges[i] = ch
			}
		}
		s.settled(ch.ID, a)
		return nil
	}
	// A job queued before the rules changed (challengerule.go) is not
	// run: its challenge fails with the refusal.
	prob, err := s.answerable(ctx, acct, a, ch.Type)
	if err != nil {
		return err
	}
	var until time.Time
	if prob == nil {
		until, prob = s.runValidation(ctx, ch, a, acct)
	}
	now := s.now().UTC()
	var done *Challenge
	for _, c := range a.Challenges {
		if c.ID != ch.ID {
			continue
		}
		done = c
		c.UpdatedAt = now
		if prob == nil {
			c.Status, c.Validated = StatusValid, now
		} else {
			if prob.Identifier == nil {
				prob = prob.WithIdentifier(a.Identifier)
			}
			c.Status, c.Error = StatusInvalid, prob
		}
	}
	from := a.Status
	if prob == nil {
		a.Status, a.Expires = StatusValid, now.Add(s.cfg.ValidAuthzLifetime)
		if !until.IsZero() && until.Before(a.Expires) {
			// A dns-persist-01 record's persistUntil bounds the
			// authorization (draft-ietf-acme-dns-persist-02 §4.1).
			a.Expires = until.UTC()
		}
	} else {
		a.Status = StatusInvalid
	}
	// Only the validated challenge changed: the store writes the
	// challenges listed, so the others are left out.
	upd := a
	if done != nil {
		only := *a
		only.Challenges = []*Challenge{done}
		upd = &only
	}
	if err := s.store.UpdateAuthz(ctx, upd, from); err != nil {
		if errors.Is(err, ErrConflict) {
			return nil // deactivated meanwhile; nothing to record
		}
		return err
	}
	s.limits.AuthzFinished(ctx, a)
	s.settled(ch.ID, a)
	return nil
}

// runValidation checks challenge ch of authorization a of acct, then
// CAA, and observes the outcome.
func (s *Service) runValidation(ctx context.Context, ch *Challenge, a *Authorization, acct *Account) (time.Time, *Problem) {
	start := time.Now()
	until, prob := s.runValidator(ctx, ValidationRequest{
		Identifier: a.Identifier, Wildcard: a.Wildcard, Type: ch.Type, Token: ch.Token,
		KeyAuthorization: ch.Token + "." + string(acct.KeyThumbprint),
		AccountID:        acct.ID, Thumbprint: acct.KeyThumbprint,
	}, acct)
	if c, ok := s.validator.(CAAChecker); ok && prob == nil {
		// CAA is checked once control is shown, as Boulder does (RFC 8659
		// §3 wants it before issuance): a refusal fails the
		// authorization like a failed challenge.
		prob = c.CheckCAA(ctx, CAARequest{Identifier: a.Identifier, Wildcard: a.Wildcard, AccountID: acct.ID, Method: ch.Type})
	}
	// Observed before the result is stored, so a client that sees the
	// outcome also finds it counted.
	s.observer.Validation(ch.Type, prob == nil, time.Since(start))
	return until, prob
}

// runValidator checks req with the validator, through ValidateUntil when
// it has one. dns-persist-01 records bind an account, so they count only
// while the account is valid, read live at each attempt
// (draft-ietf-acme-dns-persist-02 §4.2: deactivation overrides them).
func (s *Service) runValidator(ctx context.Context, req ValidationRequest, acct *Account) (time.Time, *Problem) {
	if req.Type == ChallengeDNSPersist01 && acct.Status != StatusValid {
		return time.Time{}, Unauthorized("account %s is %s: its dns-persist-01 records no longer validate", acct.ID, acct.Status)
	}
	if bv, ok := s.validator.(BoundedValidator); ok {
		return bv.ValidateUntil(ctx, req)
	}
	return time.Time{}, s.validator.Validate(ctx, req)
}
