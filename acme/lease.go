// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Leases: background work that is safe with N replicas.
//
// A validation job is a challenge in processing. The replica that moves a
// challenge to processing claims it in the same write (Store.StartChallenge:
// the lease is Config.Owner's until now + ValidationLease) and queues it
// for its own workers, so it validates its own unless it dies first. Every replica claims, every
// ClaimInterval, the processing challenges whose lease is free or ended
// (Store.ClaimChallenges: FOR UPDATE SKIP LOCKED on PostgreSQL, the single
// writer on SQLite), so a job whose replica died is taken over once its
// lease ends, by exactly one replica. A worker renews the lease before it
// validates if the lease would end before ValidationTimeout, and drops the
// job if another replica holds it by then. The lease is at least the
// validation timeout, so one replica validates a challenge at a time; the
// result is stored compare-and-set all the same, so a replica whose clock
// runs ahead can at worst validate twice, never record two outcomes.
//
// A finalization is a job too: the replica that moves an order to
// processing stores the CSR and leases the order in the same write
// (Store.StartFinalize) and issues at once; every ClaimInterval each
// replica claims the processing orders whose lease ended
// (Store.ClaimOrders) and issues them from the stored CSR, so an order
// whose replica died mid-issuance is valid within a lease and a claim
// interval. FinalizeOrder is compare-and-set on processing, so of two
// replicas that both issued (the first's lease ended while it was
// stalled) exactly one stores its certificate.
//
// Periodic work that one replica at a time should do (the CRL schedule,
// the sweeps) runs under RunLeased: a named lease (Store.TryLease) that
// the holder renews at each tick and another replica takes once it ends.

// maxClaim bounds the challenges one claim takes.
const maxClaim = 1000

// releaseTimeout bounds the release of leases at shutdown.
const releaseTimeout = 5 * time.Second

// validationJob is a claimed challenge waiting for a worker.
type validationJob struct {
	id      ChallengeID
	account AccountID // the account of the challenge, whose share of the workers it uses (validationqueue.go)
	until   time.Time // when this replica's lease ends, unless renewed
}

// startValidation moves ch, still pending, to processing at ch.UpdatedAt
// (compare-and-set: ErrConflict if it is not pending), claimed by this
// replica, and queues it for the workers as a job of account, reporting
// whether it did. Without room in the queue its lease is given up
// (queue), and the next claim of any replica takes it.
func (s *Service) startValidation(ctx context.Context, ch *Challenge, account AccountID) (queued bool, err error) {
	if err := s.store.StartChallenge(ctx, ch.ID, s.cfg.Owner, ch.UpdatedAt, s.cfg.ValidationLease); err != nil {
		return false, err
	}
	return s.queue(validationJob{id: ch.ID, account: account, until: ch.UpdatedAt.Add(s.cfg.ValidationLease)}), nil
}

// claimJobs claims as many free or expired validation jobs as the queue
// has room for, and queues them.
func (s *Service) claimJobs(ctx context.Context) {
	room := min(s.jobs.room(), maxClaim)
	if room <= 0 {
		return
	}
	now := s.now().UTC()
	chs, err := s.store.ClaimChallenges(ctx, s.cfg.Owner, now, s.cfg.ValidationLease, room)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("claiming validations", "err", err)
		}
		return
	}
	for _, ch := range chs {
		// The queue shares the workers out by account, which a claimed
		// challenge names only through its authorization.
		a, err := s.store.GetAuthz(ctx, ch.AuthzID)
		if err != nil {
			s.log.Error("reading the authorization of a claimed validation; releasing it", "challenge", ch.ID, "err", err)
			s.releaseJob(ctx, ch.ID)
			continue
		}
		s.queue(validationJob{id: ch.ID, account: a.AccountID, until: now.Add(s.cfg.ValidationLease)})
	}
	if len(chs) > 0 {
		s.log.Info("claimed validations left by a stopped replica or a full queue", "count", len(chs))
	}
}

// maxClaimOrders bounds the interrupted finalizations one claim takes:
// they are issued in the claiming loop, one after the other.
const maxClaimOrders = 100

