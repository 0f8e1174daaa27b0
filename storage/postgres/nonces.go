// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
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

// A sealed nonce: nonceIDBytes random bytes, the issue time in Unix
// milliseconds (8 bytes) and the first nonceMACBytes of their HMAC-SHA256
// under the shared key, in unpadded base64url (sealedLen characters).
const (
	nonceIDBytes  = 16
	nonceMACBytes = 16
	sealedBytes   = nonceIDBytes + 8 + nonceMACBytes
)

var sealedLen = base64.RawURLEncoding.EncodedLen(sealedBytes)

// legacyLen is the length of a nonce of the earlier release (16 random
// bytes, a row of the nonces table), still redeemed during an upgrade.
var legacyLen = base64.RawURLEncoding.EncodedLen(16)

// nonceClockMargin is how far the replicas' clocks may disagree: a nonce
// issued this far in the future of the redeeming replica's clock still
// redeems, and a redemption's row outlives the nonce's lifetime by as
// much, so that no replica accepts a nonce whose row was swept.
const nonceClockMargin = 5 * time.Minute

// nonceCallTimeout bounds each statement of the nonces on top of the
// caller's context (docs/ARCHITECTURE.md, "Nonces").
const nonceCallTimeout = time.Second

// sweepBatch bounds the rows one sweep statement deletes, so that a sweep
// never holds many locks or runs long; sweepBatches bounds the statements
// of one sweep of each table.
const (
	sweepBatch   = 10000
	sweepBatches = 100
)

// Nonces is an acme.NonceStore shared by every replica using the same
// database: a nonce issued by one redeems at most once, on any of them.
//
// Issuing a nonce writes nothing: it is sealed with the HMAC key every
// replica reads from nonce_keys (made by the first that needs it).
// Redeeming one checks the seal and the lifetime on the replica, then
// inserts the nonce's random bytes into nonces_redeemed, where a second
// redemption conflicts. Concurrent redemptions on a replica share one
// INSERT (redeemBatch), so under load a signed request costs a fraction
// of a statement. Expiry is the replicas' clocks (see nonceClockMargin).
type Nonces struct {
	pool     querier
	lifetime time.Duration
	sweep    time.Duration
	log      *slog.Logger
	now      func() time.Time

	keyMu sync.Mutex
	key   *nonceKey // nil until read, and after the database lost it

	batch redeemBatch
}

