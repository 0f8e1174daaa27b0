// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/ratelimit"
)

// MetricsOptions configures Metrics.
type MetricsOptions struct {
	// CA returns the issuing CA, read at every scrape for the expiry of
	// its root and intermediate; nil leaves that gauge out.
	CA func() *ca.CA
	// Now is the clock of the limiter activity when a decision carries no
	// time of its own (nil means time.Now).
	Now func() time.Time
	// Store is the ACME store. If it reports its commits
	// (acme.CommitReporter), NewMetrics subscribes to them; if it reports
	// its queue and pool (acme.StatsReporter), they are read at every
	// scrape. nil, or a store that does neither, leaves those series out.
	Store any
	// CRLRegenerations returns how many CRLs the server has made
	// (acme.Service.CRLRegenerations), read at every scrape; nil leaves
	// weir_crl_regenerations_total out.
	CRLRegenerations func() int64
	// CRLsSigned returns how many CRLs the server has signed, by issuer
	// and shard (acme.Service.CRLsSigned), read at every scrape; nil
	// leaves weir_crl_generations_total out.
	CRLsSigned func() map[acme.CRLScope]int64
}

// Metrics is weir's Prometheus instrumentation and the dashboard's view of
// the limiter. It implements acme.Observer: install it as acme.Deps's
// Observer and with the SetObserver methods of limits.Adapter and
// web.Server.
// Every series lives in its own registry, never the global one, so two
// servers in one process (tests) do not collide.
// Metrics and all its methods are in the files metrics*.go, which use
// nothing else of this package: the limiter activity (metrics_activity.go),
// the fallback's decisions (metrics_degraded.go), the tenants' refusals
// (metrics_tenantrefusals.go), connections (metrics_conn.go), the store
// (metrics_store.go, metrics_writable.go), the probes (metrics_probes.go),
// the build (metrics_buildinfo.go) and the audit trail (metrics_audit.go).
type Metrics struct {
	reg *prometheus.Registry
	now func() time.Time

	requests        *prometheus.CounterVec
	requestDuration *prometheus.HistogramVec

	decisions       *prometheus.CounterVec
	backendDuration *prometheus.HistogramVec
	backendErrors   *prometheus.CounterVec
	degraded        *degraded

	validations        *prometheus.CounterVec
	validationDuration *prometheus.HistogramVec

	issued        prometheus.Counter
	revoked       *prometheus.CounterVec
	orderDuration prometheus.Histogram

	reloads    *prometheus.CounterVec
	lastReload prometheus.Gauge

	store *storeCommits // nil unless the store reports its commits

	writable *prometheus.GaugeVec // metrics_writable.go
	conns    connSeries           // metrics_conn.go

	activity activity
	refusals tenantRefusals // metrics_tenantrefusals.go
}

var _ acme.Observer = (*Metrics)(nil)

