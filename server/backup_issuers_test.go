// SPDX-License-Identifier: Apache-2.0

package server

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestBackupIssuers: weir backup copies the data directory's files of
// each ca.issuers entry, keys at 0600, and names those outside it.
func TestBackupIssuers(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.Admin.Enabled = new(bool)
	cfg.CA.Issuers = []IssuerConfig{{ID: "r2"}, {ID: "r3", IntermediateConfig: IntermediateConfig{CertFile: "/etc/weir/r3.pem", KeyFile: "/etc/weir/r3-key.pem"}}}
	for name, mode := range map[string]os.FileMode{issuerCertFile("r2"): 0o644, issuerKeyFile("r2"): 0o600} {
		p := dataPath(cfg.DataDir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(name), mode); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "backup")
	copied, notes, err := backup(t.Context(), cfg, out)
	if err != nil {
		t.Fatal(err)
	}
	for name, mode := range map[string]os.FileMode{issuerCertFile("r2"): 0o644, issuerKeyFile("r2"): 0o600} {
		if !slices.Contains(copied, name) {
			t.Errorf("backup did not copy %s (copied %v)", name, copied)
		}
		if st, err := os.Stat(dataPath(out, name)); err != nil || st.Mode().Perm() != mode {
			t.Errorf("%s in the backup: %v, mode %v; want %04o", name, err, st, mode)
		}
	}
	if !strings.Contains(strings.Join(notes, "\n"), "ca.issuers[1] (r3) cert-file /etc/weir/r3.pem") {
		t.Errorf("the notes do not name r3's files outside the data directory: %v", notes)
	}
}
