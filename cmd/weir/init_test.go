// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/weir-pki/weir/server"
)

// runInit runs weir init with args.
func runInit(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	code := run(append([]string{"init"}, args...), &out, &out)
	return code, out.String()
}

// TestInit: init writes the commented config naming the data directory,
// creates the CA, the HTTPS certificate and the admin token with private
// files at 0600, and serves nothing; it refuses to overwrite the config
// without -force, never replaces the CA or the token, and weir serve then
// starts on what it made.
func TestInit(t *testing.T) {
	dir := t.TempDir()
	configPath := filepath.Join(dir, "etc", "weir.yaml")
	dataDir := filepath.Join(dir, "data")
	code, out := runInit(t, "-config", configPath, "-data-dir", dataDir)
	if code != 0 {
		t.Fatalf("init: exit %d\n%s", code, out)
	}
	for _, w := range []string{"wrote " + configPath, "created  ca/root-key.pem", "created  admin-token", "root CA SHA-256: ", "weir serve -config " + configPath} {
		if !strings.Contains(out, w) {
			t.Errorf("init output does not mention %q:\n%s", w, out)
		}
	}

	text, err := os.ReadFile(configPath)
	if err != nil {
		t.Fatal(err)
	}
	if want := server.ConfigText(configPath, dataDir); !bytes.Equal(text, want) {
		t.Errorf("the config init wrote differs from the template:\n%s", firstDiff(text, want))
	}
	cfg, err := server.LoadConfig(configPath)
	if err != nil {
		t.Fatal(err)
	}
	want := server.DefaultConfig()
	want.DataDir = dataDir
	if got, wantY := marshalYAML(t, cfg), marshalYAML(t, want); got != wantY {
		t.Errorf("the config init wrote loads as\n%s\nwant the defaults with data-dir %s", got, dataDir)
	}

	for _, f := range []struct {
		name string
		mode os.FileMode
	}{
		{"root.pem", 0o644}, {"ca/root.pem", 0o644}, {"ca/root-key.pem", 0o600}, {"ca/intermediate.pem", 0o644},
		{"ca/intermediate-key.pem", 0o600}, {"tls/cert.pem", 0o644}, {"tls/key.pem", 0o600}, {"admin-token", 0o600},
	} {
		st, err := os.Stat(filepath.Join(dataDir, f.name))
		if err != nil {
			t.Errorf("%s: %v", f.name, err)
			continue
		}
		if st.Mode().Perm() != f.mode {
			t.Errorf("%s: mode %04o, want %04o", f.name, st.Mode().Perm(), f.mode)
		}
	}
	if exists(filepath.Join(dataDir, "weir.db")) {
		t.Error("init created the database: that is serve's job")
	}
	token, err := readToken(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	if raw, err := base64.RawURLEncoding.DecodeString(token); err != nil || len(raw) != 32 {
		t.Errorf("admin token %q: %d bytes (%v), want 32 bytes of base64url", token, len(raw), err)
	}
	rootPEM, _ := os.ReadFile(filepath.Join(dataDir, "root.pem"))

	// Again: the existing config is refused without -force, and left alone.
	if err := os.WriteFile(configPath, []byte("# mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := runInit(t, "-config", configPath, "-data-dir", dataDir); code != 1 || !strings.Contains(out, "-force") {
		t.Errorf("init over an existing config: exit %d, want 1 naming -force:\n%s", code, out)
	}
	if b, _ := os.ReadFile(configPath); string(b) != "# mine\n" {
		t.Error("init without -force changed the existing config")
	}
	// With -force: the config is rewritten, the CA and token kept.
	code, out = runInit(t, "-config", configPath, "-data-dir", dataDir, "-force")
	if code != 0 || !strings.Contains(out, "kept     ca/root-key.pem") || !strings.Contains(out, "kept     admin-token") {
		t.Errorf("init -force: exit %d, want the CA and token kept:\n%s", code, out)
	}
	if b, _ := os.ReadFile(filepath.Join(dataDir, "root.pem")); !bytes.Equal(b, rootPEM) {
		t.Error("init -force replaced the root")
	}
	if tok, _ := readToken(dataDir); tok != token {
		t.Error("init -force replaced the admin token")
	}

	// serve starts on it, with the same root and HTTPS certificate.
	certPEM, _ := os.ReadFile(filepath.Join(dataDir, "tls/cert.pem"))
	cfg.Server.Listen = "127.0.0.1:0"
	srv, err := server.New(t.Context(), cfg, server.Options{Log: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	// The server writes the root it runs with to root.pem.
	if b, _ := os.ReadFile(filepath.Join(dataDir, "root.pem")); !bytes.Equal(b, rootPEM) {
		t.Error("serve made a new root instead of using init's")
	}
	if b, _ := os.ReadFile(filepath.Join(dataDir, "tls/cert.pem")); !bytes.Equal(b, certPEM) {
		t.Error("serve issued a new HTTPS certificate instead of using init's")
	}
}

func TestInitPrintConfig(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	code, out := runInit(t, "-print-config", "-data-dir", "/var/lib/weir")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	if !strings.Contains(out, "\ndata-dir: /var/lib/weir\n") || !strings.Contains(out, "weir serve -config weir.yaml") {
		t.Errorf("output does not name the data dir and config file:\n%s", out)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("-print-config wrote %d files", len(entries))
	}
	// A data directory that needs quoting stays one YAML string.
	cfg, err := server.ParseConfig("", server.ConfigText("weir.yaml", "./my data: #1"))
	if err != nil || cfg.DataDir != "./my data: #1" {
		t.Errorf("data-dir with YAML syntax: %q, %v", cfg.DataDir, err)
	}
	if code, _ := runInit(t, "-print-config", "-data-dir", ""); code != 1 {
		t.Errorf("empty -data-dir: exit %d, want 1", code)
	}
}

// readToken reads the admin token init made in dataDir (admin-token).
func readToken(dataDir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, "admin-token"))
	return strings.TrimSpace(string(b)), err
}

// marshalYAML renders cfg for comparison (an empty list equals a missing
// one).
func marshalYAML(t *testing.T, cfg server.Config) string {
	t.Helper()
	b, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// exists reports whether a file is at path.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
