// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestClient: the client sends the bearer token and a JSON body, drops
// empty query parameters, decodes a JSON answer (or keeps it raw), and
// turns a non-2xx answer into an error carrying the API's message.
func TestClient(t *testing.T) {
	var got struct{ auth, ctype, query, body string }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.auth, got.ctype, got.query, got.body = r.Header.Get("Authorization"), r.Header.Get("Content-Type"), r.URL.RawQuery, string(b)
		switch r.URL.Path {
		case "/api/v1/ok":
			_, _ = io.WriteString(w, `{"name":"x"}`)
		case "/api/v1/refused":
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, `{"error":"read-only credential"}`)
		default:
			w.WriteHeader(http.StatusBadGateway)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	c := NewClient(srv.URL+"/", "tok", nil)

	var v struct{ Name string }
	if err := c.Do(ctx, http.MethodPost, "/api/v1/ok", map[string]string{"a": "b"}, &v); err != nil || v.Name != "x" {
		t.Fatalf("Do = %v, %+v; want the decoded answer", err, v)
	}
	if got.auth != "Bearer tok" || got.ctype != "application/json" || got.body != `{"a":"b"}` {
		t.Errorf("request: %+v; want the bearer token and the JSON body", got)
	}
	var raw []byte
	if err := c.Get(ctx, "/api/v1/ok", url.Values{"q": {"v"}, "empty": {""}}, &raw); err != nil || string(raw) != `{"name":"x"}` {
		t.Errorf("Get raw = %v, %q", err, raw)
	}
	if got.query != "q=v" || got.ctype != "" {
		t.Errorf("Get: query %q, Content-Type %q; want q=v and none", got.query, got.ctype)
	}
	if err := c.Get(ctx, "/api/v1/refused", nil, nil); err == nil || err.Error() != "read-only credential (HTTP 403)" {
		t.Errorf("refused: %v; want the API's message with the status", err)
	}
	if err := c.Get(ctx, "/api/v1/other", nil, nil); err == nil || err.Error() != "the admin API answered HTTP 502" {
		t.Errorf("an answer without a message: %v", err)
	}
	if err := NewClient(srv.URL, "", nil).Get(ctx, "/api/v1/ok", nil, nil); err != nil || got.auth != "" {
		t.Errorf("without a token: %v, Authorization %q; want none", err, got.auth)
	}
	srv.Close()
	if err := c.Get(ctx, "/api/v1/ok", nil, nil); err == nil || !strings.Contains(err.Error(), "is weir serve running?") {
		t.Errorf("no server: %v", err)
	}
}
