// SPDX-License-Identifier: Apache-2.0

package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWrite: Write makes a file, replaces it with its mode, and leaves
// no temporary file behind; into a directory that is not there it
// fails and writes nothing.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	for _, content := range []string{"first\n", "second, longer\n", ""} {
		if err := Write(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Errorf("read %q, %v; want %q", got, err, content)
		}
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("mode: %v, %v; want 0600", st, err)
	}
	if names, err := os.ReadDir(dir); err != nil || len(names) != 1 {
		t.Errorf("the directory holds %v (%v), want the file alone", names, err)
	}
	if err := Write(filepath.Join(dir, "none", "f"), []byte("x"), 0o600); err == nil {
		t.Error("Write into a missing directory succeeded")
	}
}
