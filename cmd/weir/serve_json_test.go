// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/internal/weirproc"
)

// outFile is a file for serve's output, which its goroutines and the
// test can share.
func outFile(t *testing.T, name string) (*os.File, func() string) {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, func() string {
		b, _ := os.ReadFile(f.Name())
		return string(b)
	}
}

// jsonLines decodes every line of s as a JSON object, failing t for any
// line that is not one.
func jsonLines(t *testing.T, name, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Errorf("%s: a line that is not JSON: %q", name, sc.Text())
			continue
		}
		out = append(out, m)
	}
	return out
}

// TestServeJSONLogs: with log.format json, everything weir serve prints,
// the banner included, is JSON lines, and a request's duration is
// duration_ms, a float of milliseconds; a configuration it refuses is
// reported as JSON too.
func TestServeJSONLogs(t *testing.T) {
	dir := t.TempDir()
	addr, err := weirproc.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(dir, "weir.yaml")
	cfg := fmt.Sprintf("data-dir: %s\nserver:\n  listen: %s\n  http: { listen: 127.0.0.1:0 }\nadmin:\n  listen: 127.0.0.1:0\nlog:\n  format: json\n  level: info\n", filepath.Join(dir, "data"), addr)
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	stdoutF, stdout := outFile(t, "stdout")
	stderrF, stderr := outFile(t, "stderr")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan int, 1)
	go func() { done <- cmdServe(ctx, []string{"-config", cfgFile}, stdoutF, stderrF) }()
	deadline := time.Now().Add(60 * time.Second)
	for stdout() == "" && time.Now().Before(deadline) {
		select {
		case code := <-done:
			t.Fatalf("serve exited %d: %s", code, stderr())
		case <-time.After(50 * time.Millisecond):
		}
	}
	root, err := os.ReadFile(filepath.Join(dir, "data", "root.pem"))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(root)
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := hc.Get("https://" + addr + "/directory")
	if err == nil {
		resp.Body.Close()
	}
	hc.CloseIdleConnections()
	cancel()
	if code := <-done; code != 0 || err != nil {
		t.Fatalf("serve: exit %d, GET /directory: %v\n%s", code, err, stderr())
	}

	banner := jsonLines(t, "stdout", stdout())
	if len(banner) != 1 || banner[0]["msg"] != "weir is serving ACME" || banner[0]["directory"] != "https://"+addr+"/directory" || banner[0]["certbot"] == nil {
		t.Errorf("banner: %v", banner)
	}
	var request map[string]any
	for _, l := range jsonLines(t, "stderr", stderr()) {
		if l["msg"] == "request" {
			request = l
		}
	}
	if request == nil {
		t.Fatalf("no request logged:\n%s", stderr())
	}
	if ms, ok := request["duration_ms"].(float64); !ok || ms <= 0 || ms > 10000 {
		t.Errorf("request duration_ms = %v", request["duration_ms"])
	}
	if _, ok := request["duration"]; ok {
		t.Errorf("request logged a duration without its unit: %v", request)
	}

	// A configuration serve refuses: JSON lines, one per problem, exit 1.
	bad := "log:\n  format: json\nserver:\n  listen: nowhere\nno-such-key: 1\n"
	if err := os.WriteFile(cfgFile, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := cmdServe(t.Context(), []string{"-config", cfgFile}, &out, &errOut); code != 1 {
		t.Fatalf("serve with a bad config: exit %d", code)
	}
	lines := jsonLines(t, "stderr of a refused config", errOut.String())
	if len(lines) != 2 || out.String() != "" {
		t.Errorf("refused config: want 2 JSON problems, got %d:\n%s", len(lines), errOut.String())
	}
}
