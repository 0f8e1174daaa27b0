// SPDX-License-Identifier: Apache-2.0

package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"sort"
	"sync"
	"time"
)

// The health endpoints, on the ACME listener and on the admin listener.
const (
	PathHealthz = "/healthz"
	PathReadyz  = "/readyz"
)

// DefaultHealthTimeout bounds each readiness check when NewHealth is given
// no timeout.
const DefaultHealthTimeout = time.Second

// ErrCannotWrite is wrapped by a check's error when the store it stands
// for answers but cannot write (a full disk, a read-only file, an I/O
// error): /readyz says so, still without the details.
var ErrCannotWrite = errors.New("cannot write")

// Check is one readiness probe: it returns nil when the dependency it
// stands for answers. It should honour ctx's deadline; one that does not
// is reported as timed out anyway.
type Check func(ctx context.Context) error

// Health serves a process's liveness (/healthz) and readiness (/readyz)
// probes. One Health may be mounted on several listeners; it is safe for
// concurrent use.
//
// Liveness says only that the process serves HTTP: a restart would not
// help with anything readiness reports. Readiness runs every check at once,
// each bounded by the timeout, and answers 503 while any fails, so that a
// load balancer sends requests elsewhere. The body names each check and
// says "ok" or why it failed, in general terms: the cause (addresses,
// paths) goes to the log only, because the ACME listener's /readyz needs
// no authentication.
type Health struct {
	checks  map[string]Check
	names   []string
	timeout time.Duration
	log     *slog.Logger

	mu      sync.Mutex
	failing map[string]bool // the last outcome of each check, to log changes only

	warnings healthWarnings // healthwarn.go
}

// NewHealth makes the health endpoints for checks, keyed by the name shown
// in the /readyz body. timeout bounds each check (0 means
// DefaultHealthTimeout); log receives a line when a check starts or stops
// failing (nil discards them).
func NewHealth(checks map[string]Check, timeout time.Duration, log *slog.Logger) *Health {
	if timeout <= 0 {
		timeout = DefaultHealthTimeout
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &Health{checks: make(map[string]Check, len(checks)), timeout: timeout, log: log, failing: map[string]bool{}}
	for name, c := range checks {
		h.checks[name] = c
		h.names = append(h.names, name)
	}
	sort.Strings(h.names)
	return h
}

// HealthReport is the /readyz body.
type HealthReport struct {
	// Status is "ok" or "unavailable".
	Status string `json:"status"`
	// Checks maps each check to "ok" or "error: <why>".
	Checks map[string]string `json:"checks"`
	// Warnings maps each warning that has something to say to what it
	// says; they do not make the process unready (healthwarn.go).
	Warnings map[string]string `json:"warnings,omitempty"`
}

// ServeHTTP serves /healthz and /readyz by the last element of the path,
// so the handler can be mounted under any prefix.
func (h *Health) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch path.Base(r.URL.Path) {
	case "healthz":
		h.Live(w, r)
	case "readyz":
		h.Ready(w, r)
	default:
		http.NotFound(w, r)
	}
}

// Live answers 200 "ok" to GET and HEAD while the process serves.
func (h *Health) Live(w http.ResponseWriter, r *http.Request) {
	if !getOrHead(w, r) {
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte("ok\n"))
}

// Ready runs the checks and answers 200 when all pass, 503 otherwise, with
// a HealthReport.
func (h *Health) Ready(w http.ResponseWriter, r *http.Request) {
	if !getOrHead(w, r) {
		return
	}
	rep := h.Check(r.Context())
	status := http.StatusOK
	if rep.Status != "ok" {
		status = http.StatusServiceUnavailable
	}
	w.Header().Set("Cache-Control", "no-store")
	_ = writeJSON(w, status, rep)
}

// Check runs every check concurrently, each within the timeout, and
// reports the outcome. It never takes much longer than the timeout.
func (h *Health) Check(ctx context.Context) HealthReport {
	type result struct {
		name string
		err  error
	}
	results := make(chan result, len(h.names))
	for _, name := range h.names {
		go func() {
			cctx, cancel := context.WithTimeout(ctx, h.timeout)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- h.checks[name](cctx) }()
			select {
			case err := <-done:
				if err == nil || cctx.Err() == nil {
					results <- result{name, err}
					return
				}
				results <- result{name, fmt.Errorf("%w: %w", cctx.Err(), err)}
			case <-cctx.Done():
				results <- result{name, fmt.Errorf("no answer: %w", cctx.Err())}
			}
		}()
	}
	rep := HealthReport{Status: "ok", Checks: make(map[string]string, len(h.names))}
	for range h.names {
		res := <-results
		rep.Checks[res.name] = "ok"
		if res.err != nil {
			rep.Status = "unavailable"
			rep.Checks[res.name] = "error: " + h.publicReason(res.err)
		}
		h.note(res.name, res.err)
	}
	rep.Warnings = h.warn(ctx)
	return rep
}

// publicReason says why a check failed without its details.
func (h *Health) publicReason(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("no answer within %s", h.timeout)
	}
	if errors.Is(err, context.Canceled) {
		return "canceled"
	}
	if errors.Is(err, ErrCannotWrite) {
		return "cannot write: disk full, read-only or failing (the cause is in the server log)"
	}
	return "not answering (the cause is in the server log)"
}

// note logs a check that starts or stops failing.
func (h *Health) note(name string, err error) {
	h.mu.Lock()
	was := h.failing[name]
	h.failing[name] = err != nil
	h.mu.Unlock()
	switch {
	case err != nil && !was:
		h.log.Warn("readiness check failing", "check", name, "err", err)
	case err == nil && was:
		h.log.Info("readiness check recovered", "check", name)
	}
}

// getOrHead refuses other methods with 405.
func getOrHead(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	return false
}
