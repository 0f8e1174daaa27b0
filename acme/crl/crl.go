// SPDX-License-Identifier: Apache-2.0

// Package crl makes the CRLs that each weir replica signs and serves
// (RFC 5280 §5): one per issuer and shard (a Scope), numbered by the
// store so that the numbers grow across replicas, made anew when the
// store has seen a revocation since (by any replica) or when they are
// Config.Interval old, and, with Config.Delay > 0, by a background
// updater (update.go) so that no reader waits for a signature.
//
// A worked example: with the default delay of 5 s the updater wakes every
// 500 ms (a tenth of it) for one count (RevokedCount). When the last
// regeneration took 1 s, a revocation first seen at a wake-up is put on
// the CRLs at the wake-up where its age + 2 × 0.5 s + 1 s reaches 5 s,
// 3 s after it was seen, so that it is published within 5 s of being
// stored; every revocation seen in those 3 s goes on the same
// regeneration, and with 16 shards only the CRLs of the shards whose
// count moved are listed and signed.
package crl

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weir-pki/weir/ca"
)

// Issuer is one issuer whose CRLs a Maker makes: its ID (the store's
// Revocation.Issuer) and the CA that signs them.
type Issuer struct {
	ID string
	CA *ca.CA
}

// Config is what a Maker needs.
type Config struct {
	// Store counts, lists and numbers the revocations.
	Store Store
	// Issuers returns the issuers whose CRLs are made.
	Issuers func() []Issuer
	// Interval is how old a CRL may be before it is made anew; its
	// nextUpdate is 2·Interval + 24 h after it is made.
	Interval time.Duration
	// Delay is how long a revocation may take to reach the CRLs the
	// updater makes (Run); 0 makes them on the read after a revocation.
	Delay time.Duration
	// Now is the clock; Log receives the updater's errors.
	Now func() time.Time
	Log *slog.Logger
}

// Maker holds this replica's current CRLs, one per scope (issuer and
// shard), and makes them.
type Maker struct {
	cfg Config
	mu  sync.Mutex // serialises regeneration
	// served is the CRLs readers get, swapped whole by a regeneration, so
	// that with the updater running no reader waits for a signature.
	served atomic.Pointer[generation]
	// updating is set while the updater (update.go) runs.
	updating atomic.Bool
	// regenerations counts the regenerations (weir_crl_regenerations_total),
	// each of which signs the CRLs of one or more scopes; signed counts
	// the CRLs signed, by scope (weir_crl_generations_total).
	regenerations atomic.Int64
	signed        sync.Map // Scope -> *atomic.Int64
	// lastDuration is how long the last regeneration took, in
	// nanoseconds: the updater starts the next that much early.
	lastDuration atomic.Int64
}

// New returns a Maker that has made no CRL yet.
func New(cfg Config) *Maker { return &Maker{cfg: cfg} }

// generation is the CRLs of every scope as one regeneration left them.
type generation struct {
	// at is when the oldest of the CRLs was made (every one is remade
	// once it is Interval old).
	at time.Time
	// mark is the store's revocation mark (revocationMark) read just
	// before the revocations that the CRLs list.
	mark string
	der  map[Scope][]byte
	made map[Scope]time.Time
	// counts are the store's revocation counts of each scope
	// (ScopedRevocations) read before the CRLs listed them.
	counts map[Scope]int64
}

// target is one CRL to make: its scope, the CA that signs it, and the
// URLs its issuingDistributionPoint names (none for none).
type target struct {
	Scope
	ca  *ca.CA
	idp []string
}

// targets are the CRLs this Maker makes: for each issuer, shard 0 (its
// CRL URL, where the certificates issued without shards are), and with
// shards (ca.Config.CRLShards: those new certificates name and those kept
// for older ones), shards 1 to M, each a partition of the issuer's CRLs
// named by its issuingDistributionPoint, as is shard 0 then.
func (m *Maker) targets() []target {
	var out []target
	for _, is := range m.cfg.Issuers() {
		cfg := is.CA.Config()
		base := target{Scope: Scope{Issuer: is.ID}, ca: is.CA}
		if cfg.CRLShards() > 0 {
			base.idp = cfg.CRLIDP(cfg.CRLURL)
		}
		out = append(out, base)
		for k := 1; k <= cfg.CRLShards(); k++ {
			out = append(out, target{Scope: Scope{Issuer: is.ID, Shard: k}, ca: is.CA, idp: cfg.CRLIDP(cfg.CRLShardURL(k))})
		}
	}
	return out
}

// Regenerations is the number of times this Maker has made new CRLs.
func (m *Maker) Regenerations() int64 { return m.regenerations.Load() }

// Signed is the number of CRLs this Maker has signed, by scope.
func (m *Maker) Signed() map[Scope]int64 {
	out := map[Scope]int64{}
	m.signed.Range(func(k, v any) bool {
		out[k.(Scope)] = v.(*atomic.Int64).Load()
		return true
	})
	return out
}

// Get returns this replica's CRL of scope sc (nil for a scope it does not
// make) and when it was made. While the updater runs (Delay > 0,
// update.go) it is the last one made, which lists every revocation stored
// more than Delay ago, and no reader waits for a signature; before the
// first one is made, and with Delay 0, it lists every certificate whose
// revocation was stored before the call, by this replica or any other,
// making new CRLs when the store has seen a revocation since this
// replica's were made, when they are older than Interval, or when there
// are none. It fails when the store cannot be asked: a CRL that might
// miss a revocation is not served.
func (m *Maker) Get(ctx context.Context, sc Scope) ([]byte, time.Time, error) {
	if g := m.served.Load(); g != nil && m.updating.Load() {
		return g.der[sc], g.made[sc], nil
	}
	// Read before the lock, so that concurrent readers do not queue on
	// it: a mark read now counts every revocation stored before the call,
	// and a CRL made at that mark or later lists them all.
	mark, err := m.revocationMark(ctx)
	if err != nil {
		return nil, time.Time{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if g := m.served.Load(); g == nil || g.mark != mark || m.stale(g) {
		if err := m.regenerate(ctx, g == nil || m.stale(g)); err != nil {
			return nil, time.Time{}, err
		}
	}
	g := m.served.Load()
	return g.der[sc], g.made[sc], nil
}

// stale reports whether g is older than Interval: only one replica at a
// time regenerates on the schedule (acme's RunLeased), so the others make
// theirs anew when it is read or by their updater.
func (m *Maker) stale(g *generation) bool {
	return m.cfg.Interval > 0 && !m.cfg.Now().Before(g.at.Add(m.cfg.Interval))
}

// revocationMark is a value that changes whenever a certificate is
// revoked: the store's RevokedCount.
func (m *Maker) revocationMark(ctx context.Context) (string, error) {
	n, err := m.cfg.Store.RevokedCount(ctx)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("count:%d", n), nil
}

// Regenerate signs a new CRL for every scope (each issuer, each of its
// shards), listing every revoked, unexpired certificate of the scope.
// Its number comes from the store (Numberer), so that each scope's
// numbers grow across the replicas.
func (m *Maker) Regenerate(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.regenerate(ctx, true)
}
