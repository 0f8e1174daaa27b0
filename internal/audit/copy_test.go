// SPDX-License-Identifier: Apache-2.0

package audit

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestCopyComplete: a copy of a live trail file holds its complete lines
// and leaves out a line being written (no newline yet); the copied
// trail, rotated files first, verifies with every event.
func TestCopyComplete(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit-r1.jsonl")
	s := open(t, path, 2<<10)
	for i := range 20 {
		if err := s.Record(issuance(i)); err != nil {
			t.Fatal(err)
		}
	}
	files := append(RotatedFiles(path), path)
	if len(files) < 3 {
		t.Fatalf("%d files, want rotations (max-size 2 KiB)", len(files))
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"time":"2031-01-01T00:00:00Z","replica":"r1","seq":21,`); err != nil { // a line being written
		t.Fatal(err)
	}
	f.Close()

	out := t.TempDir()
	var copies []string
	events := 0
	for _, src := range files {
		dst := filepath.Join(out, filepath.Base(src))
		n, err := CopyComplete(src, dst)
		if err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(dst); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, want mode 0600", dst, err)
		}
		copies, events = append(copies, dst), events+n
	}
	if events != 20 {
		t.Errorf("CopyComplete counted %d events, want 20", events)
	}
	if rep := mustVerify(t, copies...); rep.Events != 20 || rep.Files != len(files) || rep.Continues != "" {
		t.Errorf("the copied trail: %+v, want 20 events in %d files from the first", rep, len(files))
	}
	if _, err := CopyComplete(path, copies[len(copies)-1]); err == nil {
		t.Error("CopyComplete over an existing file: no error")
	}
}

// TestTrails: files of several replicas' trails, current and rotated,
// group by trail, rotated files first; a rotated file whose current file
// is gone lists under its name; other files are their own trail.
func TestTrails(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "audit-a.jsonl"), filepath.Join(dir, "audit-a-b.jsonl")
	for _, p := range []string{a, b} {
		s := open(t, p, 1<<10)
		for i := range 8 {
			if err := s.Record(issuance(i)); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
	}
	rotatedB := RotatedFiles(b)
	if err := os.Remove(b); err != nil {
		t.Fatal(err)
	}
	all, _ := filepath.Glob(filepath.Join(dir, "audit-*.jsonl"))
	got := Trails(all)
	if want := append(RotatedFiles(a), a); len(got) != 2 || !slices.Equal(got[a], want) {
		t.Errorf("trail a: %v, want %v", got[a], want)
	}
	if len(rotatedB) == 0 || !slices.Equal(got[b], rotatedB) {
		t.Errorf("trail a-b without its current file: %v, want its rotated files %v", got[b], rotatedB)
	}
	for _, name := range []string{a, filepath.Join(dir, "audit-x-2031.jsonl")} {
		if _, ok := currentOf(name); ok {
			t.Errorf("currentOf(%s): a rotated file's name, want not", name)
		}
	}
}
