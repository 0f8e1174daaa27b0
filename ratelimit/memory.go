// SPDX-License-Identifier: Apache-2.0

package ratelimit

import (
	"context"
	"fmt"
	"math/bits"
	"sync"
	"time"
)

// memoryShards is the number of lock shards of a MemorySource. It is 64 so
// that the set of shards a batch touches fits one uint64 bit mask.
const memoryShards = 64

// MemorySource is a [Source] held in this process: the default for a single
// replica and the reference the other backends are tested against.
//
// Buckets live in 64 shards, each a map behind its own mutex, chosen by the
// FNV-1a hash of the bucket key. A batch locks every shard it touches in
// ascending index order, so two batches over overlapping keys can never
// deadlock, reads the clock while holding them, and commits or discards its
// writes before unlocking.
//
// Idle state is dropped lazily — a write that leaves a rate bucket full or a
// count bucket empty deletes it — and by [MemorySource.Sweep], which
// [MemorySource.Run] calls periodically.
type MemorySource struct {
	now    func() time.Time
	shards [memoryShards]memoryShard
}

// memoryShard is one lock domain, padded to its own cache line.
type memoryShard struct {
	mu      sync.Mutex
	buckets map[string]*memoryBucket
	_       [48]byte
}

// memoryBucket is a stored bucket and, for a count bucket, the window of the
// last op that wrote it, so Sweep can expire its members without a Limit.
type memoryBucket struct {
	Bucket
	window int64
}

// NewMemorySource returns an empty MemorySource reading the clock from now
// (nil means time.Now).
func NewMemorySource(now func() time.Time) *MemorySource {
	m := &MemorySource{now: now}
	for i := range m.shards {
		m.shards[i].buckets = make(map[string]*memoryBucket)
	}
	return m
}

// clock returns the source's now in microseconds.
func (m *MemorySource) clock() int64 {
	if m.now == nil {
		return time.Now().UnixMicro()
	}
	return m.now().UnixMicro()
}

// shardOf returns the shard of a bucket key: FNV-1a, inline so that hashing
// allocates nothing.
func shardOf(key string) int {
	h := uint32(2166136261)
	for i := 0; i < len(key); i++ {
		h ^= uint32(key[i])
		h *= 16777619
	}
	return int(h % memoryShards)
}

// lock locks the shards in mask in ascending order.
func (m *MemorySource) lock(mask uint64) {
	for rest := mask; rest != 0; rest &= rest - 1 {
		m.shards[bits.TrailingZeros64(rest)].mu.Lock()
	}
}

// unlock unlocks the shards in mask.
func (m *MemorySource) unlock(mask uint64) {
	for rest := mask; rest != 0; rest &= rest - 1 {
		m.shards[bits.TrailingZeros64(rest)].mu.Unlock()
	}
}

// Apply implements [Source]: the batch runs under the locks of every shard
// it touches, on copies of its buckets, and is stored only if committed.
func (m *MemorySource) Apply(ctx context.Context, b *Batch) (*BatchResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("ratelimit: memory: %w", err)
	}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	var mask uint64
	for i := range b.Ops {
		mask |= 1 << shardOf(b.Ops[i].Key)
	}
	m.lock(mask)
	defer m.unlock(mask)

	now := m.clock()
	work := make(map[string]*Bucket, len(b.Ops))
	for i := range b.Ops {
		k := b.Ops[i].Key
		if _, ok := work[k]; ok {
			continue
		}
		if stored := m.shards[shardOf(k)].buckets[k]; stored != nil {
			work[k] = stored.Clone()
		} else {
			work[k] = &Bucket{}
		}
	}
	res := Eval(now, b.Ops, work)
	if !res.Committed {
		return res, nil
	}
	for i := range b.Ops {
		if !res.Results[i].Applied {
			continue
		}
		op := &b.Ops[i]
		shard := &m.shards[shardOf(op.Key)]
		next := work[op.Key]
		if next.Idle(now) {
			delete(shard.buckets, op.Key)
			continue
		}
		stored := shard.buckets[op.Key]
		if stored == nil {
			stored = &memoryBucket{}
			shard.buckets[op.Key] = stored
		}
		stored.Bucket = *next
		if op.Kind.Kind() == KindCount {
			stored.window = op.Limit.WindowMicros()
		}
	}
	return res, nil
}

