// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weir-pki/weir/acme"
)

// NonceConfig configures the shared nonces.
type NonceConfig struct {
	// Lifetime is how long a nonce stays redeemable.
	Lifetime time.Duration
	// SweepInterval is how often Run deletes expired nonces; 0 means a
	// minute.
	SweepInterval time.Duration
}

// Validate reports every problem of c at once.
func (c NonceConfig) Validate() error {
	var errs []error
	if c.Lifetime <= 0 {
		errs = append(errs, fmt.Errorf("postgres: nonce lifetime %s is not positive", c.Lifetime))
	}
	if c.SweepInterval < 0 {
		errs = append(errs, fmt.Errorf("postgres: nonce sweep interval %s is negative", c.SweepInterval))
	}
	return errors.Join(errs...)
}

// nonceBytes is the entropy of a nonce; its text is the unpadded base64url
// of as many bytes, nonceLen characters.
const (
	nonceBytes = 16
	nonceLen   = (nonceBytes*8 + 5) / 6
)

// sweepBatch bounds the rows one sweep statement deletes, so that a sweep
// never holds many locks or runs long; sweepBatches bounds the statements
// of one sweep.
const (
	sweepBatch   = 10000
	sweepBatches = 100
)

// Nonces is an acme.NonceStore shared by every replica using the same
// database: a nonce is a row of the nonces table, and redeeming it deletes
// it, so that it redeems true at most once, on any replica. Expiry uses
// the database server's clock.
type Nonces struct {
	pool     querier
	lifetime time.Duration
	sweep    time.Duration
	log      *slog.Logger
}

var _ acme.NonceStore = (*Nonces)(nil)

// NewNonces returns the nonces of store s. log records failed sweeps; nil
// discards them.
func NewNonces(cfg NonceConfig, s *Store, log *slog.Logger) (*Nonces, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	sweep := cfg.SweepInterval
	if sweep == 0 {
		sweep = time.Minute
	}
	return &Nonces{pool: s.pool, lifetime: cfg.Lifetime, sweep: sweep, log: log}, nil
}

// NonceStore returns the store's shared nonces with the given lifetime
// and the default sweep interval, or nil if lifetime is not positive: what
// package server asks of a store that keeps nonces. Run the result's Run (it is
// a *Nonces) to sweep expired nonces.
func (s *Store) NonceStore(lifetime time.Duration) acme.NonceStore {
	n, err := NewNonces(NonceConfig{Lifetime: lifetime}, s, nil)
	if err != nil {
		return nil
	}
	return n
}

// Nonce implements acme.NonceStore: 16 random bytes, stored with their
// expiry.
func (n *Nonces) Nonce(ctx context.Context) (string, error) {
	var b [nonceBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("postgres: nonce: %w", err)
	}
	v := base64.RawURLEncoding.EncodeToString(b[:])
	if _, err := n.pool.Exec(ctx, `INSERT INTO nonces (value, expires) VALUES ($1, now() + $2::interval)`, v, n.lifetime); err != nil {
		return "", fmt.Errorf("postgres: nonce: %w", err)
	}
	return v, nil
}

// Redeem implements acme.NonceStore. The DELETE makes it atomic: of
// concurrent redemptions of one nonce, on any replicas, the first deletes
// the row and the others wait for it and then find none.
func (n *Nonces) Redeem(ctx context.Context, v string) (bool, error) {
	if len(v) != nonceLen {
		return false, nil
	}
	if _, err := base64.RawURLEncoding.DecodeString(v); err != nil {
		return false, nil
	}
	var one int
	err := n.pool.QueryRow(ctx, `DELETE FROM nonces WHERE value = $1 AND expires > now() RETURNING 1`, v).Scan(&one)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("postgres: redeem nonce: %w", err)
	}
	return true, nil
}

// Sweep deletes expired nonces, in batches, and returns how many. Rows
// another replica's sweep holds are skipped.
func (n *Nonces) Sweep(ctx context.Context) (int64, error) {
	var total int64
	for range sweepBatches {
		tag, err := n.pool.Exec(ctx, `DELETE FROM nonces WHERE value IN (
			SELECT value FROM nonces WHERE expires <= now() LIMIT $1 FOR UPDATE SKIP LOCKED)`, sweepBatch)
		if err != nil {
			return total, fmt.Errorf("postgres: sweep nonces: %w", err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < sweepBatch {
			break
		}
	}
	return total, nil
}

// Run sweeps expired nonces every SweepInterval until ctx ends, logging
// failures (a sweep that fails is retried at the next tick). It returns
// nil when ctx ends.
func (n *Nonces) Run(ctx context.Context) error {
	t := time.NewTicker(n.sweep)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if _, err := n.Sweep(ctx); err != nil && ctx.Err() == nil {
				n.log.Warn("sweeping expired nonces failed", "err", err)
			}
		}
	}
}
