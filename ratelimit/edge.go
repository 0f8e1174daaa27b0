// SPDX-License-Identifier: Apache-2.0

package ratelimit

import (
	"errors"
	"fmt"
	"hash/maphash"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// edgeShards is the number of independently locked parts of an Edge.
	edgeShards = 64
	// edgeWays is the number of slots an address may occupy: the table is
	// set-associative, and an address lives in one set of edgeWays slots.
	edgeWays = 8
	// maxEdgeEntries bounds the table (about 1.5 GiB of slots).
	maxEdgeEntries = 1 << 26
)

// Edge is the in-process per-IP limit (the global layer) that web checks on
// every ACME request before any JWS work, so a flood is refused before it
// costs a signature check or a backend round trip. It runs the same GCRA as
// the [Limiter] but holds its buckets in this process: each replica limits
// on its own.
//
// Allow allocates nothing: buckets live in a fixed-size table of slots
// keyed by the address as a [16]byte — an IPv4 address, or an IPv6 address
// masked to its /64 ([IPPrefix]) — with no string built. The table is
// split into 64 locked shards, and within a shard into sets of 8 slots
// chosen by a seeded hash, so memory is fixed at construction (24 bytes a
// slot).
//
// When a new address finds its set full, it takes the slot with the
// earliest TAT: a stale bucket (TAT at or before now, which is a full bucket
// and loses nothing when forgotten) if there is one, and otherwise the
// active bucket nearest to full. Evicting forgives that client the little it
// had spent, so under an address flood the limit errs towards admitting;
// the alternative, refusing new addresses while the table is full, would
// let one attacker with many addresses lock every new client out.
type Edge struct {
	emission atomic.Int64
	burst    atomic.Int64
	setMask  uint64
	seed     maphash.Seed
	shards   [edgeShards]edgeShard
}

// edgeShard is one lock domain, padded to its own cache line.
type edgeShard struct {
	mu    sync.Mutex
	slots []edgeSlot
	_     [32]byte
}

// edgeSlot is one bucket: the masked address and its TAT in microseconds
// (0 for an empty slot, which behaves as a full bucket).
type edgeSlot struct {
	key [16]byte
	tat int64
}

// NewEdge returns an Edge enforcing limit, a rate limit (the global
// default is 200 per minute, burst 20), with room for about entries
// addresses: rounded up so that every shard holds a power of two of sets,
// and at least 512. 65,536 entries take 1.5 MiB.
func NewEdge(limit Limit, entries int) (*Edge, error) {
	var errs []error
	if limit.Kind() != KindRate {
		errs = append(errs, fmt.Errorf("ratelimit: edge: needs a rate limit (count, period, burst), got %s", limit.Kind()))
	} else if err := limit.Validate("edge"); err != nil {
		errs = append(errs, err)
	}
	if entries < 1 || entries > maxEdgeEntries {
		errs = append(errs, fmt.Errorf("ratelimit: edge: entries must be between 1 and %d, got %d", maxEdgeEntries, entries))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	sets := 1
	for sets*edgeShards*edgeWays < entries {
		sets *= 2
	}
	e := &Edge{setMask: uint64(sets - 1), seed: maphash.MakeSeed()}
	e.emission.Store(limit.Emission())
	e.burst.Store(limit.Burst)
	for i := range e.shards {
		e.shards[i].slots = make([]edgeSlot, sets*edgeWays)
	}
	return e, nil
}

// Allow spends one token of addr's bucket at now, in microseconds since the
// Unix epoch (time.Now().UnixMicro(), read once per request by the caller).
// It reports whether the request may proceed and, if not, the exact time
// until it would be allowed. An invalid addr shares one bucket with every
// other invalid addr.
func (e *Edge) Allow(addr netip.Addr, now int64) (ok bool, retryAfter time.Duration) {
	key := edgeKey(addr)
	emission, burst := e.emission.Load(), e.burst.Load()
	h := e.hash(key)
	shard := &e.shards[h%edgeShards]
	base := ((h / edgeShards) & e.setMask) * edgeWays
	shard.mu.Lock()
	set := shard.slots[base : base+edgeWays : base+edgeWays]
	victim := 0
	for i := range set {
		if set[i].key == key {
			v := gcra(set[i].tat, now, emission, burst, 1)
			if v.allowed {
				set[i].tat = v.tat
			}
			shard.mu.Unlock()
			return v.allowed, time.Duration(v.retryAfter) * time.Microsecond
		}
		if set[i].tat < set[victim].tat {
			victim = i
		}
	}
	// A new address: its fresh bucket always admits one request (burst is
	// at least 1). It takes the slot with the earliest TAT; see Edge.
	v := gcra(0, now, emission, burst, 1)
	set[victim] = edgeSlot{key: key, tat: v.tat}
	shard.mu.Unlock()
	return true, 0
}

// SetLimit changes the limit in place (a configuration reload). Buckets
// keep their TATs, so what clients have spent stays spent.
func (e *Edge) SetLimit(limit Limit) error {
	if limit.Kind() != KindRate {
		return fmt.Errorf("ratelimit: edge: needs a rate limit (count, period, burst), got %s", limit.Kind())
	}
	if err := limit.Validate("edge"); err != nil {
		return err
	}
	e.emission.Store(limit.Emission())
	e.burst.Store(limit.Burst)
	return nil
}

// hash is the seeded hash of a table key: the low bits pick the shard, the
// next ones the set. The seed is per Edge, so an attacker cannot aim
// addresses at one set.
func (e *Edge) hash(key [16]byte) uint64 { return maphash.Comparable(e.seed, key) }

// edgeKey is the table key of addr: its [IPPrefix] as 16 bytes, an IPv4
// address in IPv4-mapped form, an IPv6 /64 with its interface identifier
// (the low 64 bits) cleared, so a whole /64 shares one bucket. The two never
// collide: a mapped IPv4 address has ffff in bits 80–95, which the /64 mask
// clears for IPv6. The invalid Addr gives all zeros, the key of ::/64 too.
func edgeKey(addr netip.Addr) [16]byte {
	return IPPrefix(addr).Addr().As16()
}
