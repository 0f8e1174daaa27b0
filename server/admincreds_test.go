package server

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-pki/weir/web/admin"
)

// TestAdminCredentialsFileRefuses: a credentials file that is not the
// expected JSON, holds a bad entry or is writable by others is refused
// with the file and the entry named; a running set stays when its file
// turns bad, and follows a good edit.
func TestAdminCredentialsFileRefuses(t *testing.T) {
	dir := t.TempDir()
	digest := strings.Repeat("ab", 32)
	good := `{"credentials":[{"name":"ci","role":"read","sha256":"` + digest + `","created_at":"2026-01-02T03:04:05Z"}]}`
	for _, tc := range []struct {
		name, content string
		mode          os.FileMode
		want          string
	}{
		{"not JSON", "credentials: []", 0o600, "invalid character"},
		{"unknown member", `{"credentials":[],"tokens":[]}`, 0o600, `unknown field "tokens"`},
		{"unknown entry member", `{"credentials":[{"name":"ci","role":"read","sha256":"` + digest + `","token":"x"}]}`, 0o600, `unknown field "token"`},
		{"bad role", strings.Replace(good, `"read"`, `"admin"`, 1), 0o600, `credentials[0] ("ci"): role "admin" is not read or operate`},
		{"root's name", strings.Replace(good, `"ci"`, `"admin"`, 1), 0o600, `the name "admin" is the token file's credential`},
		{"bad digest", strings.Replace(good, digest, "abc", 1), 0o600, "sha256 must be 64 hexadecimal digits"},
		{"writable by group", good, 0o620, "writable by group or others"},
	} {
		path := filepath.Join(dir, tc.name+".json")
		if err := os.WriteFile(path, []byte(tc.content), tc.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, tc.mode); err != nil {
			t.Fatal(err)
		}
		_, err := loadAdminCredentials(path)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v, want an error naming %s with %q", tc.name, err, path, tc.want)
		}
	}
	if set, err := loadAdminCredentials(filepath.Join(dir, "missing.json")); err != nil || set != nil {
		t.Errorf("a missing file: %v, %v; want an empty set", set, err)
	}

	path := filepath.Join(dir, adminCredentialsName)
	if err := os.WriteFile(path, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	stored, err := loadAdminCredentials(path)
	if err != nil || len(stored) != 1 || stored[0].Name != "ci" || stored[0].CreatedAt.IsZero() {
		t.Fatalf("a good file: %+v, %v", stored, err)
	}
	creds, err := admin.NewCredentialSet(stored, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	s := &Server{log: slog.New(slog.NewTextHandler(&logs, nil)), adminCreds: creds}
	os.WriteFile(path, []byte(strings.Replace(good, `"read"`, `"root"`, 1)), 0o600)
	s.reloadAdminCredentials(path)
	if l := creds.Stored(); len(l) != 1 || l[0].Role != admin.RoleRead || !strings.Contains(logs.String(), "admin credentials reload refused") {
		t.Errorf("after a bad edit: %+v; log %s; want the running set kept and the refusal logged", l, logs.String())
	}
	os.WriteFile(path, []byte(strings.Replace(good, `"read"`, `"operate"`, 1)), 0o600)
	s.reloadAdminCredentials(path)
	if l := creds.Stored(); len(l) != 1 || l[0].Role != admin.RoleOperate {
		t.Errorf("after a good edit: %+v, want ci with operate", l)
	}
	if err := saveAdminCredentials(path, creds.Stored()); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the saved file: %v, %v; want mode 0600", fi, err)
	}
	if again, err := loadAdminCredentials(path); err != nil || len(again) != 1 || again[0] != creds.Stored()[0] {
		t.Errorf("the saved file reads back as %+v, %v", again, err)
	}
}
