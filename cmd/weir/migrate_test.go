// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMigrateSQLite: weir migrate creates the SQLite database of a new
// data directory and lists every version, applied now the first time only.
func TestMigrateSQLite(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "weir.yaml")
	dataDir := filepath.Join(dir, "data")
	if err := os.WriteFile(cfgFile, []byte("data-dir: "+dataDir+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for i, wantNow := range []bool{true, false} {
		var stdout, stderr bytes.Buffer
		if code := run([]string{"migrate", "-config", cfgFile}, &stdout, &stderr); code != 0 {
			t.Fatalf("migrate %d: exit %d: %s", i, code, stderr.String())
		}
		out := stdout.String()
		if !strings.HasPrefix(out, "storage sqlite ("+filepath.Join(dataDir, "weir.db")+"): schema version ") ||
			!strings.Contains(out, "  0001 init") {
			t.Errorf("migrate %d: output\n%s", i, out)
		}
		if got := strings.Contains(out, "(applied now)"); got != wantNow {
			t.Errorf("migrate %d: versions applied now: %v, want %v:\n%s", i, got, wantNow, out)
		}
	}
	if st, err := os.Stat(filepath.Join(dataDir, "weir.db")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("weir.db: %v, %v; want mode 0600", st, err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"migrate", "extra"}, &stdout, &stderr); code != 2 {
		t.Errorf("migrate with an argument: exit %d, want 2", code)
	}
}

// TestMigrateStorageFlags: weir migrate-storage hands its flags to the
// copy, which refuses what it does not support before touching anything,
// and takes no arguments.
func TestMigrateStorageFlags(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "weir.yaml")
	if err := os.WriteFile(cfgFile, []byte("data-dir: "+filepath.Join(dir, "data")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		code int
		want string // in the error output
	}{
		{[]string{"--from", "postgres", "--to", "sqlite", "--to-dsn", "postgres://x@127.0.0.1/y"}, 1, "weir migrate-storage: --from \"postgres\" --to \"sqlite\": only --from sqlite --to postgres"},
		{[]string{"--to-dsn", "postgres://x@127.0.0.1/y", "--to-dsn-file", "f"}, 1, "give --to-dsn or --to-dsn-file, not both"},
		{[]string{"-batch", "0", "--to-dsn", "postgres://x@127.0.0.1/y"}, 1, "-batch 0: must be positive"},
		{[]string{"extra"}, 2, "Usage: weir migrate-storage"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"migrate-storage", "-config", cfgFile}, tt.args...), &stdout, &stderr)
		if code != tt.code || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("weir migrate-storage %v: exit %d, %q; want %d and %q", tt.args, code, stderr.String(), tt.code, tt.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); !os.IsNotExist(err) {
		t.Errorf("a refused migrate-storage created the data directory (%v)", err)
	}
}
