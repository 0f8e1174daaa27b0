// SPDX-License-Identifier: Apache-2.0

package system

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/internal/systest"
	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/server"
)

// metricsLogBuf collects the server's log for inspection while the
// server keeps writing to it.
type metricsLogBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *metricsLogBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// requestLines returns the JSON "request" lines logged so far.
func (l *metricsLogBuf) requestLines(t *testing.T) []map[string]any {
	t.Helper()
	l.mu.Lock()
	data := bytes.Clone(l.b.Bytes())
	l.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("log line is not JSON: %v: %s", err, sc.Bytes())
		}
		if line["msg"] == "request" {
			out = append(out, line)
		}
	}
	return out
}

// TestMetricsEndToEnd drives an issuance, a 429 and a revocation through
// a whole server and checks that the Prometheus series, the dashboard's
// limiter activity and the wide log line all saw them.
func TestMetricsEndToEnd(t *testing.T) {
	logs := &metricsLogBuf{}
	e := startEnvLog(t, func(c *server.Config) {
		c.Log.Level, c.Log.Format = "info", "json"
		c.RateLimiting.Global = ratelimit.GlobalConfig{Enabled: true, RequestsPerMinute: 6000, Burst: 1000}
		c.RateLimiting.OrderCreation = ratelimit.OrderCreationConfig{Enabled: true, OrdersPerAccountPerHour: 20, OrderBurst: 2, SANBudgetPerAccountPerHour: 100}
	}, logs)
	ctx := t.Context()
	key := acmeenv.NewKey(t)
	c := e.Client(key)
	acct, err := c.Register(ctx, &xacme.Account{}, xacme.AcceptTOS)
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimPrefix(acct.URI, e.Base+"/acme/account/")
	before := time.Now()

	chain, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.DomainIDs("m1.weir.test")...)
	acmeenv.WantStatus(t, e.RawOrder(key, acct.URI, "m2.weir.test"), http.StatusCreated)
	acmeenv.Want429(t, e.RawOrder(key, acct.URI, "m3.weir.test"), "order-creation", id)
	if err := c.RevokeCert(ctx, nil, chain[0], xacme.CRLReasonSuperseded); err != nil {
		t.Fatal(err)
	}

	// A request is counted and logged after its response is written:
	// wait for the last one.
	var s systest.Scrape
	for deadline := time.Now().Add(5 * time.Second); ; {
		s = scrapeServer(t, e.srv)
		if s.Get("weir_http_requests_total", "endpoint", "revoke-cert", "status", "200") == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"weir_certificates_issued_total", nil, 1},
		{"weir_order_issue_duration_seconds", nil, 1},
		{"weir_validations_total", []string{"type", "http-01", "result", "valid"}, 1},
		{"weir_validations_total", []string{"result", "invalid"}, 0},
		{"weir_validation_duration_seconds", []string{"type", "http-01"}, 1},
		{"weir_http_requests_total", []string{"endpoint", "new-order", "status", "201"}, 2},
		{"weir_http_requests_total", []string{"endpoint", "new-order", "status", "429"}, 1},
		{"weir_http_requests_total", []string{"endpoint", "finalize", "status", "200"}, 1},
		{"weir_http_requests_total", []string{"endpoint", "revoke-cert", "status", "200"}, 1},
		{"weir_http_request_duration_seconds", []string{"endpoint", "new-order"}, 3},
		{"weir_ratelimit_decisions_total", []string{"limit", "order-creation", "outcome", "allowed"}, 2},
		{"weir_ratelimit_decisions_total", []string{"limit", "order-creation", "outcome", "denied"}, 1},
		{"weir_ratelimit_decisions_total", []string{"limit", "global", "outcome", "denied"}, 0},
		{"weir_ratelimit_decisions_total", []string{"outcome", "error"}, 0},
		{"weir_ratelimit_backend_duration_seconds", []string{"action", "new-order"}, 3},
		{"weir_ratelimit_backend_errors_total", nil, 0},
		{"weir_certificates_revoked_total", []string{"reason", "superseded"}, 1},
	} {
		if got := s.Get(c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// Every ACME request passed the global layer: each one was a decision.
	if got, acmeReqs := s.Get("weir_ratelimit_decisions_total", "limit", "global", "outcome", "allowed"), s.Get("weir_http_requests_total"); got < 10 || got > acmeReqs {
		t.Errorf("global allowed decisions = %v, want at least 10 and at most the %v requests", got, acmeReqs)
	}
	for _, cert := range []string{"root", "intermediate"} {
		if exp := s.Get("weir_ca_certificate_expiry_timestamp_seconds", "cert", cert); exp < float64(time.Now().Add(24*time.Hour).Unix()) {
			t.Errorf("CA %s expiry = %v, want a time well after now", cert, exp)
		}
	}
	if f := s["weir_order_issue_duration_seconds"]; f != nil && len(f.GetMetric()) == 1 {
		if age := f.GetMetric()[0].GetHistogram().GetSampleSum(); age <= 0 || age > time.Since(before).Seconds() {
			t.Errorf("order age = %vs, want between 0 and %v", age, time.Since(before).Seconds())
		}
	}

	// The dashboard's view of the limiter.
	recent := e.srv.Metrics().Recent429s(10)
	if len(recent) != 1 || recent[0].Limit != "order-creation" || recent[0].Key != id || recent[0].Action != "new-order" || recent[0].RetryAfter <= 0 {
		t.Errorf("Recent429s = %+v, want one order-creation denial of %s", recent, id)
	}
	if got := e.srv.Metrics().DenialsByLimit()["order-creation"]; got != 1 {
		t.Errorf("DenialsByLimit[order-creation] = %d, want 1", got)
	}
	hot := false
	for _, h := range e.srv.Metrics().HotKeys(0) {
		hot = hot || (h.Limit == "order-creation" && h.Key == id && h.Hits == 3)
	}
	if !hot {
		t.Errorf("HotKeys = %+v, want order-creation:%s with 3 hits", e.srv.Metrics().HotKeys(0), id)
	}

	// The wide log line.
	var denied []map[string]any
	newOrders := 0
	for _, l := range logs.requestLines(t) {
		if l["endpoint"] != "new-order" {
			continue
		}
		newOrders++
		if l["status"] == float64(http.StatusTooManyRequests) {
			denied = append(denied, l)
		} else if lim, _ := l["limiter"].(string); !strings.HasPrefix(lim, "allowed order-creation:"+id+" remaining=") &&
			!strings.HasPrefix(lim, "allowed san-budget:"+id+" remaining=") {
			t.Errorf("admitted new-order logged limiter=%q, want the allowed decision", lim)
		}
	}
	if newOrders != 3 || len(denied) != 1 {
		t.Fatalf("logged %d new-order lines, %d of them 429; want 3 and 1", newOrders, len(denied))
	}
	l := denied[0]
	if lim, _ := l["limiter"].(string); !strings.HasPrefix(lim, "denied order-creation:"+id+" retry-after=") {
		t.Errorf("429 logged limiter=%q, want \"denied order-creation:%s retry-after=...\"", lim, id)
	}
	for k, want := range map[string]any{
		"method": "POST", "client_ip": "127.0.0.1", "account": id,
		"problem": "urn:ietf:params:acme:error:rateLimited",
	} {
		if l[k] != want {
			t.Errorf("429 line: %s = %v, want %v", k, l[k], want)
		}
	}
	for _, k := range []string{"detail", "duration_ms"} {
		if _, ok := l[k]; !ok {
			t.Errorf("429 line lacks %s: %v", k, l)
		}
	}
	if _, ok := l["limiter_error"]; ok {
		t.Errorf("429 line has limiter_error without a backend error: %v", l)
	}
	// Nothing of a JWS body reaches the log.
	logs.mu.Lock()
	all := logs.b.String()
	logs.mu.Unlock()
	for _, secret := range []string{`"protected"`, `"signature"`, `"payload"`, "BEGIN"} {
		if strings.Contains(all, secret) {
			t.Errorf("the log contains %s", secret)
		}
	}
}

// TestMetricsGlobalDenial checks the global layer's 429: counted per
// limit, remembered for the dashboard, and named on the log line.
func TestMetricsGlobalDenial(t *testing.T) {
	logs := &metricsLogBuf{}
	e := startEnvLog(t, func(c *server.Config) {
		c.Log.Level, c.Log.Format = "info", "json"
		c.RateLimiting.Global = ratelimit.GlobalConfig{Enabled: true, RequestsPerMinute: 60, Burst: 2}
	}, logs)
	for i := range 2 {
		if res := e.Post(e.Base+"/acme/new-nonce", "", nil); res.Status == http.StatusTooManyRequests {
			t.Fatalf("request %d refused within the burst", i+1)
		}
	}
	acmeenv.Want429(t, e.Post(e.Base+"/acme/new-nonce", "", nil), "global", "127.0.0.1")
	var s systest.Scrape
	for deadline := time.Now().Add(5 * time.Second); ; {
		s = scrapeServer(t, e.srv)
		if s.Get("weir_http_requests_total", "status", "429") == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := s.Get("weir_ratelimit_decisions_total", "limit", "global", "outcome", "denied"); got != 1 {
		t.Errorf("global denied = %v, want 1", got)
	}
	if got := s.Get("weir_ratelimit_decisions_total", "limit", "global", "outcome", "allowed"); got != 2 {
		t.Errorf("global allowed = %v, want 2", got)
	}
	if got := s.Get("weir_ratelimit_backend_duration_seconds", "action", "global"); got != 0 {
		t.Errorf("the in-process global layer was timed as a backend call %v times", got)
	}
	if r := e.srv.Metrics().Recent429s(0); len(r) != 1 || r[0].Limit != "global" || r[0].Key != "127.0.0.1" || r[0].Action != "global" {
		t.Errorf("Recent429s = %+v, want the global denial of 127.0.0.1", r)
	}
	var lim string
	for _, l := range logs.requestLines(t) {
		if l["status"] == float64(http.StatusTooManyRequests) {
			lim, _ = l["limiter"].(string)
		}
	}
	if !strings.HasPrefix(lim, "denied global:127.0.0.1 retry-after=") {
		t.Errorf("429 logged limiter=%q, want \"denied global:127.0.0.1 retry-after=...\"", lim)
	}
}

// TestStoreMetrics checks the store's series on a whole server with the
// default SQLite store: an issuance's writes are committed, counted and
// timed, and the reader pool is reported.
func TestStoreMetrics(t *testing.T) {
	e := startEnv(t, nil)
	ctx := t.Context()
	before := settledStoreScrape(t, e.srv)
	if got := before.Get("weir_store_connections_max"); got < 1 {
		t.Errorf("weir_store_connections_max = %v, want the reader pool's size", got)
	}
	key := acmeenv.NewKey(t)
	c := e.Client(key)
	if _, err := c.Register(ctx, &xacme.Account{}, xacme.AcceptTOS); err != nil {
		t.Fatal(err)
	}
	e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.DomainIDs("store-metrics.weir.test")...)

	// The writer counts each commit before it answers the callers, so the
	// issuance's commits are all in.
	after := settledStoreScrape(t, e.srv)
	commits := after.Get("weir_store_commits_total") - before.Get("weir_store_commits_total")
	writes := after.Get("weir_store_committed_writes_total") - before.Get("weir_store_committed_writes_total")
	timed := after.Get("weir_store_commit_duration_seconds") - before.Get("weir_store_commit_duration_seconds")
	// New account, new order, the challenge started and validated, the
	// order finalizing and then valid with its certificate: six writes
	// at least, in one commit each or fewer.
	if writes < 6 {
		t.Errorf("committed writes = %v, want at least 6 for an account and an issuance", writes)
	}
	if commits < 1 || commits > writes {
		t.Errorf("commits = %v, want between 1 and the %v writes", commits, writes)
	}
	if timed != commits {
		t.Errorf("commit durations observed = %v, want one per commit (%v)", timed, commits)
	}
	if q := after.Get("weir_store_write_queue"); q != 0 {
		t.Errorf("weir_store_write_queue = %v with nothing in flight, want 0", q)
	}
}

// settledStoreScrape scrapes srv until the store's counters agree: a
// write of the server's own (the write health's, every second) may be
// queued, or a commit be counted and not yet timed or the other way round
// (the scrape reads the two series one after the other), at any scrape,
// the one before a measurement as well as the one after. It scrapes
// again, a bounded number of times, until the queue is empty and every
// commit is timed, and returns the last scrape.
func settledStoreScrape(t *testing.T, srv *server.Server) systest.Scrape {
	t.Helper()
	var sc systest.Scrape
	for range 50 {
		sc = scrapeServer(t, srv)
		if sc.Get("weir_store_commits_total") == sc.Get("weir_store_commit_duration_seconds") && sc.Get("weir_store_write_queue") == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return sc
}
