// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// maxRedeemBatch bounds the nonces of one redemption statement.
const maxRedeemBatch = 256

// errRedeemLeaderPanicked fails the redemptions of a batch whose
// statement panicked.
var errRedeemLeaderPanicked = errors.New("the statement redeeming this nonce panicked")

// redeemReq is one redemption waiting for, or taking part in, a batch.
type redeemReq struct {
	id      []byte
	expires time.Time
	gen     int64 // of the key that verified it
	// The results: ok when this redemption inserted the nonce, keyGone
	// when the database no longer holds the key gen; err for a failed
	// statement.
	ok, keyGone bool
	err         error
	// taken and lead are guarded by redeemBatch.mu: taken is set when the
	// request leaves the queue, lead when it must lead the next batch.
	taken, lead bool
	done        chan struct{}
}

// redeemBatch runs concurrent redemptions in shared statements: while one
// statement runs, the redemptions that arrive queue; when it ends, the
// first of them runs the queued ones (up to maxRedeemBatch) in the next
// statement. A lone redemption runs at once, alone. Each statement is one
// round trip however many nonces it carries.
type redeemBatch struct {
	run func(ctx context.Context, batch []*redeemReq) error

	mu    sync.Mutex
	busy  bool
	queue []*redeemReq
}

// redeem runs r in a batch and sets its results. ctx bounds the wait in
// the queue; a statement, once it carries r, runs to its end (bounded by
// nonceCallTimeout).
func (b *redeemBatch) redeem(ctx context.Context, r *redeemReq) error {
	b.mu.Lock()
	if !b.busy {
		b.busy = true
		b.mu.Unlock()
		b.lead(r)
		return r.err
	}
	r.done = make(chan struct{})
	b.queue = append(b.queue, r)
	b.mu.Unlock()
	select {
	case <-r.done:
	case <-ctx.Done():
		b.mu.Lock()
		if !r.taken {
			b.queue = slices.DeleteFunc(b.queue, func(q *redeemReq) bool { return q == r })
			b.mu.Unlock()
			return ctx.Err()
		}
		b.mu.Unlock()
		<-r.done
	}
	if r.lead {
		b.lead(r)
	}
	return r.err
}

// lead runs r and the queued redemptions in one statement, then hands the
// lead to the first one queued meanwhile, or gives it up.
func (b *redeemBatch) lead(r *redeemReq) {
	b.mu.Lock()
	n := min(len(b.queue), maxRedeemBatch-1)
	batch := append([]*redeemReq{r}, b.queue[:n]...)
	for _, q := range batch {
		q.taken = true
	}
	b.queue = slices.Delete(b.queue, 0, n)
	b.mu.Unlock()

	completed := false
	defer func() {
		b.mu.Lock()
		if len(b.queue) == 0 {
			b.busy = false
			b.mu.Unlock()
		} else {
			next := b.queue[0]
			b.queue = slices.Delete(b.queue, 0, 1)
			next.taken, next.lead = true, true
			b.mu.Unlock()
			close(next.done)
		}
		for _, q := range batch {
			if !completed {
				q.err = errRedeemLeaderPanicked
			}
			if q != r {
				close(q.done)
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), nonceCallTimeout)
	defer cancel()
	if err := b.run(ctx, batch); err != nil {
		for _, q := range batch {
			q.err = err
		}
	}
	completed = true
}

// insertRedeemed runs the statements of a batch: one INSERT per key
// generation among its nonces (one, but while a new key spreads), which
// inserts them only if the database still holds that key. A nonce twice in
// one batch is a replay in the second place without asking the database.
// Only when a nonce is refused does a second statement read the stored
// key's generation, to tell a replay from a lost key.
func (n *Nonces) insertRedeemed(ctx context.Context, batch []*redeemReq) error {
	type group struct {
		ids     [][]byte
		expires []time.Time
	}
	groups := map[int64]*group{}
	first := make(map[string]*redeemReq, len(batch))
	for _, r := range batch {
		if _, dup := first[string(r.id)]; dup {
			continue
		}
		first[string(r.id)] = r
		g := groups[r.gen]
		if g == nil {
			g = &group{}
			groups[r.gen] = g
		}
		g.ids, g.expires = append(g.ids, r.id), append(g.expires, r.expires)
	}
	refused := 0
	for gen, g := range groups {
		rows, err := n.pool.Query(ctx, `INSERT INTO nonces_redeemed (id, expires)
			SELECT u.id, u.expires FROM unnest($1::bytea[], $2::timestamptz[]) AS u(id, expires)
			WHERE EXISTS (SELECT 1 FROM nonce_keys WHERE id = 1 AND gen = $3)
			ON CONFLICT (id) DO NOTHING RETURNING id`, g.ids, g.expires, gen)
		if err != nil {
			return err
		}
		inserted := 0
		for rows.Next() {
			var id []byte
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			if r := first[string(id)]; r != nil {
				r.ok = true
				inserted++
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("nonces_redeemed: %w", err)
		}
		refused += len(g.ids) - inserted
	}
	if refused == 0 {
		return nil
	}
	var stored int64
	err := n.pool.QueryRow(ctx, `SELECT gen FROM nonce_keys WHERE id = 1`).Scan(&stored)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("nonce_keys: %w", err)
	}
	for _, r := range batch {
		r.keyGone = !r.ok && (err != nil || r.gen != stored)
	}
	return nil
}
