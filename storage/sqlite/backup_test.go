// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestBackupFile: Backup copies a database that a Store has open, without
// opening a Store of its own (so without its lock, which the Store holds),
// and the copy opens as a store with the same objects. It refuses a
// missing source, creating nothing, and an existing destination.
func TestBackupFile(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "weir.db")
	s := openAt(t, src)
	a, c := seed(t, s)
	dest := filepath.Join(dir, "copy.db")
	if err := Backup(t.Context(), src, dest); err != nil {
		t.Fatalf("Backup of an open store: %v", err)
	}
	if fi, err := os.Stat(dest); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the copy: %v, %v; want mode 0600", fi, err)
	}
	b := openAt(t, dest)
	if got, err := b.GetAccount(t.Context(), a.ID); err != nil || got.KeyThumbprint != a.KeyThumbprint {
		t.Errorf("the copy's account %s: %v, %v", a.ID, got, err)
	}
	if got, err := b.GetCertificate(t.Context(), c.Serial); err != nil || string(got.DER) != string(c.DER) {
		t.Errorf("the copy's certificate %s: %v, %v", c.Serial, got, err)
	}
	if _, err := s.GetAccount(t.Context(), a.ID); err != nil {
		t.Errorf("the source store after the backup: %v", err)
	}

	missing := filepath.Join(dir, "missing.db")
	if err := Backup(t.Context(), missing, filepath.Join(dir, "copy2.db")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Backup of a missing file = %v; want ErrNotExist", err)
	}
	for _, p := range []string{missing, filepath.Join(dir, "copy2.db")} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s exists after a failed backup (%v)", p, err)
		}
	}
	if err := Backup(t.Context(), src, dest); err == nil {
		t.Error("Backup onto an existing file = nil; want an error")
	}
}
