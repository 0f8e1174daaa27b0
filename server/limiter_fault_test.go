// SPDX-License-Identifier: Apache-2.0

package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/internal/systest"
)

// A fault test of the limiter backend (docs/rate-limits.md, "Failure
// modes: the limiter backend"): two in-process replicas on one
// PostgreSQL schema, the limiter on a redis-server of the test's own that
// the test pauses (SIGSTOP/SIGCONT) by its PID, and nonces in PostgreSQL
// (acme.nonces.backend auto), which a Redis outage does not touch. It
// stays in package server because it observes the limiter adapter's
// steps (SetObserver); the one that kills Redis is in test/system
// (limiter_faults_test.go).

// limiterReplicas starts two replicas with the limiter on rs and the
// rate-limiting block changed by limits.
func limiterReplicas(t *testing.T, rs *systest.Redis, limits func(rl *Config)) (a, b *testEnv, lb *http.Client) {
	t.Helper()
	return startReplicasOn(t, rs, func(c *Config) {
		c.RateLimiting.Backend = "redis"
		c.ACME.Nonces.Backend = nonceAuto
		limits(c)
	})
}

// stepLatencies records the longest limiter step of the new-orders, as
// the adapter reports it (LimiterEvent.Latency: from the call to the
// decision, a degraded one included), forwarding every event.
type stepLatencies struct {
	acme.Observer
	mu      sync.Mutex
	longest time.Duration
}

func (s *stepLatencies) Limiter(ev acme.LimiterEvent) {
	s.Observer.Limiter(ev)
	if ev.Action != "new-order" {
		return
	}
	s.mu.Lock()
	s.longest = max(s.longest, ev.Latency)
	s.mu.Unlock()
}

// take returns the longest step since the last take, and forgets it.
func (s *stepLatencies) take() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.longest
	s.longest = 0
	return d
}

// pauseLoop stops rs for pause in every period (SIGSTOP, SIGCONT) until
// stop is closed or max periods have passed, and leaves it running. Each
// stop is announced on stopped, if someone is listening.
func pauseLoop(rs *systest.Redis, pause, period time.Duration, max int, stop <-chan struct{}, stopped chan<- time.Time) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range max {
			rs.Signal(syscall.SIGSTOP)
			select {
			case stopped <- time.Now():
			default:
			}
			select {
			case <-stop:
				rs.Signal(syscall.SIGCONT)
				return
			case <-time.After(pause):
			}
			rs.Signal(syscall.SIGCONT)
			select {
			case <-stop:
				return
			case <-time.After(period - pause):
			}
		}
	}()
	return done
}

