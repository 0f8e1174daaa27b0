// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// migrationJSON is an answer of GET /api/v1/ca/migration: default being
// left (renew-early), r2 active.
const migrationJSON = `{
  "at": "2031-05-06T07:08:09Z",
  "window": "5m0s",
  "issuers": [
    {"id": "default", "active": false, "renew_early": true, "leaving": true, "live": 1000, "share": 0.25,
     "replaced": 600, "remaining": 400, "overdue": 50, "issued": 0, "renewed_off": 40, "rate_per_hour": 480,
     "first_expiry": "2031-05-06T08:08:09Z", "last_expiry": "2031-07-05T07:08:09Z", "projected_empty_at": "2031-05-06T07:58:09Z"},
    {"id": "r2", "active": true, "renew_early": false, "leaving": false, "live": 3000, "share": 0.75,
     "replaced": 10, "remaining": 2990, "overdue": 0, "issued": 45, "renewed_off": 0, "rate_per_hour": 0,
     "first_expiry": "2031-07-25T07:08:09Z", "last_expiry": "2031-08-04T07:08:09Z", "projected_empty_at": null}
  ],
  "refused": {"denials": 3, "complete": false},
  "plan": {"at": "2031-05-06T07:08:09Z", "slot": "1m0s", "loaded": true, "ceiling_per_hour": 600, "peak_per_hour": 17140.4,
    "peak_at": "2031-05-06T07:14:00Z", "slots_over": 9, "over_from": "2031-05-06T07:12:00Z",
    "accounts": [{"account": "7", "peak_per_hour": 430, "peak_at": "2031-05-06T07:14:00Z", "headroom_per_hour": 42.9}],
    "accounts_over": 1, "placed_over_ceiling": 5, "placed_over_account": 3}
}`

// TestCAMigrationStatus: weir ca migration-status asks the admin API and
// prints a table per issuer (overdue and the projection only for one
// being left), then the refusals and the renewal plan against its
// capacities; --json prints the answer.
func TestCAMigrationStatus(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	writeFile(t, tokenFile, []byte("abcdefghijklmnopq\n"))
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer abcdefghijklmnopq" || r.Method != http.MethodGet || r.URL.Path != "/api/v1/ca/migration" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":"no such route"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(migrationJSON))
	}))
	t.Cleanup(api.Close)
	flags := []string{"-admin", api.URL, "-token-file", tokenFile}

	code, out, errOut := runCLI(append([]string{"ca", "migration-status"}, flags...)...)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	want := `issuers at 2031-05-06T07:08:09Z; the recent window is the last 5m0s

default (not active, renew-early: being left)
  live             1000 (25.0 % of all)
  replaced         600 (renewed already)
  remaining        400
  overdue          50 (remaining, their own window ended)
  issued           0 (in the window)
  renewed off      40 (in the window: 480 an hour)
  first expiry     2031-05-06T08:08:09Z (in 1h0m0s)
  last expiry      2031-07-05T07:08:09Z (in 1440h0m0s)
  projected empty  2031-05-06T07:58:09Z (in 50m0s)

r2 (active)
  live          3000 (75.0 % of all)
  replaced      10 (renewed already)
  remaining     2990
  issued        45 (in the window)
  renewed off   0 (in the window: 0 an hour)
  first expiry  2031-07-25T07:08:09Z (in 1920h0m0s)
  last expiry   2031-08-04T07:08:09Z (in 2160h0m0s)

refused renewals: at most 3 (429s of new-order and finalize by a limit renewals pay, on this replica; more than this replica keeps, the older ones are not counted)

renewal plan (1m0s slots): OVER CAPACITY
  ceiling           600 renewals an hour (max-renewals-per-hour)
  busiest ahead     17140 an hour, 2031-05-06T07:14:00Z (in 5m51s)
  over the ceiling  9 slots, from 2031-05-06T07:12:00Z (in 3m51s): raise max-renewals-per-hour to what the CA serves
  placed over       5 windows over the ceiling, 3 over an account's budget (this replica, since it started)
  1 accounts will ask for more renewals than their san-budget allows (their renewals will meet 429s):
  account  peak/h  allowed/h  at
  7        430.0   42.9       2031-05-06T07:14:00Z (in 5m51s)
`
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}

	code, out, _ = runCLI(append([]string{"ca", "migration-status", "--json"}, flags...)...)
	var got, sent map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 0 {
		t.Fatalf("--json: exit %d, %v:\n%s", code, err, out)
	}
	if err := json.Unmarshal([]byte(migrationJSON), &sent); err != nil {
		t.Fatal(err)
	}
	if g, s := mustJSON(t, got), mustJSON(t, sent); g != s {
		t.Errorf("--json printed %s, want the answer %s", g, s)
	}

	wantCLI(t, append([]string{"ca", "migration-status", "extra"}, flags...), 2, `unexpected argument "extra"`)
	wantCLI(t, []string{"ca", "migration-status", "-admin", api.URL + "/nowhere", "-token-file", tokenFile}, 1, "weir ca migration-status: no such route (HTTP 404)")
}

// mustJSON is v as compact JSON, its keys sorted.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
