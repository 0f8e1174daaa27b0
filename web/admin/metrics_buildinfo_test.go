// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestBuildInfoMetric: weir_build_info is 1 with the version, commit and
// Go version as labels.
func TestBuildInfoMetric(t *testing.T) {
	m := NewMetrics(MetricsOptions{})
	m.SetBuildInfo("v1.2.3", "0123456789ab", "go1.26.0")
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	want := `weir_build_info{commit="0123456789ab",goversion="go1.26.0",version="v1.2.3"} 1`
	if !strings.Contains(string(body), want) {
		t.Errorf("no %s in /metrics", want)
	}
}
