// SPDX-License-Identifier: Apache-2.0

package system

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// adminDo sends method path to e's admin listener with the bearer token
// tok, following no redirect, and returns the status and the body.
func adminDo(t *testing.T, e *env, method, path, tok string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, e.adminURL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	client := &http.Client{Timeout: 30 * time.Second,
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{RootCAs: e.Roots}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer client.CloseIdleConnections()
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, b
}

// bearerStatus is the status of an admin API request with token tok: a
// GET, or a POST for the regenerate actions.
func bearerStatus(t *testing.T, e *env, tok, path string) int {
	t.Helper()
	method := http.MethodGet
	if strings.HasSuffix(path, "/regenerate") {
		method = http.MethodPost
	}
	status, _ := adminDo(t, e, method, path, tok)
	return status
}

// adminJSON GETs path from e's admin API with the admin token and decodes
// the 200 answer into v.
func (e *env) adminJSON(t *testing.T, path string, v any) {
	t.Helper()
	status, body := adminDo(t, e, http.MethodGet, path, e.adminToken(t))
	if status != http.StatusOK {
		t.Fatalf("GET %s on the admin listener: %d %s", path, status, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s on the admin listener: %v", path, err)
	}
}
