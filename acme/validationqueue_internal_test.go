// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// jobsOf makes n jobs of account, named account+"1", account+"2", ...
func jobsOf(account AccountID, n int) []validationJob {
	js := make([]validationJob, n)
	for i := range js {
		js[i] = validationJob{id: ChallengeID(fmt.Sprintf("%s%d", account, i+1)), account: account}
	}
	return js
}

// pushAll pushes jobs, failing t if the queue refuses one.
func pushAll(t *testing.T, q *validationQueue, jobs ...[]validationJob) {
	t.Helper()
	for _, js := range jobs {
		for _, j := range js {
			if !q.push(j) {
				t.Fatalf("push %s refused with room %d", j.id, q.room())
			}
		}
	}
}

// TestValidationQueueOrder: accounts are served in turn, each account's
// jobs in the order they came, and an account that starts waiting is
// served after those already waiting.
func TestValidationQueueOrder(t *testing.T) {
	tests := []struct {
		name       string
		perAccount int
		pushes     [][]validationJob
		want       []string
	}{
		{"one account is FIFO", 10, [][]validationJob{jobsOf("a", 3)}, []string{"a1", "a2", "a3"}},
		{"round robin", 10, [][]validationJob{jobsOf("a", 3), jobsOf("b", 2), jobsOf("c", 1)},
			[]string{"a1", "b1", "c1", "a2", "b2", "a3"}},
		{"many jobs of one account do not delay one of another", 10, [][]validationJob{jobsOf("a", 30), jobsOf("b", 1)},
			append([]string{"a1", "b1"}, idsOf(jobsOf("a", 30)[1:])...)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := newValidationQueue(100, tc.perAccount)
			pushAll(t, q, tc.pushes...)
			var got []string
			for range tc.want {
				j, ok := q.take(t.Context())
				if !ok {
					t.Fatal("take ended")
				}
				got = append(got, string(j.id))
				q.done(j)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("taken: got %v, want %v", got, tc.want)
			}
			if r := q.room(); r != 100 {
				t.Errorf("room after taking every job: got %d, want 100", r)
			}
		})
	}
}

func idsOf(js []validationJob) []string {
	out := make([]string, len(js))
	for i, j := range js {
		out[i] = string(j.id)
	}
	return out
}

// TestValidationQueueLateAccount: an account that starts waiting while
// others are served joins the back of the turn, behind every account
// already waiting (each served account goes to the back too).
func TestValidationQueueLateAccount(t *testing.T) {
	q := newValidationQueue(100, 10)
	pushAll(t, q, jobsOf("a", 3), jobsOf("b", 3))
	var got []string
	take := func() {
		j, ok := q.take(t.Context())
		if !ok {
			t.Fatal("take ended")
		}
		got = append(got, string(j.id))
	}
	take() // a1; b is next
	pushAll(t, q, jobsOf("c", 2))
	for range 7 {
		take()
	}
	// After a1, the turn is b then a; c joins behind them.
	if want := []string{"a1", "b1", "a2", "c1", "b2", "a3", "c2", "b3"}; !slices.Equal(got, want) {
		t.Errorf("taken: got %v, want %v", got, want)
	}
}

// TestValidationQueueCap: an account at its cap waits for one of its
// running jobs to be done, even with other workers idle, while another
// account's job is taken at once.
func TestValidationQueueCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newValidationQueue(100, 2)
		pushAll(t, q, jobsOf("a", 4))
		a1, _ := q.take(t.Context())
		a2, _ := q.take(t.Context())
		got := make(chan validationJob, 1)
		go func() {
			j, _ := q.take(t.Context())
			got <- j
		}()
		synctest.Wait()
		select {
		case j := <-got:
			t.Fatalf("took %s with a1 and a2 running and a cap of 2", j.id)
		default:
		}
		pushAll(t, q, jobsOf("b", 1))
		synctest.Wait()
		if j := <-got; j.id != "b1" {
			t.Fatalf("the waiting worker took %s, want b1", j.id)
		}
		go func() {
			j, _ := q.take(t.Context())
			got <- j
		}()
		synctest.Wait()
		if len(got) != 0 {
			t.Fatal("a worker took a job of a at its cap")
		}
		q.done(a1)
		synctest.Wait()
		if j := <-got; j.id != "a3" {
			t.Errorf("after a1 was done the worker took %s, want a3", j.id)
		}
		q.done(a2)
		if j, _ := q.take(t.Context()); j.id != "a4" {
			t.Errorf("after a2 was done: took %s, want a4", j.id)
		}
	})
}

