// SPDX-License-Identifier: Apache-2.0

package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestHealth(t *testing.T) {
	secret := errors.New("dial tcp 10.9.8.7:6379: connection refused")
	tests := []struct {
		name       string
		checks     map[string]Check
		wantStatus int
		wantChecks map[string]string // value prefixes
	}{
		{"all ok", map[string]Check{"storage": func(context.Context) error { return nil }, "ratelimit": func(context.Context) error { return nil }},
			http.StatusOK, map[string]string{"storage": "ok", "ratelimit": "ok"}},
		{"one fails", map[string]Check{"storage": func(context.Context) error { return nil }, "ratelimit": func(context.Context) error { return secret }},
			http.StatusServiceUnavailable, map[string]string{"storage": "ok", "ratelimit": "error: "}},
		{"one hangs past its deadline", map[string]Check{"storage": func(context.Context) error { time.Sleep(time.Second); return nil }},
			http.StatusServiceUnavailable, map[string]string{"storage": "error: no answer within 200ms"}},
		{"one honours its deadline", map[string]Check{"ratelimit": func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }},
			http.StatusServiceUnavailable, map[string]string{"ratelimit": "error: no answer within 200ms"}},
		{"no checks", nil, http.StatusOK, map[string]string{}},
	}
	for _, tt := range tests {
		// Time is the synctest bubble's: a hung check costs exactly the
		// 200 ms timeout, however loaded the machine.
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := NewHealth(tt.checks, 200*time.Millisecond, nil)
				start := time.Now()
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/admin/readyz", nil))
				if d := time.Since(start); d > 200*time.Millisecond {
					t.Errorf("/readyz took %s; each check is bounded by 200ms", d)
				}
				time.Sleep(time.Second) // a hung check returns before the bubble ends
				if rec.Code != tt.wantStatus {
					t.Errorf("status %d, want %d", rec.Code, tt.wantStatus)
				}
				if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q", ct)
				}
				var rep HealthReport
				if err := json.Unmarshal(rec.Body.Bytes(), &rep); err != nil {
					t.Fatalf("body %q: %v", rec.Body, err)
				}
				wantOverall := "ok"
				if tt.wantStatus != http.StatusOK {
					wantOverall = "unavailable"
				}
				if rep.Status != wantOverall {
					t.Errorf("status field %q, want %q", rep.Status, wantOverall)
				}
				if len(rep.Checks) != len(tt.wantChecks) {
					t.Errorf("checks %v, want %v", rep.Checks, tt.wantChecks)
				}
				for name, want := range tt.wantChecks {
					if got := rep.Checks[name]; !strings.HasPrefix(got, want) || (want == "ok" && got != "ok") {
						t.Errorf("checks[%s] = %q, want %q…", name, got, want)
					}
				}
				if strings.Contains(rec.Body.String(), "10.9.8.7") {
					t.Errorf("the body shows the cause: %s", rec.Body)
				}
			})
		})
	}
}

func TestHealthLiveAndMethods(t *testing.T) {
	h := NewHealth(map[string]Check{"x": func(context.Context) error { return errors.New("down") }}, 0, nil)
	for _, tc := range []struct {
		method, path string
		status       int
		body         string
	}{
		{http.MethodGet, "/healthz", http.StatusOK, "ok\n"},
		{http.MethodHead, "/healthz", http.StatusOK, ""},
		{http.MethodHead, "/readyz", http.StatusServiceUnavailable, ""},
		{http.MethodPost, "/healthz", http.StatusMethodNotAllowed, ""},
		{http.MethodGet, "/other", http.StatusNotFound, ""},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
		if rec.Code != tc.status {
			t.Errorf("%s %s: status %d, want %d", tc.method, tc.path, rec.Code, tc.status)
		}
		if tc.body != "" && rec.Body.String() != tc.body {
			t.Errorf("%s %s: body %q, want %q", tc.method, tc.path, rec.Body, tc.body)
		}
	}
}

// TestHealthLogsChanges: the cause is logged once when a check starts
// failing and once when it recovers, not on every probe.
func TestHealthLogsChanges(t *testing.T) {
	var logs syncBuffer
	var mu sync.Mutex
	var fail error
	h := NewHealth(map[string]Check{"ratelimit": func(context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		return fail
	}}, 0, slog.New(slog.NewTextHandler(&logs, nil)))
	probe := func() { h.Check(t.Context()) }
	probe()
	mu.Lock()
	fail = errors.New("connection refused")
	mu.Unlock()
	probe()
	probe()
	mu.Lock()
	fail = nil
	mu.Unlock()
	probe()
	probe()
	out := logs.String()
	if n := strings.Count(out, "readiness check failing"); n != 1 || !strings.Contains(out, "connection refused") {
		t.Errorf("failing logged %d times (want 1, with the cause):\n%s", n, out)
	}
	if n := strings.Count(out, "readiness check recovered"); n != 1 {
		t.Errorf("recovered logged %d times, want 1:\n%s", n, out)
	}
}
