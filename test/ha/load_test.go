// SPDX-License-Identifier: Apache-2.0

package ha_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	xacme "golang.org/x/crypto/acme"
)

// loadOpts shape an issuance load.
type loadOpts struct {
	label   string // in the names: "<label>-<n>-<attempt>[-b].ha.weir.test"
	workers int    // each with an account of its own
	target  int    // certificates to issue in all
	// attempts is how many orders one certificate may take: a failed
	// issuance starts again from a new order. 1: the first error ends
	// the worker.
	attempts int
	// perIssue bounds one issuance attempt.
	perIssue time.Duration
}

// loadResult is what a load got.
type loadResult struct {
	mu       sync.Mutex
	certs    []*issued
	failures []string // every failed attempt
	fatal    []string // certificates given up
	issuedN  atomic.Int64
	start    time.Time
	elapsed  time.Duration
	attempts atomic.Int64
	netErrs  atomic.Int64 // attempts that ended in a transport error
}

func (r *loadResult) add(is *issued) {
	r.mu.Lock()
	r.certs = append(r.certs, is)
	r.mu.Unlock()
	r.issuedN.Add(1)
}

func (r *loadResult) fail(msg string, fatal bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if fatal {
		r.fatal = append(r.fatal, msg)
	} else {
		r.failures = append(r.failures, msg)
	}
}

// summary lists the failures, grouped by their message shape.
func (r *loadResult) summary() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	shapes := make([]string, len(r.failures))
	for i, f := range r.failures {
		shapes[i] = shape(f)
	}
	if len(shapes) == 0 {
		return ""
	}
	return "\n  " + tally(shapes, "%[2]dx %[1]s", "\n  ")
}

// shape shortens an error message to its kind: without URLs and IDs.
func shape(s string) string {
	var out []string
	for _, w := range strings.Fields(s) {
		if strings.Contains(w, "://") || strings.Contains(w, "127.0.0.1:") {
			w = "…"
		}
		out = append(out, w)
	}
	s = strings.Join(out, " ")
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

// isNetErr reports a transport error (connection refused, reset, EOF).
func isNetErr(err error) bool {
	var ne net.Error
	var oe *net.OpError
	if errors.As(err, &ne) || errors.As(err, &oe) {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "EOF") || strings.Contains(s, "connection reset") || strings.Contains(s, "connection refused") ||
		strings.Contains(s, "no replica accepted")
}

// runLoad issues o.target certificates with o.workers clients, each with
// an account of its own, through the round-robin. Odd certificates have
// two names. progress, when not nil, is called after each certificate
// with the count so far. It returns when the target is reached, a
// certificate is given up, or ctx ends.
func (cl *cluster) runLoad(ctx context.Context, o loadOpts, progress func(n int64)) *loadResult {
	res := &loadResult{start: time.Now()}
	var next atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range o.workers {
		wg.Go(func() {
			c := cl.acmeClient(nil)
			var err error
			for try := 0; try < o.attempts; try++ {
				rctx, cancel := context.WithTimeout(ctx, o.perIssue)
				_, err = c.Register(rctx, &xacme.Account{}, xacme.AcceptTOS)
				cancel()
				if err == nil || ctx.Err() != nil {
					break
				}
				res.fail("register: "+err.Error(), false)
				pause(ctx, try)
			}
			if err != nil {
				res.fail(fmt.Sprintf("worker %d: register: %v", w, err), true)
				stop.Store(true)
				return
			}
			for !stop.Load() && ctx.Err() == nil {
				n := next.Add(1)
				if n > int64(o.target) {
					return
				}
				var done bool
				for try := 0; try < o.attempts && !done && ctx.Err() == nil; try++ {
					names := []string{fmt.Sprintf("%s-%d-%d.ha.weir.test", o.label, n, try)}
					if n%2 == 1 {
						names = append(names, fmt.Sprintf("%s-%d-%d-b.ha.weir.test", o.label, n, try))
					}
					res.attempts.Add(1)
					ictx, cancel := context.WithTimeout(ctx, o.perIssue)
					is, err := cl.issue(ictx, c, names)
					cancel()
					if err == nil {
						res.add(is)
						if progress != nil {
							progress(res.issuedN.Load())
						}
						done = true
						break
					}
					if isNetErr(err) {
						res.netErrs.Add(1)
					}
					res.fail(err.Error(), false)
					pause(ctx, try)
				}
				if !done {
					res.fail(fmt.Sprintf("certificate %d given up after %d attempts", n, o.attempts), true)
					stop.Store(true)
					return
				}
			}
		})
	}
	wg.Wait()
	res.elapsed = time.Since(res.start)
	return res
}

// pause waits before attempt try+1 of a failed issuance: 250 ms,
// doubling up to 3 s, so that ten attempts span about 20 s, longer than
// a backend's restart.
func pause(ctx context.Context, try int) {
	d := min(250*time.Millisecond<<min(try, 4), 3*time.Second)
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
