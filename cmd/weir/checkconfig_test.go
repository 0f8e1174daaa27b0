package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkConfigRun runs weir check-config on a file holding text.
func checkConfigRun(t *testing.T, text string) (code int, stdout, stderr string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "weir.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errw bytes.Buffer
	code = run([]string{"check-config", path}, &out, &errw)
	return code, strings.ReplaceAll(out.String(), path, "FILE"), strings.ReplaceAll(errw.String(), path, "FILE")
}

// TestCheckConfig: a valid file prints "FILE: ok" and exits 0; a bad one
// exits 1 with one line per problem, each naming its key.
func TestCheckConfig(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // one per output line, in order: each line must contain it
	}{
		{name: "empty file", yaml: ""},
		{name: "the example", yaml: string(configText(configExampleName, "./weir-data"))},
		{name: "admin published with TLS and token", yaml: "admin: { listen: \"0.0.0.0:14001\", tls: true }\n"},
		{name: "bad YAML", yaml: "server:\n  listen: [oops\n", want: []string{"FILE: line 1: did not find expected ',' or ']'"}},
		{name: "unknown key", yaml: "server:\n  lisen: x\n", want: []string{"FILE: server.lisen: field lisen not found in type main.ServerConfig (line 2)"}},
		{name: "unknown key in a flow mapping", yaml: "rate-limiting:\n  global: { enabled: true, requests-per-minut: 5 }\n",
			want: []string{"FILE: rate-limiting.global.requests-per-minut: field requests-per-minut not found"}},
		{name: "unknown keys, every one", yaml: "bogus: 1\nserver:\n  lisen: x\n",
			want: []string{"FILE: bogus: field bogus not found", "FILE: server.lisen: field lisen not found"}},
		{name: "bad duration", yaml: "ca:\n  certificate-lifetime: soon\n", want: []string{"FILE: ca.certificate-lifetime: cannot unmarshal !!str `soon` into time.Duration (line 2)"}},
		{name: "zero limit", yaml: "rate-limiting: {order-creation: {orders-per-account-per-hour: 0}}\n",
			want: []string{"FILE: rate-limiting.order-creation.orders-per-account-per-hour: must be at least 1, got 0 (to turn the limit off, set enabled: false)"}},
		{name: "admin on 0.0.0.0 with auth none and no TLS", yaml: "admin: { listen: \"0.0.0.0:14001\", auth: none }\n", want: []string{
			`FILE: admin.auth: the admin listener "0.0.0.0:14001" is not on loopback, so it must require a token (admin.auth: token)`,
			`FILE: admin.tls: the admin listener "0.0.0.0:14001" is not on loopback, so it must use TLS (admin.tls: true)`,
		}},
		{name: "admin on 0.0.0.0 without TLS", yaml: "admin: { listen: \"0.0.0.0:14001\" }\n", want: []string{"FILE: admin.tls: "}},
		{name: "admin on every interface with auth none but TLS", yaml: "admin: { listen: \":14001\", auth: none, tls: true }\n", want: []string{"FILE: admin.auth: "}},
		{name: "several problems at once", yaml: "server:\n  listen: nope\nlog:\n  level: loud\nrate-limiting:\n  global: { burst: 0 }\n",
			want: []string{"FILE: server.listen: ", "FILE: log.level: ", "FILE: rate-limiting.global.burst: must be at least 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := checkConfigRun(t, tt.yaml)
			if len(tt.want) == 0 {
				if code != 0 || stdout != "FILE: ok\n" || stderr != "" {
					t.Errorf("exit %d, stdout %q, stderr %q; want 0 and \"FILE: ok\"", code, stdout, stderr)
				}
				return
			}
			if code != 1 || stdout != "" {
				t.Errorf("exit %d, stdout %q; want 1 and nothing", code, stdout)
			}
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			if len(lines) != len(tt.want) {
				t.Fatalf("%d lines, want %d:\n%s", len(lines), len(tt.want), stderr)
			}
			for i, w := range tt.want {
				if !strings.Contains(lines[i], w) {
					t.Errorf("line %d = %q\nwant it to contain %q", i+1, lines[i], w)
				}
			}
		})
	}
	t.Run("usage", func(t *testing.T) {
		var out, errw bytes.Buffer
		if code := run([]string{"check-config"}, &out, &errw); code != 2 {
			t.Errorf("no file: exit %d, want 2", code)
		}
		if code := run([]string{"check-config", filepath.Join(t.TempDir(), "missing.yaml")}, &out, &errw); code != 1 {
			t.Errorf("missing file: exit %d, want 1", code)
		}
	})
}
