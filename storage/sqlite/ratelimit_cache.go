// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"maps"
	"sync"

	"github.com/weir-pki/weir/ratelimit"
)

// The bucket cache.
//
// Every batch used to begin by reading its buckets' rows (a query per
// batch), and every status read (the RateLimit fields, the account's
// quota) by reading them on a reader connection. The source keeps, in
// memory, the rows of the buckets it read or wrote lately, exactly as they
// are stored (expired members and idle TATs included, as a load returns
// them), and an empty entry for a bucket that has no rows, so that a batch
// reads only the buckets it has not seen and a status read of a bucket it
// has seen reads no file at all.
//
// The cache is kept true the way the store's object cache is (cache.go):
// one process writes the file (OpenRateLimit's lock; a file opened with
// OpenRateLimitShared, which other processes may write, has no cache),
// and within it every write holds txMu — a group of batches, Reset, each
// chunk of Sweep, Restore. A group reads and writes through an overlay
// (rowsOverlay) that it publishes once its transaction has committed,
// before any of its callers hears of it; a failed COMMIT, or a write whose
// effect on the rows is not worked out here (Sweep, Restore), empties the
// cache instead.

// maxCachedBuckets bounds the cache: beyond it, entries are evicted
// (arbitrary ones; a miss only costs a read). A bucket is a few hundred
// bytes with its members.
const maxCachedBuckets = 1 << 16

// storedRows are a bucket's rows as stored: its GCRA row (the row with an
// empty member), if any, and its members with their timestamps and stored
// expiries. A published value is never changed: a write builds a new one.
type storedRows struct {
	hasTAT  bool
	tat     int64
	members map[string]int64 // member → ts
	expires map[string]int64 // member → expires
}

// clone returns a copy of r that may be changed; r nil is a bucket with
// no rows.
func (r *storedRows) clone() *storedRows {
	if r == nil {
		return &storedRows{}
	}
	return &storedRows{hasTAT: r.hasTAT, tat: r.tat, members: maps.Clone(r.members), expires: maps.Clone(r.expires)}
}

// setMember stores member m with ts and its expiry.
func (r *storedRows) setMember(m string, ts, expires int64) {
	if r.members == nil {
		r.members, r.expires = map[string]int64{}, map[string]int64{}
	}
	r.members[m], r.expires[m] = ts, expires
}

// add sets the row of member m (the GCRA row when m is empty), as read
// from the file.
func (r *storedRows) add(m string, ts, expires int64) {
	if m == "" {
		r.hasTAT, r.tat = true, ts
		return
	}
	r.setMember(m, ts, expires)
}

// deleteMember removes member m.
func (r *storedRows) deleteMember(m string) {
	delete(r.members, m)
	delete(r.expires, m)
}

// checkCached answers a batch of checks only (OpCheck, OpCount: it would
// write nothing) from the cache, with no transaction, when the cache holds
// every bucket of it; ok is false otherwise. It decides as a transaction
// begun at that moment would: the cache holds what the last committed
// group left, and the clock is read after the buckets, so it is not
// before the clock of any decision they reflect. A status read (the
// RateLimit fields, the account's quota) is such a batch.
func (s *RateLimitSource) checkCached(ops []ratelimit.Op) (res *ratelimit.BatchResult, ok bool) {
	skeys := make([]string, len(ops))
	for i := range ops {
		if k := ops[i].Kind; k != ratelimit.OpCheck && k != ratelimit.OpCount {
			return nil, false
		}
		skeys[i] = storageKey(ops[i].Key)
	}
	rows, ok := s.cache.lookup(skeys)
	if !ok {
		return nil, false
	}
	work := make(map[string]*ratelimit.Bucket, len(ops))
	for i, r := range rows {
		if _, seen := work[ops[i].Key]; !seen {
			b := &ratelimit.Bucket{Members: maps.Clone(r.members)}
			if r.hasTAT {
				b.TAT = r.tat
			}
			work[ops[i].Key] = b
		}
	}
	return ratelimit.Eval(s.clock(), ops, work), true
}

// bucketCache maps a bucket's storage key to its stored rows.
type bucketCache struct {
	mu  sync.Mutex
	m   map[string]*storedRows
	off bool // a shared file (OpenRateLimitShared): nothing is cached
}

// lookup returns the rows cached for each of skeys, and whether all were
// cached; rows[i] nil with all true is a bucket with no rows.
func (c *bucketCache) lookup(skeys []string) (rows []*storedRows, all bool) {
	if c.off {
		return nil, false
	}
	rows = make([]*storedRows, len(skeys))
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, k := range skeys {
		r, ok := c.m[k]
		if !ok {
			return nil, false
		}
		rows[i] = r
	}
	return rows, true
}

// get returns the rows cached for skey.
func (c *bucketCache) get(skey string) (r *storedRows, ok bool) {
	if c.off {
		return nil, false
	}
	c.mu.Lock()
	r, ok = c.m[skey]
	c.mu.Unlock()
	return r, ok
}

// publish makes the overlay's rows the cached ones.
func (c *bucketCache) publish(ov rowsOverlay) {
	if len(ov) == 0 || c.off {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[string]*storedRows, len(ov))
	}
	for k, r := range ov {
		if _, ok := c.m[k]; !ok && len(c.m) >= maxCachedBuckets {
			for old := range c.m {
				delete(c.m, old)
				break
			}
		}
		c.m[k] = r
	}
}

// drop forgets skey.
func (c *bucketCache) drop(skey string) {
	c.mu.Lock()
	delete(c.m, skey)
	c.mu.Unlock()
}

// clear forgets everything.
func (c *bucketCache) clear() {
	c.mu.Lock()
	c.m = nil
	c.mu.Unlock()
}

// rowsOverlay is what one transaction has read and written: the rows of
// each bucket it touched, as they will be stored if it commits.
type rowsOverlay map[string]*storedRows
