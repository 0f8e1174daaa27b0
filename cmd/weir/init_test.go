package main

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
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
	if want := configText(configPath, dataDir); !bytes.Equal(text, want) {
		t.Errorf("the config init wrote differs from the template:\n%s", firstDiff(text, want))
	}
	cfg, err := loadConfig(configPath)
	if err != nil {
		t.Fatal(err)
	}
	want := defaultConfig()
	want.DataDir = dataDir
	if got, wantY := marshalYAML(t, cfg), marshalYAML(t, want); got != wantY {
		t.Errorf("the config init wrote loads as\n%s\nwant the defaults with data-dir %s", got, dataDir)
	}

	for _, f := range []struct {
		name string
		mode os.FileMode
	}{
		{fileRootPEM, 0o644}, {fileCARoot, 0o644}, {fileCARootKey, 0o600}, {fileCAIntermediate, 0o644},
		{fileCAIntKey, 0o600}, {fileTLSCert, 0o644}, {fileTLSKey, 0o600}, {"admin-token", 0o600},
	} {
		st, err := os.Stat(dataPath(dataDir, f.name))
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
	token, err := loadOrCreateAdminToken(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if raw, err := base64.RawURLEncoding.DecodeString(token); err != nil || len(raw) != 32 {
		t.Errorf("admin token %q: %d bytes (%v), want 32 bytes of base64url", token, len(raw), err)
	}
	rootPEM, _ := os.ReadFile(dataPath(dataDir, fileRootPEM))

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
	if b, _ := os.ReadFile(dataPath(dataDir, fileRootPEM)); !bytes.Equal(b, rootPEM) {
		t.Error("init -force replaced the root")
	}
	if tok, _ := loadOrCreateAdminToken(cfg); tok != token {
		t.Error("init -force replaced the admin token")
	}

	// serve starts on it, with the same root and HTTPS certificate.
	certPEM, _ := os.ReadFile(dataPath(dataDir, fileTLSCert))
	cfg.Server.Listen = "127.0.0.1:0"
	srv, err := newServer(t.Context(), cfg, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if !bytes.Equal(srv.root, rootPEM) {
		t.Error("serve made a new root instead of using init's")
	}
	if b, _ := os.ReadFile(dataPath(dataDir, fileTLSCert)); !bytes.Equal(b, certPEM) {
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
	cfg, err := parseConfig(configText("weir.yaml", "./my data: #1"))
	if err != nil || cfg.DataDir != "./my data: #1" {
		t.Errorf("data-dir with YAML syntax: %q, %v", cfg.DataDir, err)
	}
	if code, _ := runInit(t, "-print-config", "-data-dir", ""); code != 1 {
		t.Errorf("empty -data-dir: exit %d, want 1", code)
	}
}

// TestAdminToken: a token file readable by others is refused, as CA keys
// are; the admin listener off or auth none needs no token.
func TestAdminToken(t *testing.T) {
	cfg := defaultConfig()
	cfg.DataDir = t.TempDir()
	tok, err := loadOrCreateAdminToken(cfg)
	if err != nil || tok == "" {
		t.Fatalf("token %q, %v", tok, err)
	}
	if again, _ := loadOrCreateAdminToken(cfg); again != tok {
		t.Error("a second call made a new token")
	}
	path := dataPath(cfg.DataDir, "admin-token")
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := loadOrCreateAdminToken(cfg); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a 0640 token file: err = %v, want a refusal", err)
	}
	if err := os.WriteFile(path, []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadOrCreateAdminToken(cfg); err == nil {
		t.Error("a 5-character token was accepted")
	}
	none := cfg
	none.DataDir = t.TempDir()
	none.Admin.Auth = "none"
	if tok, err := loadOrCreateAdminToken(none); tok != "" || err != nil || exists(dataPath(none.DataDir, "admin-token")) {
		t.Errorf("auth none: token %q, err %v; want none made", tok, err)
	}
	abs := cfg
	abs.DataDir = t.TempDir()
	abs.Admin.TokenFile = filepath.Join(t.TempDir(), "elsewhere", "token")
	if _, err := loadOrCreateAdminToken(abs); err != nil || !exists(abs.Admin.TokenFile) {
		t.Errorf("absolute token-file: %v", err)
	}
}

// marshalYAML renders cfg for comparison (an empty list equals a missing
// one).
func marshalYAML(t *testing.T, cfg Config) string {
	t.Helper()
	b, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
