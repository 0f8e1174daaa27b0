// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-pki/weir/server"
)

// TestInitKeepConfigRootKeyOut: init -keep-config -root-key-out (the
// Debian package's first install, with the root kept offline) writes the
// root's key to the path asked for and none into the data directory.
func TestInitKeepConfigRootKeyOut(t *testing.T) {
	dir, configPath, dataDir := writeInitConfig(t)
	rootKey := filepath.Join(dir, "offline", "root-key.pem")
	code, out := runInit(t, "-keep-config", "-config", configPath, "-root-key-out", rootKey)
	if code != 0 {
		t.Fatalf("init -keep-config -root-key-out: exit %d\n%s", code, out)
	}
	if st, err := os.Stat(rootKey); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the root key at -root-key-out: %v (%v), want a file at mode 0600", st, err)
	}
	if exists(filepath.Join(dataDir, "ca", "root-key.pem")) {
		t.Error("init -keep-config -root-key-out wrote the root key into the data directory")
	}
	if !strings.Contains(out, "the root CA's key is at "+rootKey) {
		t.Errorf("init's report does not say where the root key went:\n%s", out)
	}
	// A second run finds the CA: the root key path cannot apply to it.
	other := filepath.Join(dir, "offline", "other-key.pem")
	if code, out := runInit(t, "-keep-config", "-config", configPath, "-root-key-out", other); code != 1 || !strings.Contains(out, "has a CA already") {
		t.Errorf("init -keep-config -root-key-out on an existing CA: exit %d, want 1 saying so:\n%s", code, out)
	}
	if exists(other) {
		t.Error("init wrote a root key for a CA that exists")
	}
}

// TestInitFlagConflicts: a flag that init cannot apply in the mode asked
// for is a usage error (exit 2) that names both flags, and nothing is
// written; none is silently ignored.
func TestInitFlagConflicts(t *testing.T) {
	dir, configPath, dataDir := writeInitConfig(t)
	other := filepath.Join(dir, "other")
	rootKey := filepath.Join(dir, "root-key.pem")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-keep-config", "-data-dir", other}, "-data-dir does not apply with -keep-config"},
		{[]string{"-keep-config", "-force"}, "-force does not apply with -keep-config"},
		{[]string{"-keep-config", "-print-config"}, "-print-config does not apply with -keep-config"},
		{[]string{"-print-config", "-force"}, "-force does not apply with -print-config"},
		{[]string{"-print-config", "-root-key-out", rootKey}, "-root-key-out does not apply with -print-config"},
	} {
		args := append([]string{"-config", configPath}, tc.args...)
		code, out := runInit(t, args...)
		if code != 2 || !strings.Contains(out, "weir init: "+tc.want) || !strings.Contains(out, "Usage: weir init") {
			t.Errorf("init %v: exit %d, want 2 with %q and the help:\n%s", tc.args, code, tc.want, out)
		}
	}
	for _, p := range []string{dataDir, other, rootKey} {
		if exists(p) {
			t.Errorf("a refused init created %s", p)
		}
	}
	// -keep-config=false is no mode: the flags beside it apply.
	if code, out := runInit(t, "-keep-config=false", "-print-config", "-data-dir", other); code != 0 || !strings.Contains(out, "data-dir: "+other) {
		t.Errorf("init -keep-config=false -print-config -data-dir: exit %d\n%s", code, out)
	}
}

// TestInitRootKeyOutConfiguredIntermediate: with ca.intermediate
// configured init makes no root, so -root-key-out cannot apply: init
// says so (exit 1) instead of ignoring it.
func TestInitRootKeyOutConfiguredIntermediate(t *testing.T) {
	dir := t.TempDir()
	configPath := filepath.Join(dir, "weir.yaml")
	text := "data-dir: " + filepath.Join(dir, "data") + "\nca:\n  intermediate:\n    cert-file: " + filepath.Join(dir, "int.pem") +
		"\n    key-file: " + filepath.Join(dir, "int-key.pem") + "\n"
	if err := os.WriteFile(configPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	rootKey := filepath.Join(dir, "root-key.pem")
	code, out := runInit(t, "-keep-config", "-config", configPath, "-root-key-out", rootKey)
	if code != 1 || !strings.Contains(out, "ca.intermediate.cert-file is set") {
		t.Errorf("init -keep-config -root-key-out with ca.intermediate: exit %d, want 1 naming the key:\n%s", code, out)
	}
	if exists(rootKey) {
		t.Error("init wrote a root key")
	}
}

// writeInitConfig writes the commented configuration naming dir/data to
// dir/weir.yaml, as the Debian package ships it, in a new directory dir.
func writeInitConfig(t *testing.T) (dir, configPath, dataDir string) {
	t.Helper()
	dir = t.TempDir()
	configPath = filepath.Join(dir, "weir.yaml")
	dataDir = filepath.Join(dir, "data")
	if err := os.WriteFile(configPath, server.ConfigText(configPath, dataDir), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, configPath, dataDir
}
