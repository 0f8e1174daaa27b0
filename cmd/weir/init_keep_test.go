// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-pki/weir/server"
)

// TestInitKeepConfig: init -keep-config (the Debian package's postinst)
// creates the data directory an existing configuration file names and
// leaves the file byte for byte as it was; a second run keeps the CA; a
// missing or invalid file fails with exit 1 and creates nothing.
func TestInitKeepConfig(t *testing.T) {
	dir := t.TempDir()
	configPath := filepath.Join(dir, "weir.yaml")
	dataDir := filepath.Join(dir, "var", "lib", "weir")
	text := append(server.ConfigText(configPath, dataDir), []byte("# edited by the operator\n")...)
	if err := os.WriteFile(configPath, text, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := runInit(t, "-keep-config", "-config", configPath)
	if code != 0 {
		t.Fatalf("init -keep-config: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "created  ca/root-key.pem") || strings.Contains(out, "wrote ") {
		t.Errorf("init -keep-config output:\n%s", out)
	}
	if b, _ := os.ReadFile(configPath); !bytes.Equal(b, text) {
		t.Error("init -keep-config changed the configuration file")
	}
	root, err := os.ReadFile(filepath.Join(dataDir, "root.pem"))
	if err != nil {
		t.Fatalf("no root.pem in the data directory the file names: %v", err)
	}

	if code, out := runInit(t, "-keep-config", "-config", configPath); code != 0 {
		t.Fatalf("second init -keep-config: exit %d\n%s", code, out)
	}
	if b, _ := os.ReadFile(filepath.Join(dataDir, "root.pem")); !bytes.Equal(b, root) {
		t.Error("a second init -keep-config replaced the root")
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("data-dir: "+filepath.Join(dir, "other")+"\nnot-a-key: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{bad, filepath.Join(dir, "missing.yaml")} {
		if code, out := runInit(t, "-keep-config", "-config", path); code != 1 || !strings.Contains(out, "weir init: ") {
			t.Errorf("init -keep-config -config %s: exit %d, want 1 with a message:\n%s", path, code, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "other")); err == nil {
		t.Error("init -keep-config created the data directory of an invalid file")
	}
}
