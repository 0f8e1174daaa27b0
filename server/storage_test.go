// SPDX-License-Identifier: Apache-2.0

package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStorageConfig(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		wantErr []string // substrings, each naming a key; none when valid
	}{
		{"default sqlite", "", nil},
		{"postgres dsn", "storage: { driver: postgres, dsn: \"postgres://weir@db.internal:5432/weir?sslmode=verify-full\" }", nil},
		{"postgres dsn-file", "storage: { driver: postgres, dsn-file: /run/secrets/weir-dsn, max-conns: 20 }", nil},
		{"postgres without dsn", "storage: { driver: postgres }", []string{"storage.dsn: driver postgres needs dsn or dsn-file"}},
		{"postgres with both", "storage: { driver: postgres, dsn: \"host=db\", dsn-file: /x }", []string{"storage.dsn-file: set dsn or dsn-file, not both"}},
		{"postgres bad dsn", "storage: { driver: postgres, dsn: \"postgres://weir:hunter2@db:port/weir\" }", []string{"storage.dsn:"}},
		{"sqlite with dsn", "storage: { dsn: \"host=db\" }", []string{"only for driver postgres"}},
		{"sqlite without path", "storage: { path: \"\" }", []string{"storage.path"}},
		{"unknown driver and negative pool", "storage: { driver: mysql, max-conns: -1 }", []string{"storage.driver: \"mysql\"", "storage.max-conns"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig("", []byte(tt.yaml))
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("parseConfig: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("parseConfig: nil error, want %q", tt.wantErr)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("parseConfig: %v\nwant it to contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("parseConfig: %v shows the DSN's password", err)
			}
		})
	}
}

func TestPostgresConfigFromFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "dsn")
	if err := os.WriteFile(good, []byte("postgres://weir:s3cret@db.internal/weir?search_path=weir\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		cfg     StorageConfig
		wantDSN string
		wantErr string
	}{
		{"file, trailing newline dropped", StorageConfig{Driver: DriverPostgres, DSNFile: good, MaxConns: 3},
			"postgres://weir:s3cret@db.internal/weir?search_path=weir", ""},
		{"inline", StorageConfig{Driver: DriverPostgres, DSN: "host=db"}, "host=db", ""},
		{"missing file", StorageConfig{Driver: DriverPostgres, DSNFile: filepath.Join(dir, "nope")}, "", "storage.dsn-file"},
		{"empty file", StorageConfig{Driver: DriverPostgres, DSNFile: empty}, "", "is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pc, err := tt.cfg.postgresConfig()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("postgresConfig: %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("postgresConfig: %v", err)
			}
			if pc.DSN != tt.wantDSN || pc.MaxConns != tt.cfg.MaxConns {
				t.Errorf("postgresConfig = DSN %q, max-conns %d; want %q, %d", pc.DSN, pc.MaxConns, tt.wantDSN, tt.cfg.MaxConns)
			}
		})
	}
}

func TestStorageRedacted(t *testing.T) {
	tests := []struct{ dsn, want string }{
		{"", ""},
		{"postgres://weir:s3cret@db.internal:5432/weir?sslmode=verify-full",
			"postgres://weir:xxxxx@db.internal:5432/weir?sslmode=verify-full"},
		{"postgres://weir@db.internal/weir?password=s3cret", "postgres://weir@db.internal/weir?password=xxxxx"},
		{"postgres://weir@db.internal/weir", "postgres://weir@db.internal/weir"},
		{"host=db user=weir password=s3cret dbname=weir", "host=db user=weir password=xxxxx dbname=weir"},
		{`host=db password = 's3 \'cret' dbname=weir`, `host=db password = xxxxx dbname=weir`},
	}
	for _, tt := range tests {
		got := StorageConfig{Driver: DriverPostgres, DSN: tt.dsn}.redacted()
		if got.DSN != tt.want || strings.Contains(got.DSN, "s3") {
			t.Errorf("redacted(%q).DSN = %q, want %q", tt.dsn, got.DSN, tt.want)
		}
	}
}