// NewMetrics registers weir's metrics, plus the Go runtime and process
// collectors, in a new registry.
func NewMetrics(opts MetricsOptions) *Metrics {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	m := &Metrics{reg: prometheus.NewRegistry(), now: opts.Now}
	m.activity.init()
	m.refusals.init(m.reg)
	if f := opts.CRLRegenerations; f != nil {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "weir_crl_regenerations_total",
			Help: "CRLs this replica signed: at start, on the CRL schedule, by the CRL updater (one for all the revocations it found) and on an administrator's request.",
		}, func() float64 { return float64(f()) }))
	}
	if f := opts.CRLsSigned; f != nil {
		m.reg.MustRegister(crlsSigned{f: f, desc: prometheus.NewDesc("weir_crl_generations_total",
			"CRLs this replica signed, by issuer and CRL shard (0: the issuer's CRL URL); a revocation remakes only its shard's.",
			[]string{"issuer", "shard"}, nil)})
	}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "weir_http_requests_total",
		Help: "ACME HTTP requests answered, by endpoint (the route's name, such as new-order) and HTTP status.",
	}, []string{"endpoint", "status"})
	m.requestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "weir_http_request_duration_seconds",
		Help:    "Time to answer an ACME HTTP request, by endpoint.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"endpoint"})
	m.decisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "weir_ratelimit_decisions_total",
		Help: "Rate-limit decisions that answered a client (the global layer, new-account, new-order, finalize), per limit. " +
			"outcome=allowed counts every enforced limit an admitted request asked about, once per request (disabled limits are left out); " +
			"outcome=denied counts every limit that denied a request, and a denied request's other limits are not counted, because a denial spends nothing; " +
			"outcome=error counts every limit of a request the backend failed to decide (see weir_ratelimit_backend_errors_total for how it was resolved).",
	}, []string{"limit", "outcome"})
	m.backendDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "weir_ratelimit_backend_duration_seconds",
		Help: "Time the rate limiter's backend took for one call, by action (new-account, new-order, finalize, authz-finished, revoked, refund). " +
			"The global layer runs in process and is not measured.",
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
	}, []string{"action"})
	m.backendErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "weir_ratelimit_backend_errors_total",
		Help: "Rate-limiter backend calls that failed, by action and by what became of the request: " +
			"policy=allow when the error was ignored (on-backend-error: allow, and every failed bookkeeping call such as authz-finished, revoked or refund), " +
			"policy=deny when the request was refused with a 503 (on-backend-error: deny), " +
			"policy=degrade when the in-process fallback decided it (on-backend-error: degrade; see weir_ratelimit_degraded_decisions_total).",
	}, []string{"action", "policy"})
	m.degraded = newDegraded()
	m.validations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "weir_validations_total",
		Help: "Challenge validations finished, by challenge type and result (valid or invalid).",
	}, []string{"type", "result"})
	m.validationDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "weir_validation_duration_seconds",
		Help:    "Time one challenge validation took, by challenge type.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
	}, []string{"type"})
	m.issued = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "weir_certificates_issued_total",
		Help: "Certificates issued.",
	})
	m.revoked = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "weir_certificates_revoked_total",
		Help: "Certificates revoked, by RFC 5280 reason name (unspecified, keyCompromise, superseded, ...).",
	}, []string{"reason"})
	m.orderDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "weir_order_issue_duration_seconds",
		Help: "Time from an order's creation to its certificate: how long clients take to prove control and finalize.",
		Buckets: []float64{.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600,
			6 * 3600, 24 * 3600, 7 * 24 * 3600},
	})
	m.reloads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "weir_config_reloads_total",
		Help: "Configuration reloads, by result: ok, or refused (an invalid file; the running configuration stays).",
	}, []string{"result"})
	m.lastReload = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "weir_config_last_reload_success_timestamp_seconds",
		Help: "Unix time of the last successful configuration reload; 0 before the first.",
	})
	// Both results exist from the start, so that increase() sees the first.
	m.reloads.WithLabelValues("ok")
	m.reloads.WithLabelValues("refused")
	m.writable = writableGauge()
	m.conns = newConnSeries()
	m.reg.MustRegister(m.conns.collectors()...)

	m.reg.MustRegister(
		m.requests, m.requestDuration,
		m.decisions, m.backendDuration, m.backendErrors, m.degraded.total,
		m.validations, m.validationDuration,
		m.issued, m.revoked, m.orderDuration,
		m.reloads, m.lastReload, m.writable,
		caExpiry{ca: opts.CA, desc: prometheus.NewDesc("weir_ca_certificate_expiry_timestamp_seconds",
			"Unix time at which the CA's certificate expires (notAfter), by cert: root or intermediate.", []string{"cert"}, nil)},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	if sr, ok := opts.Store.(acme.StatsReporter); ok {
		m.reg.MustRegister(newStoreStats(sr))
	}
	if cr, ok := opts.Store.(acme.CommitReporter); ok {
		m.store = newStoreCommits()
		m.reg.MustRegister(m.store.commits, m.store.writes, m.store.duration)
		cr.ReportCommits(m)
	}
	return m
}

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Request implements acme.Observer.
func (m *Metrics) Request(endpoint string, status int, _ acme.ProblemType, d time.Duration) {
	m.requests.WithLabelValues(endpoint, strconv.Itoa(status)).Inc()
	m.requestDuration.WithLabelValues(endpoint).Observe(d.Seconds())
}

// answersClient reports whether a limiter action decides a client's
// request; the others (authz-finished, revoked, refund) are bookkeeping
// whose denial refuses nobody.
func answersClient(action string) bool {
	switch action {
	case "global", "new-account", "new-order", "finalize":
		return true
	}
	return false
}

