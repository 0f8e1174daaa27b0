// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-pki/weir/migrations"
	"github.com/weir-pki/weir/storage/postgres/pgtest"
)

// TestMigratePostgres: weir migrate reads the DSN from dsn-file, applies
// the migrations once, and says which it applied.
func TestMigratePostgres(t *testing.T) {
	_, dsn := pgtest.Schema(t, "weir_e2e_")
	dir := t.TempDir()
	dsnFile := filepath.Join(dir, "dsn")
	if err := os.WriteFile(dsnFile, []byte(dsn+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(dir, "weir.yaml")
	cfg := "data-dir: " + filepath.Join(dir, "data") + "\nstorage: { driver: postgres, dsn-file: " + dsnFile + " }\n"
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	// Every embedded migration, so the test needs no change when one is
	// added.
	ms, err := migrations.List(migrations.Postgres(), migrations.PostgresDir)
	if err != nil {
		t.Fatal(err)
	}
	top := ms[len(ms)-1].Version
	for i, wantNow := range []int{len(ms), 0} { // versions applied by this run
		var stdout, stderr bytes.Buffer
		if code := run([]string{"migrate", "-config", cfgFile}, &stdout, &stderr); code != 0 {
			t.Fatalf("migrate %d: exit %d: %s", i, code, stderr.String())
		}
		out := stdout.String()
		if !strings.HasPrefix(out, fmt.Sprintf("storage postgres (PostgreSQL): schema version %d\n", top)) {
			t.Errorf("migrate %d: output\n%s\nwant schema version %d", i, out, top)
		}
		for _, m := range ms {
			if line := fmt.Sprintf("  %04d %s", m.Version, m.Name); !strings.Contains(out, line) {
				t.Errorf("migrate %d: output\n%s\nwant a line %q", i, out, line)
			}
		}
		if got := strings.Count(out, "(applied now)"); got != wantNow {
			t.Errorf("migrate %d: %d versions applied now, want %d:\n%s", i, got, wantNow, out)
		}
		if strings.Contains(out, dsn) {
			t.Errorf("migrate %d printed the DSN", i)
		}
	}
}

// TestBackupRefusesPostgres: weir backup has no PostgreSQL snapshot to
// make, so it refuses and points at pg_dump instead of copying a data
// directory that would restore as an empty CA.
func TestBackupRefusesPostgres(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "weir.yaml")
	cfg := "data-dir: " + dir + "\nstorage: { driver: postgres, dsn: \"postgres://weir@db.internal/weir\" }\n"
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "backup")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"backup", "-config", cfgFile, "-out", out}, &stdout, &stderr); code != 1 {
		t.Fatalf("backup with driver postgres: exit %d, want 1", code)
	}
	if !strings.Contains(stderr.String(), "pg_dump") {
		t.Errorf("backup with driver postgres: %q, want a pointer to pg_dump", stderr.String())
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("backup with driver postgres created the output directory")
	}
}
