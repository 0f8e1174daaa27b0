// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/ratelimit"
)

// grafanaDashboard is the part of docs/grafana-dashboard.json the test
// reads.
type grafanaDashboard struct {
	Inputs []struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		PluginID string `json:"pluginId"`
	} `json:"__inputs"`
	SchemaVersion int            `json:"schemaVersion"`
	Panels        []grafanaPanel `json:"panels"`
	Templating    struct {
		List []struct {
			Name       string `json:"name"`
			Definition string `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
}

type grafanaPanel struct {
	Title      string `json:"title"`
	Type       string `json:"type"`
	Datasource *struct {
		UID string `json:"uid"`
	} `json:"datasource"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
	Panels []grafanaPanel `json:"panels"` // a collapsed row's
}

var metricName = regexp.MustCompile(`weir_[a-z_]+`)

// TestGrafanaDashboard checks that every weir_ metric the dashboard
// queries is one NewMetrics exports, so a renamed metric cannot leave a
// panel silently empty.
func TestGrafanaDashboard(t *testing.T) {
	b, err := os.ReadFile("../../docs/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d grafanaDashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("docs/grafana-dashboard.json: %v", err)
	}
	if len(d.Inputs) != 1 || d.Inputs[0].Name != "DS_PROMETHEUS" || d.Inputs[0].PluginID != "prometheus" {
		t.Errorf("__inputs = %+v, want one DS_PROMETHEUS prometheus datasource", d.Inputs)
	}
	if d.SchemaVersion < 36 {
		t.Errorf("schemaVersion = %d, want a current one (>= 36)", d.SchemaVersion)
	}

	exported := exportedFamilies(t)
	used := map[string]bool{}
	var walk func([]grafanaPanel)
	walk = func(ps []grafanaPanel) {
		for _, p := range ps {
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			if len(p.Targets) == 0 {
				t.Errorf("panel %q has no queries", p.Title)
			}
			if p.Datasource == nil || p.Datasource.UID != "${DS_PROMETHEUS}" {
				t.Errorf("panel %q does not use the ${DS_PROMETHEUS} datasource", p.Title)
			}
			for _, tg := range p.Targets {
				names := metricName.FindAllString(tg.Expr, -1)
				if len(names) == 0 {
					t.Errorf("panel %q: query %q names no weir_ metric", p.Title, tg.Expr)
				}
				for _, n := range names {
					used[n] = true
					if !exported[familyOf(n, exported)] {
						t.Errorf("panel %q: %s is not exported by NewMetrics", p.Title, n)
					}
				}
			}
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		for _, n := range metricName.FindAllString(v.Definition, -1) {
			if !exported[familyOf(n, exported)] {
				t.Errorf("variable %q: %s is not exported by NewMetrics", v.Name, n)
			}
		}
	}
	// The panels the operations guide promises.
	for _, n := range []string{
		"weir_http_requests_total", "weir_ratelimit_decisions_total", "weir_ratelimit_backend_duration_seconds_bucket",
		"weir_ratelimit_backend_errors_total", "weir_validations_total", "weir_certificates_issued_total",
		"weir_order_issue_duration_seconds_bucket", "weir_ca_certificate_expiry_timestamp_seconds", "weir_config_reloads_total",
		"weir_store_commit_duration_seconds_bucket", "weir_store_commits_total", "weir_store_write_queue",
	} {
		if !used[n] {
			t.Errorf("no panel queries %s", n)
		}
	}
}

// familyOf maps a series name to its family: a histogram's _bucket, _sum
// and _count series belong to the histogram.
func familyOf(name string, families map[string]bool) string {
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && families[base] {
			return base
		}
	}
	return name
}

// exportedFamilies drives every observer method once (a vector has no
// series, and so no family in a scrape, until a label set is used) and
// returns the weir_ families of the scrape.
func exportedFamilies(t *testing.T) map[string]bool {
	t.Helper()
	h, err := ca.GenerateHierarchy("Weir Dashboard Test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	c, err := ca.New(ca.Config{Lifetime: time.Hour}, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := NewMetrics(MetricsOptions{CA: func() *ca.CA { return c }, Store: &fakeStore{}})
	m.StoreCommit(2, time.Millisecond)
	m.Request("new-order", 201, "", time.Millisecond)
	reqs := []ratelimit.Request{{Name: ratelimit.OrderCreation, Key: "a"}}
	m.Limiter(acme.LimiterEvent{Action: "new-order", Requests: reqs, Decision: ratelimit.Decision{Allowed: true, Limit: ratelimit.OrderCreation, Key: "a"}})
	m.Limiter(acme.LimiterEvent{Action: "new-order", Requests: reqs, Err: errors.New("down"), Ignored: true})
	m.Validation(acme.ChallengeHTTP01, true, time.Millisecond)
	m.Issued(&acme.Certificate{}, time.Minute)
	m.Revoked(&acme.Certificate{}, ca.ReasonSuperseded)
	m.ConfigReload(true, time.Now())
	out := map[string]bool{}
	for name := range scrapeMetrics(t, m) {
		if strings.HasPrefix(name, "weir_") {
			out[name] = true
		}
	}
	return out
}
