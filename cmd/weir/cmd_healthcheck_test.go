// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHealthcheckCLI: weir healthcheck prints the answer of /readyz to
// standard output and exits 0 when it is 200, to standard error and exits
// 1 when it is not, and exits 1 naming itself when nothing answers; an
// argument is a usage error (exit 2).
func TestHealthcheckCLI(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/down/readyz" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		fmt.Fprint(w, `{"status":"x"}`)
	}))
	defer ts.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/readyz"
	ln.Close()
	tests := []struct {
		args           []string
		code           int
		stdout, stderr string // a substring of each; a failure writes nothing to stdout
	}{
		{[]string{"-url", ts.URL + "/readyz"}, 0, ts.URL + "/readyz: 200 OK\n{\"status\":\"x\"}", ""},
		{[]string{"-url", ts.URL + "/down/readyz"}, 1, "", ts.URL + "/down/readyz: 503 Service Unavailable"},
		{[]string{"-url", closed, "-timeout", "2s"}, 1, "", "weir healthcheck: "},
		{[]string{"extra"}, 2, "", "Usage: weir healthcheck"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"healthcheck"}, tt.args...), &stdout, &stderr)
		if code != tt.code || !strings.Contains(stdout.String(), tt.stdout) || !strings.Contains(stderr.String(), tt.stderr) ||
			tt.code != 0 && stdout.Len() > 0 {
			t.Errorf("weir healthcheck %v: exit %d, stdout %q, stderr %q; want exit %d, stdout with %q, stderr with %q",
				tt.args, code, stdout.String(), stderr.String(), tt.code, tt.stdout, tt.stderr)
		}
	}
}

// TestHealthcheckInvalidConfig: with a configuration that does not load
// (an edit the running weir refused), healthcheck asks the admin address
// weir serve recorded, and says so; without one it fails naming the file.
func TestHealthcheckInvalidConfig(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"status":"ok"}`)
	}))
	defer ts.Close()
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "weir.yaml")
	if err := os.WriteFile(cfgFile, []byte("data-dir: "+dir+"\nno-such-key: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"healthcheck", "-config", cfgFile}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), filepath.Join(dir, "admin.url")) {
		t.Errorf("no admin.url: exit %d, stderr %q; want 1 naming the file", code, stderr.String())
	}
	if err := os.WriteFile(filepath.Join(dir, "admin.url"), []byte(ts.URL+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"healthcheck", "-config", cfgFile}, &stdout, &stderr); code != 0 ||
		!strings.Contains(stdout.String(), ts.URL+"/readyz: 200 OK") || !strings.Contains(stderr.String(), "does not load") {
		t.Errorf("with admin.url: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}