// nonceKey is the shared key and its random generation.
type nonceKey struct {
	gen int64
	mac []byte
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
	n := &Nonces{pool: s.pool, lifetime: cfg.Lifetime, sweep: sweep, log: log, now: time.Now}
	n.batch.run = n.insertRedeemed
	return n, nil
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

// Nonce implements acme.NonceStore: no statement once the key is read.
func (n *Nonces) Nonce(ctx context.Context) (string, error) {
	k, err := n.sharedKey(ctx)
	if err != nil {
		return "", err
	}
	var b [sealedBytes]byte
	if _, err := rand.Read(b[:nonceIDBytes]); err != nil {
		return "", fmt.Errorf("postgres: nonce: %w", err)
	}
	binary.BigEndian.PutUint64(b[nonceIDBytes:], uint64(n.now().UnixMilli()))
	k.seal(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// seal writes the MAC of b's ID and time into its last nonceMACBytes.
func (k *nonceKey) seal(b []byte) {
	m := hmac.New(sha256.New, k.mac)
	m.Write(b[:nonceIDBytes+8])
	copy(b[nonceIDBytes+8:], m.Sum(nil))
}

// open reports whether b's MAC is right.
func (k *nonceKey) open(b []byte) bool {
	m := hmac.New(sha256.New, k.mac)
	m.Write(b[:nonceIDBytes+8])
	return hmac.Equal(m.Sum(nil)[:nonceMACBytes], b[nonceIDBytes+8:])
}

// Redeem implements acme.NonceStore. A string that is not a nonce of this
// key, or is past its lifetime, is refused without a statement.
func (n *Nonces) Redeem(ctx context.Context, v string) (bool, error) {
	if len(v) == legacyLen {
		return n.redeemLegacy(ctx, v)
	}
	if len(v) != sealedLen {
		return false, nil
	}
	var b [sealedBytes]byte
	if _, err := base64.RawURLEncoding.Decode(b[:], []byte(v)); err != nil {
		return false, nil
	}
	k, err := n.sharedKey(ctx)
	if err != nil {
		return false, err
	}
	if !k.open(b[:]) {
		return false, nil
	}
	issued := time.UnixMilli(int64(binary.BigEndian.Uint64(b[nonceIDBytes:])))
	now := n.now()
	if issued.After(now.Add(nonceClockMargin)) || now.Sub(issued) > n.lifetime {
		return false, nil
	}
	r := &redeemReq{id: b[:nonceIDBytes], expires: issued.Add(n.lifetime + nonceClockMargin), gen: k.gen}
	if err := n.batch.redeem(ctx, r); err != nil {
		return false, fmt.Errorf("postgres: redeem nonce: %w", err)
	}
	if r.keyGone {
		n.forgetKey(k)
	}
	return r.ok, nil
}

// redeemLegacy redeems a nonce of the earlier release, a row of the
// nonces table.
func (n *Nonces) redeemLegacy(ctx context.Context, v string) (bool, error) {
	if _, err := base64.RawURLEncoding.DecodeString(v); err != nil {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, nonceCallTimeout)
	defer cancel()
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

// sharedKey returns the shared key, reading it (and making it, if no
// replica has) when this replica has none.
func (n *Nonces) sharedKey(ctx context.Context) (*nonceKey, error) {
	n.keyMu.Lock()
	defer n.keyMu.Unlock()
	if n.key != nil {
		return n.key, nil
	}
	var fresh [32]byte
	var gen [8]byte
	if _, err := rand.Read(fresh[:]); err != nil {
		return nil, fmt.Errorf("postgres: nonce key: %w", err)
	}
	if _, err := rand.Read(gen[:]); err != nil {
		return nil, fmt.Errorf("postgres: nonce key: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, nonceCallTimeout)
	defer cancel()
	// The SELECT does not see the CTE's row (one snapshot): exactly one
	// of the two arms answers.
	k := &nonceKey{}
	err := n.pool.QueryRow(ctx, `WITH made AS (
			INSERT INTO nonce_keys (id, gen, key) VALUES (1, $1, $2) ON CONFLICT (id) DO NOTHING RETURNING gen, key)
		SELECT gen, key FROM made UNION ALL SELECT gen, key FROM nonce_keys WHERE id = 1`,
		int64(binary.BigEndian.Uint64(gen[:])), fresh[:]).Scan(&k.gen, &k.mac)
	if err != nil {
		return nil, fmt.Errorf("postgres: nonce key: %w", err)
	}
	n.key = k
	return k, nil
}

// forgetKey drops k, which the database no longer holds, so that the next
// call reads the new one.
func (n *Nonces) forgetKey(k *nonceKey) {
	n.keyMu.Lock()
	defer n.keyMu.Unlock()
	if n.key == k {
		n.key = nil
		n.log.Warn("the shared nonce key is gone from the database (a crash or a failover of PostgreSQL empties its unlogged tables); outstanding nonces get badNonce, which clients retry")
	}
}

// Sweep deletes expired nonces, in batches, and returns how many: the
// redeemed ones past their lifetime and, from the earlier release, the
// issued ones. Rows another replica's sweep holds are skipped.
func (n *Nonces) Sweep(ctx context.Context) (int64, error) {
	var total int64
	for _, table := range []string{"nonces_redeemed", "nonces"} {
		key := "id"
		if table == "nonces" {
			key = "value"
		}
		for range sweepBatches {
			tag, err := n.pool.Exec(ctx, `DELETE FROM `+table+` WHERE `+key+` IN (
				SELECT `+key+` FROM `+table+` WHERE expires <= now() LIMIT $1 FOR UPDATE SKIP LOCKED)`, sweepBatch)
			if err != nil {
				return total, fmt.Errorf("postgres: sweep nonces: %w", err)
			}
			total += tag.RowsAffected()
			if tag.RowsAffected() < sweepBatch {
				break
			}
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
