// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/ratelimit"
)

// metricsScrape is one parsed scrape of Metrics.Handler, by family name.
type metricsScrape map[string]*dto.MetricFamily

// scrapeMetrics fetches m's exposition as Prometheus does and parses it
// with the text parser.
func scrapeMetrics(t *testing.T, m *Metrics) metricsScrape {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return fams
}

// value sums the series of family name whose labels include every
// name=value pair of labels: a counter's or gauge's value, a histogram's
// sample count. A missing family or series is 0.
func (s metricsScrape) value(name string, labels ...string) float64 {
	f := s[name]
	if f == nil {
		return 0
	}
	var sum float64
	for _, m := range f.GetMetric() {
		if !hasLabels(m, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Histogram != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		case m.Untyped != nil:
			sum += m.GetUntyped().GetValue()
		}
	}
	return sum
}

// series is a value expected of the series of a family whose labels
// include labels (name=value pairs).
type series struct {
	name   string
	labels []string
	want   float64
}

// expect reports every series of want whose value differs.
func (s metricsScrape) expect(t *testing.T, want []series) {
	t.Helper()
	for _, c := range want {
		if got := s.value(c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}

// histSum is the sum of the histogram series of name matching labels.
func (s metricsScrape) histSum(name string, labels ...string) float64 {
	var sum float64
	if f := s[name]; f != nil {
		for _, m := range f.GetMetric() {
			if hasLabels(m, labels) && m.Histogram != nil {
				sum += m.GetHistogram().GetSampleSum()
			}
		}
	}
	return sum
}

func hasLabels(m *dto.Metric, labels []string) bool {
	for i := 0; i+1 < len(labels); i += 2 {
		found := false
		for _, lp := range m.GetLabel() {
			found = found || (lp.GetName() == labels[i] && lp.GetValue() == labels[i+1])
		}
		if !found {
			return false
		}
	}
	return true
}

func TestMetricsRequests(t *testing.T) {
	m := NewMetrics(MetricsOptions{})
	m.Request("new-order", 201, "", 10*time.Millisecond)
	m.Request("new-order", 201, "", 30*time.Millisecond)
	m.Request("new-order", 429, acme.ProbRateLimited, time.Millisecond)
	m.Request("directory", 200, "", time.Millisecond)
	s := scrapeMetrics(t, m)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"weir_http_requests_total", []string{"endpoint", "new-order", "status", "201"}, 2},
		{"weir_http_requests_total", []string{"endpoint", "new-order", "status", "429"}, 1},
		{"weir_http_requests_total", []string{"endpoint", "directory"}, 1},
		{"weir_http_requests_total", nil, 4},
		{"weir_http_request_duration_seconds", []string{"endpoint", "new-order"}, 3},
	} {
		if got := s.value(c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if got, want := s.histSum("weir_http_request_duration_seconds", "endpoint", "new-order"), 0.041; got < want-1e-9 || got > want+1e-9 {
		t.Errorf("new-order duration sum = %v, want %v", got, want)
	}
}

// Requests of one new-order batch, as ratelimit.NewOrderRequests builds them.
var orderReqs = []ratelimit.Request{
	{Name: ratelimit.OrderCreation, Key: "acct1"},
	{Name: ratelimit.SANBudget, Key: "acct1", Cost: 2},
	{Name: ratelimit.FailedValidation, Key: "acct1:a.example", CheckOnly: true},
	{Name: ratelimit.FailedValidation, Key: "acct1:b.example", CheckOnly: true},
}

func TestMetricsLimiter(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	denyOrder := ratelimit.Decision{Limit: ratelimit.OrderCreation, Key: "acct1", RetryAfter: 3 * time.Minute, At: at}
	denyOrder.Denied = []ratelimit.Decision{denyOrder}
	denyTwo := ratelimit.Decision{Limit: ratelimit.FailedValidation, Key: "acct1:a.example", RetryAfter: time.Hour, At: at,
		Denied: []ratelimit.Decision{
			{Limit: ratelimit.FailedValidation, Key: "acct1:a.example", RetryAfter: time.Hour},
			{Limit: ratelimit.FailedValidation, Key: "acct1:b.example", RetryAfter: time.Minute},
			{Limit: ratelimit.SANBudget, Key: "acct1", RetryAfter: time.Second},
		}}
	global := []ratelimit.Request{{Name: ratelimit.Global, Key: "192.0.2.1"}}
	boom := errors.New("backend down")
	tests := []struct {
		name      string
		ev        acme.LimiterEvent
		decisions map[string]float64 // "limit/outcome" -> count; every other series 0
		backend   map[string]float64 // action -> observations of the backend histogram
		errors    map[string]float64 // "action/policy" -> count
		denials   int                // entries in Recent429s
	}{
		{
			name:      "allowed new-order counts each limit once",
			ev:        acme.LimiterEvent{Action: "new-order", Requests: orderReqs, Decision: ratelimit.Decision{Allowed: true, Limit: ratelimit.OrderCreation, Key: "acct1", Remaining: 4, At: at}, Latency: time.Millisecond},
			decisions: map[string]float64{"order-creation/allowed": 1, "san-budget/allowed": 1, "failed-validation/allowed": 1},
			backend:   map[string]float64{"new-order": 1},
		},
		{
			name:      "denied new-order counts only the denying limit",
			ev:        acme.LimiterEvent{Action: "new-order", Requests: orderReqs, Decision: denyOrder, Latency: time.Millisecond},
			decisions: map[string]float64{"order-creation/denied": 1},
			backend:   map[string]float64{"new-order": 1},
			denials:   1,
		},
		{
			name:      "several denied buckets, one 429",
			ev:        acme.LimiterEvent{Action: "new-order", Requests: orderReqs, Decision: denyTwo},
			decisions: map[string]float64{"failed-validation/denied": 1, "san-budget/denied": 1},
			backend:   map[string]float64{"new-order": 1},
			denials:   1,
		},
		{
			name:      "global allowed: no backend latency",
			ev:        acme.LimiterEvent{Action: "global", Requests: global, Decision: ratelimit.Decision{Allowed: true, Limit: ratelimit.Global, Key: "192.0.2.1", At: at}},
			decisions: map[string]float64{"global/allowed": 1},
		},
		{
			name:      "global denied without a Denied list",
			ev:        acme.LimiterEvent{Action: "global", Requests: global, Decision: ratelimit.Decision{Limit: ratelimit.Global, Key: "192.0.2.1", RetryAfter: time.Second, At: at}},
			decisions: map[string]float64{"global/denied": 1},
			denials:   1,
		},
		{
			name:      "backend error ignored by policy allow",
			ev:        acme.LimiterEvent{Action: "new-account", Requests: []ratelimit.Request{{Name: ratelimit.AccountCreation, Key: "192.0.2.1"}}, Err: boom, Ignored: true, Latency: 50 * time.Millisecond},
			decisions: map[string]float64{"account-creation/error": 1},
			backend:   map[string]float64{"new-account": 1},
			errors:    map[string]float64{"new-account/allow": 1},
		},
		{
			name:      "backend error turned into a 503",
			ev:        acme.LimiterEvent{Action: "finalize", Requests: []ratelimit.Request{{Name: ratelimit.DuplicateCertificate, Key: "acct1:x"}}, Err: boom},
			decisions: map[string]float64{"duplicate-certificate/error": 1},
			backend:   map[string]float64{"finalize": 1},
			errors:    map[string]float64{"finalize/deny": 1},
		},
		{
			name:    "a remove decides nothing",
			ev:      acme.LimiterEvent{Action: "authz-finished", Requests: []ratelimit.Request{{Name: ratelimit.PendingAuthorizations, Key: "acct1", Member: "az1"}}, Decision: ratelimit.Decision{Allowed: true}},
			backend: map[string]float64{"authz-finished": 1},
		},
		{
			name:    "a denied bookkeeping spend refuses nobody",
			ev:      acme.LimiterEvent{Action: "authz-finished", Requests: []ratelimit.Request{{Name: ratelimit.FailedValidation, Key: "acct1:a.example"}}, Decision: ratelimit.Decision{Limit: ratelimit.FailedValidation, Key: "acct1:a.example", RetryAfter: time.Minute}},
			backend: map[string]float64{"authz-finished": 1},
		},
		{
			name:    "a failed bookkeeping call is an ignored error",
			ev:      acme.LimiterEvent{Action: "revoked", Requests: []ratelimit.Request{{Name: ratelimit.DuplicateCertificate, Key: "acct1:x"}}, Err: boom, Ignored: true},
			backend: map[string]float64{"revoked": 1},
			errors:  map[string]float64{"revoked/allow": 1},
		},
		{
			name:    "every limit disabled: nothing decided",
			ev:      acme.LimiterEvent{Action: "new-order", Requests: orderReqs, Decision: ratelimit.Decision{Allowed: true, At: at}},
			backend: map[string]float64{"new-order": 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMetrics(MetricsOptions{})
			m.Limiter(tt.ev)
			s := scrapeMetrics(t, m)
			var wantTotal float64
			for k, want := range tt.decisions {
				limit, outcome, _ := strings.Cut(k, "/")
				if got := s.value("weir_ratelimit_decisions_total", "limit", limit, "outcome", outcome); got != want {
					t.Errorf("decisions{%s} = %v, want %v", k, got, want)
				}
				wantTotal += want
			}
			if got := s.value("weir_ratelimit_decisions_total"); got != wantTotal {
				t.Errorf("decisions total = %v, want %v", got, wantTotal)
			}
			var wantObs float64
			for action, want := range tt.backend {
				if got := s.value("weir_ratelimit_backend_duration_seconds", "action", action); got != want {
					t.Errorf("backend duration{%s} count = %v, want %v", action, got, want)
				}
				wantObs += want
			}
			if got := s.value("weir_ratelimit_backend_duration_seconds"); got != wantObs {
				t.Errorf("backend duration count = %v, want %v", got, wantObs)
			}
			var wantErrs float64
			for k, want := range tt.errors {
				action, policy, _ := strings.Cut(k, "/")
				if got := s.value("weir_ratelimit_backend_errors_total", "action", action, "policy", policy); got != want {
					t.Errorf("backend errors{%s} = %v, want %v", k, got, want)
				}
				wantErrs += want
			}
			if got := s.value("weir_ratelimit_backend_errors_total"); got != wantErrs {
				t.Errorf("backend errors total = %v, want %v", got, wantErrs)
			}
			if got := len(m.Recent429s(0)); got != tt.denials {
				t.Errorf("Recent429s: %d entries, want %d", got, tt.denials)
			}
		})
	}
}

func TestMetricsIssuanceValidationRevocation(t *testing.T) {
	m := NewMetrics(MetricsOptions{})
	m.Validation(acme.ChallengeHTTP01, true, 20*time.Millisecond)
	m.Validation(acme.ChallengeHTTP01, false, 5*time.Second)
	m.Validation(acme.ChallengeDNS01, true, 100*time.Millisecond)
	cert := &acme.Certificate{Serial: "01"}
	m.Issued(cert, 90*time.Second)
	m.Issued(cert, 30*time.Second)
	m.Revoked(cert, ca.ReasonKeyCompromise)
	m.Revoked(cert, ca.ReasonSuperseded)
	m.Revoked(cert, ca.ReasonSuperseded)
	s := scrapeMetrics(t, m)
	s.expect(t, []series{
		{"weir_validations_total", []string{"type", "http-01", "result", "valid"}, 1},
		{"weir_validations_total", []string{"type", "http-01", "result", "invalid"}, 1},
		{"weir_validations_total", []string{"type", "dns-01", "result", "valid"}, 1},
		{"weir_validation_duration_seconds", []string{"type", "http-01"}, 2},
		{"weir_certificates_issued_total", nil, 2},
		{"weir_order_issue_duration_seconds", nil, 2},
		{"weir_certificates_revoked_total", []string{"reason", "keyCompromise"}, 1},
		{"weir_certificates_revoked_total", []string{"reason", "superseded"}, 2},
	})
	if got := s.histSum("weir_order_issue_duration_seconds"); got != 120 {
		t.Errorf("order duration sum = %v, want 120", got)
	}
}

func TestMetricsCAExpiry(t *testing.T) {
	now := time.Now()
	h, err := ca.GenerateHierarchy("Weir Metrics Test", now)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ca.New(ca.Config{Lifetime: 24 * time.Hour}, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := scrapeMetrics(t, NewMetrics(MetricsOptions{CA: func() *ca.CA { return c }}))
	for _, c := range []struct {
		cert string
		want time.Time
	}{{"root", h.Root.NotAfter}, {"intermediate", h.Intermediate.NotAfter}} {
		got := s.value("weir_ca_certificate_expiry_timestamp_seconds", "cert", c.cert)
		if got != float64(c.want.Unix()) || !c.want.After(now) {
			t.Errorf("expiry{cert=%s} = %v, want %v (after now)", c.cert, got, c.want.Unix())
		}
	}
	// Without a CA the gauge is left out rather than reported as 0.
	if f := scrapeMetrics(t, NewMetrics(MetricsOptions{}))["weir_ca_certificate_expiry_timestamp_seconds"]; f != nil {
		t.Errorf("expiry gauge without a CA: %v", f)
	}
}

func TestMetricsConfigReload(t *testing.T) {
	m := NewMetrics(MetricsOptions{})
	s := scrapeMetrics(t, m)
	if f := s["weir_config_reloads_total"]; f == nil || len(f.GetMetric()) != 2 {
		t.Fatalf("reloads before any reload: %v, want ok and refused at 0", f)
	}
	t1 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	m.ConfigReload(true, t1)
	m.ConfigReload(false, t1.Add(time.Minute))
	m.ConfigReload(false, t1.Add(2*time.Minute))
	s = scrapeMetrics(t, m)
	if got := s.value("weir_config_reloads_total", "result", "ok"); got != 1 {
		t.Errorf("reloads{ok} = %v, want 1", got)
	}
	if got := s.value("weir_config_reloads_total", "result", "refused"); got != 2 {
		t.Errorf("reloads{refused} = %v, want 2", got)
	}
	if got := s.value("weir_config_last_reload_success_timestamp_seconds"); got != float64(t1.Unix()) {
		t.Errorf("last success = %v, want %v (a refused reload does not move it)", got, t1.Unix())
	}
}

func TestMetricsRuntimeCollectors(t *testing.T) {
	s := scrapeMetrics(t, NewMetrics(MetricsOptions{}))
	for _, name := range []string{"go_goroutines", "process_start_time_seconds"} {
		if _, ok := s[name]; !ok && (name != "process_start_time_seconds" || processMetricsSupported()) {
			t.Errorf("%s missing from the scrape", name)
		}
	}
}

// processMetricsSupported reports whether the process collector has
// anything to say here (it reads /proc).
func processMetricsSupported() bool {
	_, err := os.Stat("/proc/self/stat")
	return err == nil
}

// fakeStore reports fixed stats and remembers the observer of its commits.
type fakeStore struct {
	stats acme.StoreStats
	obs   acme.StoreObserver
}

func (f *fakeStore) StoreStats() acme.StoreStats        { return f.stats }
func (f *fakeStore) ReportCommits(o acme.StoreObserver) { f.obs = o }

// statsOnly reports stats but not commits, as the PostgreSQL store does.
type statsOnly struct{ stats acme.StoreStats }

func (s statsOnly) StoreStats() acme.StoreStats { return s.stats }

func TestMetricsStore(t *testing.T) {
	st := &fakeStore{stats: acme.StoreStats{QueuedWrites: 3, Conns: 5, ConnsInUse: 2, MaxConns: 8, ConnWaits: 4, ConnWait: 1500 * time.Millisecond}}
	m := NewMetrics(MetricsOptions{Store: st})
	if st.obs != m {
		t.Fatalf("NewMetrics did not subscribe to the store's commits (observer %v)", st.obs)
	}
	st.obs.StoreCommit(3, 2*time.Millisecond)
	st.obs.StoreCommit(1, 30*time.Millisecond)
	s := scrapeMetrics(t, m)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"weir_store_commits_total", nil, 2},
		{"weir_store_committed_writes_total", nil, 4},
		{"weir_store_commit_duration_seconds", nil, 2},
		{"weir_store_write_queue", nil, 3},
		{"weir_store_connections", []string{"state", "in_use"}, 2},
		{"weir_store_connections", []string{"state", "idle"}, 3},
		{"weir_store_connections_max", nil, 8},
		{"weir_store_connection_waits_total", nil, 4},
		{"weir_store_connection_wait_seconds_total", nil, 1.5},
	} {
		if got := s.value(c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if got := s.histSum("weir_store_commit_duration_seconds"); got < 0.0319 || got > 0.0321 {
		t.Errorf("commit duration sum = %v, want 0.032", got)
	}
	// The scrape reads the store afresh.
	st.stats.QueuedWrites = 0
	if got := scrapeMetrics(t, m).value("weir_store_write_queue"); got != 0 {
		t.Errorf("weir_store_write_queue after the queue drained = %v, want 0", got)
	}

	// A store that reports no commits has no commit series; one that
	// reports nothing has no store series at all.
	s = scrapeMetrics(t, NewMetrics(MetricsOptions{Store: statsOnly{acme.StoreStats{MaxConns: 4}}}))
	if s["weir_store_commits_total"] != nil || s["weir_store_commit_duration_seconds"] != nil {
		t.Error("commit series exported for a store that does not report commits")
	}
	if got := s.value("weir_store_connections_max"); got != 4 {
		t.Errorf("weir_store_connections_max = %v, want 4", got)
	}
	s = scrapeMetrics(t, NewMetrics(MetricsOptions{Store: struct{}{}}))
	for name := range s {
		if strings.HasPrefix(name, "weir_store_") {
			t.Errorf("%s exported for a store that reports nothing", name)
		}
	}
}
