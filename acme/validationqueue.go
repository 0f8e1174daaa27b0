// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"slices"
	"sync"
)

// validationQueue holds the validation jobs this replica has claimed
// until a worker takes them, fairly between accounts: each account's jobs
// wait in their own FIFO, the accounts are served in turn (round robin),
// and no account has more than perAccount jobs with the workers at once.
//
// A validation cannot be interrupted, and one against a responder that
// never answers holds its worker for the whole validation timeout. With
// one FIFO for all, an account that starts many such validations fills
// every worker and everyone else's wait for its timeouts; with the cap,
// it fills perAccount workers and the others keep theirs. The cap holds
// even when the other workers are idle, since lending them to the
// account would make the next account to arrive wait for a timeout again.
//
// Only waiting jobs count towards max, as the jobs in a channel's buffer
// did: a full queue refuses a job, whose lease is then released for any
// replica's next claim (lease.go).
type validationQueue struct {
	max, perAccount int

	mu       sync.Mutex
	wake     *sync.Cond // a job may have become takeable, or a worker's context ended
	waiting  int
	accounts map[AccountID]*accountJobs // accounts with jobs waiting or running
	ring     []*accountJobs             // accounts with jobs waiting, in serving order
	next     int                        // the index in ring of the account served next
}

// accountJobs are one account's jobs in the queue.
type accountJobs struct {
	id      AccountID
	jobs    []validationJob // waiting, oldest first
	running int             // taken by a worker and not done
}

// newValidationQueue makes a queue of at most max waiting jobs, of which
// workers take at most perAccount of one account at once.
func newValidationQueue(max, perAccount int) *validationQueue {
	q := &validationQueue{max: max, perAccount: perAccount, accounts: map[AccountID]*accountJobs{}}
	q.wake = sync.NewCond(&q.mu)
	return q
}

// room is how many more jobs the queue accepts now.
func (q *validationQueue) room() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.max - q.waiting
}

// push queues j behind its account's waiting jobs, reporting false when
// the queue is full.
func (q *validationQueue) push(j validationJob) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.waiting >= q.max {
		return false
	}
	a := q.accounts[j.account]
	if a == nil {
		a = &accountJobs{id: j.account}
		q.accounts[j.account] = a
	}
	if len(a.jobs) == 0 {
		// At the back of the turn: served after every account already
		// waiting.
		q.ring = slices.Insert(q.ring, q.next, a)
		q.next++
	}
	a.jobs = append(a.jobs, j)
	q.waiting++
	q.wake.Signal()
	return true
}

// take waits for the next job a worker may run and counts it as running
// until done. It reports false, with nothing taken, once ctx ends.
func (q *validationQueue) take(ctx context.Context) (validationJob, bool) {
	stop := context.AfterFunc(ctx, func() {
		q.mu.Lock()
		defer q.mu.Unlock()
		q.wake.Broadcast()
	})
	defer stop()
	q.mu.Lock()
	defer q.mu.Unlock()
	for ctx.Err() == nil {
		if j, ok := q.pop(); ok {
			return j, true
		}
		q.wake.Wait()
	}
	return validationJob{}, false
}

// pop takes the oldest job of the first account, in turn from next, that
// is under its cap, and moves the turn past that account.
func (q *validationQueue) pop() (validationJob, bool) {
	for k := range len(q.ring) {
		i := (q.next + k) % len(q.ring)
		a := q.ring[i]
		if a.running >= q.perAccount {
			continue
		}
		j := a.jobs[0]
		a.jobs = slices.Delete(a.jobs, 0, 1)
		a.running++
		q.waiting--
		if len(a.jobs) == 0 {
			q.ring = slices.Delete(q.ring, i, i+1)
			q.next = i
		} else {
			q.next = i + 1
		}
		if len(q.ring) > 0 {
			q.next %= len(q.ring)
		} else {
			q.next = 0
		}
		return j, true
	}
	return validationJob{}, false
}

// done ends the running of j, a job take returned, which lets its account
// have another job taken.
func (q *validationQueue) done(j validationJob) {
	q.mu.Lock()
	defer q.mu.Unlock()
	a := q.accounts[j.account]
	a.running--
	switch {
	case len(a.jobs) > 0:
		q.wake.Signal()
	case a.running == 0:
		delete(q.accounts, j.account)
	}
}

// drain removes and returns every waiting job; running ones stay counted
// until done.
func (q *validationQueue) drain() []validationJob {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []validationJob
	for _, a := range q.ring {
		out = append(out, a.jobs...)
		a.jobs = nil
		if a.running == 0 {
			delete(q.accounts, a.id)
		}
	}
	q.ring, q.next, q.waiting = nil, 0, 0
	return out
}
