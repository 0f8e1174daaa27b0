// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"sync"
	"time"
)

// startQuiet is how long after start the renewal planner's first rebuild
// and the CRLs made at start wait, so that the first requests do not
// compete with them for the CPU: at a million certificates the rebuild
// reads for about 5 s and the CRLs take about 0.6 s of CPU
// (docs/performance.md, "Start-up"). A CRL read before then is made
// by its reader, at once (ShardCRL).
const startQuiet = 3 * time.Second

// Run runs everything the Service does in the background, until ctx
// ends:
//
//   - ValidationWorkers validation workers (validation.go), which take
//     the jobs of the validation queue (validationqueue.go: fair across
//     accounts, bounded) and validate each under its lease;
//   - every ClaimInterval, the claims of validation jobs and of
//     finalizations whose lease ended, left by a replica that died or by
//     a previous run (lease.go), the first ones at once;
//   - the CRL schedule, every CRLInterval on the one replica that holds
//     the "crl" lease (RunLeased, lease.go), and the CRL updater, which
//     puts a revocation on the CRLs within CRLDelay (crls.go, acme/crl);
//   - the renewal planner's rebuilds and refreshes (plan.go,
//     acme/renewal), and every planWarnEvery its warning that the plan
//     is over a capacity (planwarn.go).
//
// The planner's first rebuild and the CRLs made at start wait startDefer
// (startQuiet), so that they do not compete with the first requests.
// When ctx ends, validations already running finish (each bounded by
// ValidationTimeout); the leases of queued ones are released, so that any
// replica, or this one after a restart, claims them at once.
func (s *Service) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	s.running.Store(true)
	defer s.running.Store(false)
	for range s.cfg.ValidationWorkers {
		wg.Go(func() { s.worker(ctx) })
	}
	wg.Go(func() { _ = s.RunLeased(ctx, "crl", s.cfg.CRLInterval, s.RegenerateCRL) })
	wg.Go(func() { s.runPlanner(ctx) })
	wg.Go(func() { s.runPlanWarnings(ctx) })
	wg.Go(func() { s.runCRLUpdater(ctx) })
	s.claimJobs(ctx) // what a previous run, or a replica that died, left
	s.claimFinalizations(ctx)
	claim := time.NewTicker(s.cfg.ClaimInterval)
	defer claim.Stop()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			s.releaseQueued()
			return nil
		case <-claim.C:
			s.claimJobs(ctx)
			s.claimFinalizations(ctx)
		}
	}
}
