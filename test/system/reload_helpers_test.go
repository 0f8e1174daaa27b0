// SPDX-License-Identifier: Apache-2.0

package system

import (
	"net/http"
	"net/http/httptest"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/weir-pki/weir/server"
)

// reloadWith writes the configuration edit makes of the running one and
// reloads it live, as a save of the file does.
func (e *env) reloadWith(edit func(*server.Config)) {
	e.t.Helper()
	cfg := e.cfg
	cfg.CA.Profiles = server.DefaultConfig().CA.Profiles
	edit(&cfg)
	e.writeConfig(cfg)
	if err := e.srv.Reload("test"); err != nil {
		e.t.Fatalf("reload: %v", err)
	}
}

// promScrape is one parsed scrape of the server's /metrics.
type promScrape map[string]*dto.MetricFamily

// scrapeServer reads srv's metrics as Prometheus would.
func scrapeServer(t *testing.T, srv *server.Server) promScrape {
	t.Helper()
	rec := httptest.NewRecorder()
	srv.Metrics().Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return fams
}