// TestOrderLimitWithRedisPaused: Redis paused 0.7 s in every second;
// bursts of 50 simultaneous new-orders of one fresh account, through a
// balancer over two replicas, against an order-creation limit of 10
// (burst 10). In each of 5 trials at most 20 are admitted (each replica
// admits at most the limit, by the backend and by its in-process
// fallback together), and no limiter step takes longer than
// backend-timeout + 0.5 s. Each burst starts at another phase of a pause.
func TestOrderLimitWithRedisPaused(t *testing.T) {
	rs := systest.StartRedis(t)
	a, b, lb := limiterReplicas(t, rs, func(c *Config) {
		oc := &c.RateLimiting.OrderCreation
		oc.Enabled, oc.OrdersPerAccountPerHour, oc.OrderBurst, oc.SANBudgetPerAccountPerHour = true, 10, 10, 10000
		c.RateLimiting.PendingAuthorizations.Enabled = true
		c.RateLimiting.PendingAuthorizations.Max = 1000
	})
	steps := &stepLatencies{Observer: a.srv.metrics}
	a.srv.limits.SetObserver(steps)
	stepsB := &stepLatencies{Observer: b.srv.metrics}
	b.srv.limits.SetObserver(stepsB)
	timeout := a.cfg.RateLimiting.BackendTimeout
	bound := timeout + 500*time.Millisecond
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()

	const trials, burst, limit, replicas = 5, 50, 10, 2
	stop := make(chan struct{})
	stopped := make(chan time.Time)
	paused := pauseLoop(rs, 700*time.Millisecond, time.Second, 120, stop, stopped)
	defer func() { close(stop); <-paused }()
	for trial := range trials {
		key := acmeenv.NewKey(t)
		var acct *xacme.Account
		var err error
		// Registering needs no limiter here (account-creation is off).
		c := &xacme.Client{Key: key, DirectoryURL: a.Base + "/directory", HTTPClient: lb}
		if acct, err = c.Register(ctx, &xacme.Account{}, xacme.AcceptTOS); err != nil {
			t.Fatal(err)
		}
		bodies := make([][]byte, burst)
		for i := range bodies {
			payload := fmt.Appendf(nil, `{"identifiers":[{"type":"dns","value":"t%d-o%d.paused.weir.test"}]}`, trial, i)
			bodies[i] = a.Sign(key, a.Base+"/acme/new-order", payload, acmeenv.SignOpts{KID: acct.URI})
		}
		// Each burst starts at another phase of the pauses: 350 ms before
		// the next stop, then 150 ms later in each trial. A request
		// reaches the limiter a few hundred milliseconds after it is
		// sent (50 signatures to check on two busy cores).
		var stoppedAt time.Time
		select {
		case stoppedAt = <-stopped:
		case <-ctx.Done():
			t.Fatal("Redis was not paused")
		}
		time.Sleep(650*time.Millisecond + time.Duration(trial)*150*time.Millisecond)
		phase := time.Since(stoppedAt) - time.Second
		steps.take()
		stepsB.take()
		statuses, slowest := postAll(ctx, lb, a.Base+"/acme/new-order", bodies)
		step := max(steps.take(), stepsB.take())
		admitted := statuses[http.StatusCreated]
		t.Logf("trial %d: fired %v from a stop; admitted %d of %d (limit %d, bound %d across %d replicas); answers %v; longest limiter step %v, longest request %v",
			trial+1, phase.Round(time.Millisecond), admitted, burst, limit, replicas*limit, replicas, statuses, step.Round(time.Millisecond), slowest.Round(time.Millisecond))
		if admitted > replicas*limit {
			t.Errorf("trial %d: %d new-orders admitted, more than %d × %d", trial+1, admitted, replicas, limit)
		}
		if step > bound {
			t.Errorf("trial %d: a limiter step took %v, longer than backend-timeout + 0.5 s (%v)", trial+1, step, bound)
		}
		if n := statuses[http.StatusInternalServerError] + statuses[0]; n > 0 {
			t.Errorf("trial %d: %d requests got a 500 or no answer", trial+1, n)
		}
	}
	t.Logf("degraded decisions: replica 1 %d, replica 2 %d", a.srv.limits.DegradedDecisions(), b.srv.limits.DegradedDecisions())
}

// postAll posts every body to url at once through hc and counts the
// answers by status (0: no answer); it returns the longest request too.
func postAll(ctx context.Context, hc *http.Client, url string, bodies [][]byte) (map[int]int, time.Duration) {
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		slowest time.Duration
	)
	statuses := map[int]int{}
	gate := make(chan struct{})
	for _, body := range bodies {
		wg.Go(func() {
			<-gate
			start := time.Now()
			status := 0
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
			if err == nil {
				req.Header.Set("Content-Type", "application/jose+json")
				var res *http.Response
				if res, err = hc.Do(req); err == nil {
					_, _ = io.Copy(io.Discard, res.Body)
					res.Body.Close()
					status = res.StatusCode
				}
			}
			d := time.Since(start)
			mu.Lock()
			defer mu.Unlock()
			statuses[status]++
			slowest = max(slowest, d)
		})
	}
	close(gate)
	wg.Wait()
	return statuses, slowest
}
