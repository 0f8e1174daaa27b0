// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/postgres"
)

// Background work that one process at a time runs among those sharing the
// ACME store (acme.Service.RunLeased, docs/ARCHITECTURE.md "Replicas").

// The names of the store's leases of background work (the CRL schedule's
// is acme's own, "crl").
const (
	leaseNonceSweep = "nonce-sweep"
	// leaseLimiterSweep, with the host name and the file's path, names
	// the sweep of a SQLite limiter file: the processes that share the
	// file (replicas on PostgreSQL with one data directory) take turns,
	// and another host's file of the same path, another file, has a
	// lease of its own.
	leaseLimiterSweep = "ratelimit-sweep:"
	// leaseLogSequencer is the verifiable log's sequencer: one replica
	// integrates the pending entries and signs the checkpoints.
	leaseLogSequencer = "log-sequencer"
	// leaseLogCosigner is the exchange with the log's witnesses.
	leaseLogCosigner = "log-cosigner"
)

// sweepInterval is how often the sweeps of idle limiter buckets and of
// expired shared nonces run.
const sweepInterval = time.Minute

// newOwner returns this process's name in the store's leases
// (acme.Config.Owner): the host name, which tells an operator where a job
// runs, and 48 random bits, so that two processes of one host, or one and
// its restart, differ.
func newOwner() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "weir"
	}
	var b [6]byte
	rand.Read(b[:])
	return host + "-" + hex.EncodeToString(b[:])
}

// limiterSweepLease returns the lease name of the sweep of the SQLite
// limiter file at path.
func limiterSweepLease(path string) string {
	host, _ := os.Hostname()
	return leaseLimiterSweep + host + ":" + path
}

// runLimiterHousekeeping runs the limiter backend's housekeeping until
// ctx ends: a sweep of shared rows under its lease, or the in-process
// one of the memory backend on every process; Redis needs none.
func (s *Server) runLimiterHousekeeping(ctx context.Context) error {
	if f := s.backend.fallback; f != nil {
		go func() { _ = f.Run(ctx, time.Minute) }() // returns nil when ctx ends
	}
	switch {
	case s.backend.sweep != nil:
		return s.svc.RunLeased(ctx, s.backend.sweepLease, sweepInterval, s.backend.sweep)
	case s.backend.run != nil:
		return s.backend.run(ctx)
	}
	return nil
}

// runNonces runs the housekeeping of a nonce store that has some until
// ctx ends: the PostgreSQL store's sweep of expired nonces, on one replica
// at a time; Redis and the in-process store have none.
func runNonces(ctx context.Context, ns acme.NonceStore, svc *acme.Service) error {
	if pn, ok := ns.(*postgres.Nonces); ok {
		return svc.RunLeased(ctx, leaseNonceSweep, sweepInterval, func(ctx context.Context) error {
			_, err := pn.Sweep(ctx)
			return err
		})
	}
	return nil
}
