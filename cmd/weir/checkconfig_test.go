// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/weir-pki/weir/server"
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

// goTypeName matches a type name of package server in a message.
var goTypeName = regexp.MustCompile(`\bserver\.(?:[A-Z]|[a-z]+[A-Z])\w*`)

// wantCheckConfig runs check-config on a file holding text. With no want
// the file is good: "FILE: ok", exit 0. Else it exits 1 and prints one
// line per want, in order, each starting with it, and no Go or yaml.v3
// internals.
func wantCheckConfig(t *testing.T, text string, want []string) {
	t.Helper()
	code, stdout, stderr := checkConfigRun(t, text)
	if len(want) == 0 {
		if code != 0 || stdout != "FILE: ok\n" || stderr != "" {
			t.Errorf("exit %d, stdout %q, stderr %q; want 0 and \"FILE: ok\"", code, stdout, stderr)
		}
		return
	}
	if code != 1 || stdout != "" {
		t.Errorf("exit %d, stdout %q; want 1 and nothing", code, stdout)
	}
	for _, internal := range []string{"!!", "cannot unmarshal", "not found in type", "main.", "int64", "time.Duration"} {
		if strings.Contains(stderr, internal) {
			t.Errorf("the report shows Go's or yaml.v3's internals (%q):\n%s", internal, stderr)
		}
	}
	// The configuration's types are package server's (server.Config,
	// server.profileMap); its key paths are kebab-case (server.listen).
	if m := goTypeName.FindString(stderr); m != "" {
		t.Errorf("the report shows a Go type name (%q):\n%s", m, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), stderr)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q\nwant it to start with %q", i+1, lines[i], w)
		}
	}
}

// TestCheckConfig: a valid file prints "FILE: ok" and exits 0; a bad one
// exits 1 with one line per problem, each naming its key.
func TestCheckConfig(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // one per output line, in order: each line must start with it
	}{
		{name: "empty file", yaml: ""},
		{name: "the example", yaml: string(server.ConfigText(exampleConfigName, "./weir-data"))},
		{name: "admin published with TLS and token", yaml: "admin: { listen: \"0.0.0.0:14001\", tls: true }\n"},
		{name: "bad YAML", yaml: "server:\n  listen: [oops\n", want: []string{"FILE:2: did not find expected ',' or ']'"}},
		{name: "unknown key", yaml: "server:\n  lisen: x\n", want: []string{"FILE:2: server.lisen: unknown key; did you mean listen?"}},
		{name: "unknown key in a flow mapping", yaml: "rate-limiting:\n  global: { enabled: true, requests-per-minut: 5 }\n",
			want: []string{"FILE:2: rate-limiting.global.requests-per-minut: unknown key; did you mean requests-per-minute?"}},
		{name: "unknown keys, every one", yaml: "bogus: 1\nserver:\n  lisen: x\n",
			want: []string{"FILE:1: bogus: unknown key; the top level takes data-dir, server,", "FILE:3: server.lisen: unknown key; did you mean listen?"}},
		{name: "bad duration", yaml: "ca:\n  certificate-lifetime: soon\n", want: []string{`FILE:2: ca.certificate-lifetime: "soon" is not a duration (e.g. 10s, 5m, 2h)`}},
		{name: "zero limit", yaml: "rate-limiting: {order-creation: {orders-per-account-per-hour: 0}}\n",
			want: []string{"FILE:1: rate-limiting.order-creation.orders-per-account-per-hour: must be at least 1, got 0 (to turn the limit off, set enabled: false)"}},
		{name: "admin on 0.0.0.0 with auth none and no TLS", yaml: "admin: { listen: \"0.0.0.0:14001\", auth: none }\n", want: []string{
			`FILE:1: admin.auth: the admin listener "0.0.0.0:14001" is not on loopback, so it must require a token (admin.auth: token)`,
			`FILE:1: admin.tls: the admin listener "0.0.0.0:14001" is not on loopback, so it must use TLS (admin.tls: true)`,
		}},
		{name: "admin on 0.0.0.0 without TLS", yaml: "admin: { listen: \"0.0.0.0:14001\" }\n", want: []string{"FILE:1: admin.tls: "}},
		{name: "admin on every interface with auth none but TLS", yaml: "admin: { listen: \":14001\", auth: none, tls: true }\n", want: []string{"FILE:1: admin.auth: "}},
		{name: "several problems at once", yaml: "server:\n  listen: nope\nlog:\n  level: loud\nrate-limiting:\n  global: { burst: 0 }\n",
			want: []string{"FILE:2: server.listen: ", "FILE:4: log.level: ", "FILE:6: rate-limiting.global.burst: must be at least 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantCheckConfig(t, tt.yaml, tt.want) })
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