// TestValidationQueueBounded: only waiting jobs count towards the bound;
// a full queue refuses a job; drain hands back the waiting ones.
func TestValidationQueueBounded(t *testing.T) {
	q := newValidationQueue(3, 1)
	pushAll(t, q, jobsOf("a", 2), jobsOf("b", 1))
	if q.push(validationJob{id: "c1", account: "c"}) {
		t.Fatal("a full queue accepted a fourth job")
	}
	j, _ := q.take(t.Context())
	if r := q.room(); r != 1 {
		t.Errorf("room with one job taken: got %d, want 1", r)
	}
	pushAll(t, q, jobsOf("c", 1))
	if got, want := idsOf(q.drain()), []string{"b1", "a2", "c1"}; !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
		t.Errorf("drained %v, want %v", got, want)
	}
	if r := q.room(); r != 3 {
		t.Errorf("room after drain: got %d, want 3", r)
	}
	q.done(j) // still counted until done, after a drain too
	pushAll(t, q, jobsOf("a", 1))
	if k, _ := q.take(t.Context()); k.id != "a1" {
		t.Errorf("after drain and done: took %s, want a1", k.id)
	}
}

// TestValidationQueueStop: a worker waiting for a job returns, with
// nothing taken, when its context ends.
func TestValidationQueueStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newValidationQueue(10, 1)
		ctx, cancel := context.WithCancel(t.Context())
		res := make(chan bool, 1)
		go func() {
			_, ok := q.take(ctx)
			res <- ok
		}()
		synctest.Wait()
		cancel()
		synctest.Wait()
		if ok := <-res; ok {
			t.Error("take returned a job from an empty queue")
		}
		pushAll(t, q, jobsOf("a", 1))
		if _, ok := q.take(ctx); ok {
			t.Error("take with an ended context returned a job")
		}
	})
}

// TestValidationQueueHungAccount: sixteen workers; account a's 30
// validations each hang for 30 s, then b posts one of 300 ms. With a cap
// of 4 per account b's starts at once and a never has more than 4
// running; with no cap (16), b waits for a's first validations to time
// out. Time is synctest's, so this takes no real time.
func TestValidationQueueHungAccount(t *testing.T) {
	const workers, hang = 16, 30 * time.Second
	tests := []struct {
		perAccount int
		wantWait   time.Duration // b's wait for a worker
		wantMaxA   int
	}{
		{4, 0, 4},
		{workers, hang, workers},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("cap %d", tc.perAccount), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := newValidationQueue(100, tc.perAccount)
				ctx, cancel := context.WithCancel(t.Context())
				var (
					mu          sync.Mutex
					runningA    int
					maxA        int
					bStarted    time.Time
					wg          sync.WaitGroup
					durationsOf = map[AccountID]time.Duration{"a": hang, "b": 300 * time.Millisecond}
				)
				for range workers {
					wg.Go(func() {
						for {
							j, ok := q.take(ctx)
							if !ok {
								return
							}
							mu.Lock()
							if j.account == "a" {
								runningA++
								maxA = max(maxA, runningA)
							} else {
								bStarted = time.Now()
							}
							mu.Unlock()
							time.Sleep(durationsOf[j.account])
							mu.Lock()
							if j.account == "a" {
								runningA--
							}
							mu.Unlock()
							q.done(j)
						}
					})
				}
				pushAll(t, q, jobsOf("a", 30))
				synctest.Wait()
				posted := time.Now()
				pushAll(t, q, jobsOf("b", 1))
				time.Sleep(2 * hang) // b has run by then, with or without the cap
				cancel()
				wg.Wait()
				if wait := bStarted.Sub(posted); wait != tc.wantWait {
					t.Errorf("b waited %s for a worker, want %s", wait, tc.wantWait)
				}
				if maxA != tc.wantMaxA {
					t.Errorf("a had at most %d validations running, want %d", maxA, tc.wantMaxA)
				}
			})
		})
	}
}