// claimFinalizations claims the processing orders whose lease ended (the
// replica finalizing them stopped before storing the certificate, or
// could not write it) and completes them.
func (s *Service) claimFinalizations(ctx context.Context) {
	orders, err := s.store.ClaimOrders(ctx, s.cfg.Owner, s.now().UTC(), s.cfg.ValidationLease, maxClaimOrders)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("claiming interrupted finalizations", "err", err)
		}
		return
	}
	if len(orders) > 0 {
		s.log.Info("claimed finalizations left by a stopped replica", "count", len(orders))
	}
	for _, o := range orders {
		if ctx.Err() != nil {
			return // the leases end and another replica, or this one restarted, claims them
		}
		s.resumeFinalize(ctx, o)
	}
}

// queue hands a claimed job to the workers, or gives its lease up when
// the queue is full; it reports whether the workers have it.
func (s *Service) queue(j validationJob) bool {
	if s.jobs.push(j) {
		return true
	}
	s.log.Warn("validation queue full; the challenge waits for a replica to claim it", "challenge", j.id)
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	s.releaseJob(ctx, j.id)
	return false
}

// holdJob reports whether this replica may validate j now: its lease
// lasts past the validation timeout, renewed if need be. False when
// another replica took the job over (its lease ended while it waited) or
// it is no longer processing.
func (s *Service) holdJob(ctx context.Context, j validationJob) bool {
	now := s.now().UTC()
	if now.Add(s.cfg.ValidationTimeout).Before(j.until) {
		return true
	}
	err := s.store.ClaimChallenge(ctx, j.id, s.cfg.Owner, now, s.cfg.ValidationLease)
	switch {
	case err == nil:
		return true
	case errors.Is(err, ErrConflict), errors.Is(err, ErrNotFound):
		return false
	default:
		// Its lease ends by itself and a replica claims it again.
		s.log.Error("renewing the lease of a validation", "challenge", j.id, "err", err)
		return false
	}
}

// releaseQueued gives up the leases of the jobs still queued, so that
// any replica (this one after a restart) claims them at once.
func (s *Service) releaseQueued() {
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	for _, j := range s.jobs.drain() {
		s.releaseJob(ctx, j.id)
	}
}

// releaseJob gives up this replica's lease of challenge id.
func (s *Service) releaseJob(ctx context.Context, id ChallengeID) {
	if err := s.store.ReleaseChallenge(ctx, id, s.cfg.Owner); err != nil {
		s.log.Warn("releasing the lease of a validation; it is claimed again when it ends", "challenge", id, "err", err)
	}
}

// RunLeased runs job every interval on one process at a time among those
// sharing the store, until ctx ends, then returns nil. At each tick the
// process takes or renews the store's lease called name for two
// intervals (Store.TryLease) and runs job only while it holds it: a
// single process holds it always, and when the holder of several dies its
// lease ends and the first to tick after that takes over. When ctx ends
// the lease is released, so another takes over at its next tick. A job
// that fails is logged and runs again at the next tick.
func (s *Service) RunLeased(ctx context.Context, name string, interval time.Duration, job func(context.Context) error) error {
	if interval <= 0 {
		return fmt.Errorf("acme: background job %s: interval %s is not positive", name, interval)
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	held := false
	defer func() {
		if !held {
			return
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		defer cancel()
		if err := s.store.ReleaseLease(rctx, name, s.cfg.Owner); err != nil {
			s.log.Warn("releasing the lease of a background job", "job", name, "err", err)
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		ok, err := s.store.TryLease(ctx, name, s.cfg.Owner, s.now().UTC(), 2*interval)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("taking the lease of a background job; trying again at the next tick", "job", name, "err", err)
			}
			continue
		}
		if ok != held {
			held = ok
			if ok {
				s.log.Info("this replica runs the background job", "job", name, "owner", s.cfg.Owner)
			} else {
				s.log.Info("another replica runs the background job", "job", name)
			}
		}
		if !ok {
			continue
		}
		if err := job(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("background job failed", "job", name, "err", err)
		}
	}
}
