package acme

import (
	"context"
	"errors"
	"sync"
	"time"
)

// resumeAfter is how long a challenge may sit in processing before the
// sweep queues it again (a lost job, a full queue or a restart).
const resumeAfter = 30 * time.Second

// Run starts the validation workers, the resume sweep and the CRL
// schedule, and blocks until ctx ends. Validations already running finish
// (each bounded by ValidationTimeout); queued ones stay processing in the
// store and are resumed by the next start.
func (s *Service) Run(ctx context.Context) error {
	if err := s.RegenerateCRL(ctx); err != nil {
		s.log.Error("initial CRL generation failed", "err", err)
	}
	var wg sync.WaitGroup
	for range s.cfg.ValidationWorkers {
		wg.Go(func() { s.worker(ctx) })
	}
	s.resume(ctx, time.Time{}) // everything processing at start is from a previous run
	sweep := time.NewTicker(resumeAfter / 2)
	crl := time.NewTicker(s.cfg.CRLInterval)
	defer sweep.Stop()
	defer crl.Stop()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return nil
		case <-sweep.C:
			s.resume(ctx, s.now().Add(-resumeAfter))
		case <-crl.C:
			if err := s.RegenerateCRL(ctx); err != nil {
				s.log.Error("scheduled CRL generation failed", "err", err)
			}
		}
	}
}

// resume queues the challenges left processing since before cutoff (zero:
// all of them).
func (s *Service) resume(ctx context.Context, cutoff time.Time) {
	if cutoff.IsZero() {
		cutoff = s.now().Add(time.Hour)
	}
	chs, err := s.store.ListChallenges(ctx, StatusProcessing, cutoff, 1000)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("listing challenges to resume", "err", err)
		}
		return
	}
	for _, ch := range chs {
		// Touch it so the next sweep does not queue it twice.
		ch.UpdatedAt = s.now().UTC()
		if err := s.store.UpdateChallenge(ctx, ch, StatusProcessing); err != nil {
			continue
		}
		s.enqueue(ch.ID)
	}
	if len(chs) > 0 {
		s.log.Info("resumed validations", "count", len(chs))
	}
}

func (s *Service) worker(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case id := <-s.jobs:
			// A validation in progress finishes even during shutdown.
			vctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ValidationTimeout)
			if err := s.validate(vctx, id); err != nil {
				s.log.Error("validation", "challenge", id, "err", err)
			}
			cancel()
		}
	}
}

// validate runs one challenge and records the outcome on the challenge and
// its authorization in one store update (RFC 8555 §7.5.1: the
// authorization becomes valid with one valid challenge, invalid with one
// failed one).
func (s *Service) validate(ctx context.Context, id string) error {
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
		// close this challenge without touching the authorization.
		ch.Status, ch.Error, ch.UpdatedAt = StatusInvalid, Unauthorized("the authorization is %s", st).WithIdentifier(a.Identifier), s.now().UTC()
		return s.store.UpdateChallenge(ctx, ch, StatusProcessing)
	}
	start := time.Now()
	prob := s.validator.Validate(ctx, ValidationRequest{
		Identifier: a.Identifier, Type: ch.Type, Token: ch.Token,
		KeyAuthorization: ch.Token + "." + acct.KeyThumbprint,
	})
	if c, ok := s.validator.(CAAChecker); ok && prob == nil {
		// CAA is checked once control is shown, as Boulder does (RFC 8659
		// §3 wants it before issuance): a refusal fails the
		// authorization like a failed challenge.
		prob = c.CheckCAA(ctx, CAARequest{Identifier: a.Identifier, Wildcard: a.Wildcard, AccountID: acct.ID, Method: ch.Type})
	}
	// Observed before the result is stored, so a client that sees the
	// outcome also finds it counted.
	s.obs().Validation(ch.Type, prob == nil, time.Since(start))
	now := s.now().UTC()
	for _, c := range a.Challenges {
		if c.ID != ch.ID {
			continue
		}
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
	} else {
		a.Status = StatusInvalid
	}
	if err := s.store.UpdateAuthz(ctx, a, from); err != nil {
		if errors.Is(err, ErrConflict) {
			return nil // deactivated meanwhile; nothing to record
		}
		return err
	}
	s.lim().AuthzFinished(ctx, a)
	return nil
}
