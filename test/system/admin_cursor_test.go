// SPDX-License-Identifier: Apache-2.0

package system

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/weir-pki/weir/server"
)

// TestAdminListingsBadCursor: a cursor the admin API's listings did not
// give out is 400 with a JSON error, not a 500 with an ERROR log line.
func TestAdminListingsBadCursor(t *testing.T) {
	logs := &metricsLogBuf{}
	e := startEnvLog(t, func(c *server.Config) { c.Log.Level, c.Log.Format = "info", "json" }, logs)
	token := e.adminToken(t)
	for _, path := range []string{"/api/v1/accounts", "/api/v1/certs", "/api/v1/orders"} {
		for _, cursor := range []string{"abc", "-1", "01", "1.5", strings.Repeat("9", 400)} {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, e.adminURL+path+"?cursor="+url.QueryEscape(cursor), nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+token)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var body struct{ Error string }
			err = json.NewDecoder(res.Body).Decode(&body)
			res.Body.Close()
			if res.StatusCode != http.StatusBadRequest || err != nil || !strings.Contains(body.Error, "malformed cursor") {
				t.Errorf("GET %s?cursor=%.20q: %d %q (%v), want 400 malformed cursor", path, cursor, res.StatusCode, body.Error, err)
			}
		}
	}
	logs.mu.Lock()
	defer logs.mu.Unlock()
	if all := logs.b.String(); strings.Contains(all, `"level":"ERROR"`) {
		t.Errorf("the log has an ERROR line:\n%s", all)
	}
}
