// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/weir-pki/weir/ratelimit"
)

// maxGroup is the most batches one group-commit transaction applies, which
// bounds how long it holds the write lock (about 50 µs a batch).
const maxGroup = 64

// errLeaderPanicked fails the batches of a group whose leader panicked.
var errLeaderPanicked = errors.New("sqlite: ratelimit: apply: the transaction applying this batch panicked")

// applyReq is one Apply waiting for, or taking part in, a group.
type applyReq struct {
	ops []ratelimit.Op
	res *ratelimit.BatchResult
	err error
	// taken and lead are guarded by RateLimitSource.mu: taken is set when
	// the request leaves the queue, lead when it must lead the next group.
	taken, lead bool
	// done is closed when res or err is set, or lead.
	done chan struct{}
}

// Apply implements [ratelimit.Source]. A batch of checks whose buckets are
// all in the bucket cache is answered from it (checkCached). Every other
// batch is applied in a write transaction on the single writer connection
// (BEGIN IMMEDIATE): the clock
// is read once the write lock is held, the batch's buckets are loaded,
// [ratelimit.Eval] decides, and a committed batch writes back only what it
// changed — a rate bucket's TAT upserted, or its row deleted once the
// bucket is full; count members inserted, and deleted when removed or no
// longer counting. A denied batch writes nothing.
//
// Concurrent batches share transactions (group commit): while one Apply
// runs a transaction, the others queue; the first in line then applies up
// to 64 queued batches one after the other in one transaction, each
// reading the clock and seeing the writes of those before it exactly as if
// it ran alone, and commits once. If any of them fails, the group is
// rolled back and every batch of it is retried in a transaction of its
// own, so an error still means that batch wrote nothing and a failure
// never spreads to other batches. (SAVEPOINTs cannot isolate them: some
// errors, such as a full disk, make SQLite roll back the whole
// transaction.)
//
// ctx bounds the wait in the queue; once the batch is in a transaction it
// runs to the end, which takes milliseconds, unless another process holds
// the write lock for up to the busy timeout.
func (s *RateLimitSource) Apply(ctx context.Context, b *ratelimit.Batch) (*ratelimit.BatchResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: ratelimit: apply: %w", err)
	}
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("sqlite: ratelimit: invalid batch: %w", err)
	}
	if res, ok := s.checkCached(b.Ops); ok {
		return res, nil
	}
	r := &applyReq{ops: b.Ops}
	s.mu.Lock()
	if !s.leading {
		s.leading = true
		s.mu.Unlock()
		s.lead(r)
		return r.res, s.faults.note(r.err, ratelimit.ErrUnwritable)
	}
	r.done = make(chan struct{})
	s.queue = append(s.queue, r)
	s.mu.Unlock()

	select {
	case <-r.done:
	case <-ctx.Done():
		s.mu.Lock()
		if !r.taken {
			s.queue = slices.DeleteFunc(s.queue, func(q *applyReq) bool { return q == r })
			s.mu.Unlock()
			return nil, fmt.Errorf("sqlite: ratelimit: apply: %w", ctx.Err())
		}
		s.mu.Unlock()
		<-r.done // in a transaction already, or chosen to lead
	}
	if r.lead {
		s.lead(r)
	}
	return r.res, s.faults.note(r.err, ratelimit.ErrUnwritable)
}

// lead applies r and up to maxGroup−1 queued batches as a group, then
// hands the lead to the first batch still queued, or gives it up. Each
// leader runs one group, so no caller waits behind an endless stream of
// others' batches.
func (s *RateLimitSource) lead(r *applyReq) {
	s.mu.Lock()
	n := min(len(s.queue), maxGroup-1)
	group := make([]*applyReq, 0, n+1)
	group = append(group, r)
	group = append(group, s.queue[:n]...)
	for _, q := range s.queue[:n] {
		q.taken = true
	}
	s.queue = s.dequeue(n)
	s.mu.Unlock()

	completed := false
	defer func() { s.handOff(group, completed) }()
	s.runGroup(group)
	completed = true
}

// dequeue returns the queue without its first n requests, reusing its
// array and clearing the vacated slots. s.mu must be held.
func (s *RateLimitSource) dequeue(n int) []*applyReq {
	rest := copy(s.queue, s.queue[n:])
	clear(s.queue[rest:])
	return s.queue[:rest]
}

// handOff passes the lead on and wakes the group's other batches. It runs
// deferred, so a panic while applying the group (completed is false) fails
// all its batches, whose transaction was rolled back, instead of leaving
// them, and every later Apply, waiting forever.
func (s *RateLimitSource) handOff(group []*applyReq, completed bool) {
	s.mu.Lock()
	if len(s.queue) == 0 {
		s.leading = false
		s.mu.Unlock()
	} else {
		next := s.queue[0]
		s.queue = s.dequeue(1)
		next.taken, next.lead = true, true
		s.mu.Unlock()
		close(next.done)
	}
	if !completed {
		for _, q := range group {
			q.res, q.err = nil, errLeaderPanicked
		}
	}
	for _, q := range group[1:] {
		close(q.done)
	}
}

// runGroup applies the batches of group in one transaction, or, if that
// fails, each in its own. The transaction is not bound to any caller's
// context: it serves them all. It holds txMu, and publishes what the
// transaction read and wrote to the bucket cache once it has committed.
func (s *RateLimitSource) runGroup(group []*applyReq) {
	ctx := context.Background()
	s.txMu.Lock()
	defer s.txMu.Unlock()
	if len(group) == 1 {
		s.runAlone(ctx, group[0])
		return
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		for _, q := range group {
			q.err = fmt.Errorf("sqlite: ratelimit: apply: begin: %w", err)
		}
		return
	}
	defer tx.Rollback() // a no-op after Commit or Rollback
	ov := rowsOverlay{}
	for _, q := range group {
		if q.res, err = s.applyTx(ctx, tx, ov, q.ops); err != nil {
			break
		}
	}
	if err == nil {
		if err = tx.Commit(); err == nil {
			s.cache.publish(ov)
			return
		}
		s.cache.clear() // what a failed COMMIT left is not worked out
	}
	tx.Rollback()
	for _, q := range group {
		q.res = nil
		s.runAlone(ctx, q)
	}
}

// runAlone applies q in a transaction of its own. txMu is held.
func (s *RateLimitSource) runAlone(ctx context.Context, q *applyReq) {
	q.res, q.err = nil, nil
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		q.err = fmt.Errorf("sqlite: ratelimit: apply: begin: %w", err)
		return
	}
	defer tx.Rollback() // a no-op after Commit
	ov := rowsOverlay{}
	res, err := s.applyTx(ctx, tx, ov, q.ops)
	if err != nil {
		q.err = fmt.Errorf("sqlite: ratelimit: apply: %w", err)
		return
	}
	if res.Committed {
		if err := tx.Commit(); err != nil {
			s.cache.clear()
			q.err = fmt.Errorf("sqlite: ratelimit: apply: commit: %w", err)
			return
		}
	}
	s.cache.publish(ov) // a denied batch wrote nothing: ov holds what it read
	q.res = res
}