// Limiter implements acme.Observer.
func (m *Metrics) Limiter(ev acme.LimiterEvent) {
	if ev.Action != "global" {
		m.backendDuration.WithLabelValues(ev.Action).Observe(ev.Latency.Seconds())
	}
	if ev.Err != nil {
		policy := "deny"
		switch {
		case ev.Degraded:
			policy = "degrade"
			m.degraded.record(ev, m.now())
		case ev.Ignored:
			policy = "allow"
		}
		m.backendErrors.WithLabelValues(ev.Action, policy).Inc()
		if answersClient(ev.Action) {
			var seen names
			for _, r := range ev.Requests {
				if seen.first(r.Name) {
					m.decisions.WithLabelValues(r.Name.String(), "error").Inc()
				}
			}
		}
		return
	}
	d := ev.Decision
	if !d.Limit.Valid() {
		return // a remove, or every limit asked about is disabled: nothing was decided
	}
	at := d.At
	if at.IsZero() {
		at = m.now()
	}
	m.activity.touch(ev.Requests, at)
	if !answersClient(ev.Action) {
		return
	}
	var seen names
	if d.Allowed {
		for _, r := range ev.Requests {
			if seen.first(r.Name) {
				m.decisions.WithLabelValues(r.Name.String(), "allowed").Inc()
			}
		}
		return
	}
	denied := d.Denied
	if len(denied) == 0 {
		denied = []ratelimit.Decision{d}
	}
	for _, x := range denied {
		if seen.first(x.Limit) {
			m.decisions.WithLabelValues(x.Limit.String(), "denied").Inc()
		}
	}
	m.activity.deny(ev.Action, d, denied, at)
}

// names is a set of limit names small enough to live on the stack.
type names [16]bool

// first reports whether n is seen for the first time, and records it.
func (s *names) first(n ratelimit.Name) bool {
	if n < 0 || int(n) >= len(s) {
		return true
	}
	if s[n] {
		return false
	}
	s[n] = true
	return true
}

// Validation implements acme.Observer.
func (m *Metrics) Validation(typ acme.ChallengeType, ok bool, d time.Duration) {
	result := "invalid"
	if ok {
		result = "valid"
	}
	m.validations.WithLabelValues(string(typ), result).Inc()
	m.validationDuration.WithLabelValues(string(typ)).Observe(d.Seconds())
}

// Issued implements acme.Observer.
func (m *Metrics) Issued(_ *acme.Certificate, orderAge time.Duration) {
	m.issued.Inc()
	m.orderDuration.Observe(orderAge.Seconds())
}

// Revoked implements acme.Observer.
func (m *Metrics) Revoked(_ *acme.Certificate, reason int) {
	m.revoked.WithLabelValues(ca.ReasonString(reason)).Inc()
}

// ConfigReload records the outcome of one configuration reload at at.
func (m *Metrics) ConfigReload(ok bool, at time.Time) {
	if !ok {
		m.reloads.WithLabelValues("refused").Inc()
		return
	}
	m.reloads.WithLabelValues("ok").Inc()
	m.lastReload.Set(float64(at.UnixNano()) / 1e9)
}

// caExpiry reads the CA's certificates at scrape time, so a CA replaced
// while running is reported as it is.
type caExpiry struct {
	ca   func() *ca.CA
	desc *prometheus.Desc
}

// Describe implements prometheus.Collector.
func (c caExpiry) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector.
func (c caExpiry) Collect(ch chan<- prometheus.Metric) {
	if c.ca == nil {
		return
	}
	x := c.ca()
	if x == nil || x.Hierarchy() == nil {
		return
	}
	h := x.Hierarchy()
	if h.Root != nil {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(h.Root.NotAfter.Unix()), "root")
	}
	if h.Intermediate != nil {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(h.Intermediate.NotAfter.Unix()), "intermediate")
	}
}

// crlsSigned is weir_crl_generations_total, read at each scrape.
type crlsSigned struct {
	f    func() map[acme.CRLScope]int64
	desc *prometheus.Desc
}

func (c crlsSigned) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c crlsSigned) Collect(ch chan<- prometheus.Metric) {
	for sc, n := range c.f() {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(n), sc.Issuer, strconv.Itoa(sc.Shard))
	}
}