// Get implements [Source]. Idle buckets and members that no longer count
// are left out, as if swept.
func (m *MemorySource) Get(ctx context.Context, keys []string) (*Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("ratelimit: memory: %w", err)
	}
	var mask uint64
	for _, k := range keys {
		mask |= 1 << shardOf(k)
	}
	m.lock(mask)
	defer m.unlock(mask)
	snap := &Snapshot{Now: m.clock(), Buckets: make(map[string]Bucket, len(keys))}
	for _, k := range keys {
		stored := m.shards[shardOf(k)].buckets[k]
		if stored == nil {
			continue
		}
		b := stored.Clone()
		pruneMembers(b.Members, snap.Now, stored.window)
		if !b.Idle(snap.Now) {
			snap.Buckets[k] = *b
		}
	}
	return snap, nil
}

// Reset implements [Source].
func (m *MemorySource) Reset(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("ratelimit: memory: %w", err)
	}
	shard := &m.shards[shardOf(key)]
	shard.mu.Lock()
	delete(shard.buckets, key)
	shard.mu.Unlock()
	return nil
}

// Sweep drops every bucket that is idle at now — rate buckets whose TAT is
// not after now, count buckets whose members have all left — and the
// members that no longer count, and returns the number of buckets dropped.
// It locks one shard at a time, so requests keep flowing meanwhile.
func (m *MemorySource) Sweep(now time.Time) int {
	t := now.UnixMicro()
	dropped := 0
	for i := range m.shards {
		shard := &m.shards[i]
		shard.mu.Lock()
		for k, b := range shard.buckets {
			pruneMembers(b.Members, t, b.window)
			if b.Idle(t) {
				delete(shard.buckets, k)
				dropped++
			}
		}
		shard.mu.Unlock()
	}
	return dropped
}

// Len returns the number of stored buckets, for metrics.
func (m *MemorySource) Len() int {
	n := 0
	for i := range m.shards {
		m.shards[i].mu.Lock()
		n += len(m.shards[i].buckets)
		m.shards[i].mu.Unlock()
	}
	return n
}

// Run sweeps every interval until ctx is done, then returns nil. Start it
// in its own goroutine; a MemorySource without Run still expires buckets
// lazily, but keeps idle ones that are never touched again.
func (m *MemorySource) Run(ctx context.Context, every time.Duration) error {
	if every <= 0 {
		return fmt.Errorf("ratelimit: memory: sweep interval must be positive, got %v", every)
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			m.Sweep(time.UnixMicro(m.clock()))
		}
	}
}

// Restore adds the members of buckets that still count to their count
// buckets, whatever their limits (see [Restorer]). A MemorySource never
// reports [ErrStateLost]: the server restores it once, at start, from the
// store's records.
func (m *MemorySource) Restore(ctx context.Context, buckets []CountBucket) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("ratelimit: memory: %w", err)
	}
	now := m.clock()
	for _, cb := range buckets {
		shard := &m.shards[shardOf(cb.Key)]
		shard.mu.Lock()
		stored := shard.buckets[cb.Key]
		for member, ts := range cb.Members {
			if !counts(ts, now, cb.Window) {
				continue
			}
			if stored == nil {
				stored = &memoryBucket{Bucket: Bucket{Members: map[string]int64{}}, window: cb.Window}
				shard.buckets[cb.Key] = stored
			}
			if stored.Members == nil {
				stored.Members = map[string]int64{}
			}
			stored.Members[member] = ts
			stored.window = max(stored.window, cb.Window)
		}
		shard.mu.Unlock()
	}
	return nil
}
