// SPDX-License-Identifier: Apache-2.0

package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAdminToken: a token file readable by others is refused, as CA keys
// are; the admin listener off or auth none needs no token.
func TestAdminToken(t *testing.T) {
	cfg := DefaultConfig()
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
