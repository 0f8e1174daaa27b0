// SPDX-License-Identifier: Apache-2.0

package server

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weir-pki/weir/internal/audit"
)

// padded is an admin-action event of about 8 KiB, so a few rotate a
// trail of the smallest max-size.
func padded(i int) audit.Event {
	return audit.Event{Type: audit.TypeAdminAction, Actor: audit.Actor{Kind: "admin", ID: "test"},
		Data: map[string]any{"action": fmt.Sprint("pad ", i), "pad": strings.Repeat("x", 8<<10)}}
}

// trailEvents verifies the trail at path (rotated files first) and
// returns its events and files.
func trailEvents(t *testing.T, path string) (int, int) {
	t.Helper()
	rep, err := audit.Verify(append(audit.RotatedFiles(path), path), audit.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return rep.Events, rep.Files
}

// TestBackupAuditTrail: weir backup copies the audit trail of a running
// weir, each replica's and every rotated file, without the line being
// written; it says how many events and files it copied; the restored
// trail passes weir audit verify with the same events.
func TestBackupAuditTrail(t *testing.T) {
	e := startEnv(t, func(c *Config) { c.Audit.ReplicaID, c.Audit.MaxSize = "r1", 64<<10 })
	for i := range 20 {
		if err := e.srv.audit.sink.Record(padded(i)); err != nil {
			t.Fatal(err)
		}
	}
	path := AuditPath(e.cfg)
	events, files := trailEvents(t, path)
	if files < 3 {
		t.Fatalf("the trail has %d files, want rotated ones", files)
	}
	other := e.cfg
	other.Audit.ReplicaID = "r2" // a replica that wrote to the same directory before
	r2, err := audit.Open(audit.Config{Path: AuditPath(other), Replica: "r2"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := r2.Record(padded(i)); err != nil {
			t.Fatal(err)
		}
	}
	r2.Close()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"time":"2031-01-01T00:00:00Z","replica":"r1",`); err != nil { // an event being written
		t.Fatal(err)
	}
	f.Close()

	out := filepath.Join(t.TempDir(), "backup")
	var stdout, stderr bytes.Buffer
	if code := builder.Run(t, []string{"backup", "-config", e.srv.configPath, "-out", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("backup: exit %d: %s", code, stderr.String())
	}
	for _, w := range []string{
		fmt.Sprintf("  audit trail audit/audit-r1.jsonl: %d events in %d files, chain intact\n", events, files),
		"  audit trail audit/audit-r2.jsonl: 3 events in 1 files, chain intact\n",
		"  audit/audit-r2.jsonl (3 events)\n",
	} {
		if !strings.Contains(stdout.String(), w) {
			t.Errorf("backup output does not say %q:\n%s", w, stdout.String())
		}
	}
	if got := strings.Count(stdout.String(), "  audit/audit-r1"); got != files {
		t.Errorf("backup output lists %d of r1's files, want %d:\n%s", got, files, stdout.String())
	}

	r := startEnv(t, func(c *Config) { c.DataDir, c.Audit.ReplicaID, c.Audit.MaxSize = out, "r1", 64<<10 })
	want := fmt.Sprintf("ok: %d events in %d files, chain intact", events, files)
	if got := r.cli.Run(t, 0, "audit", "verify"); !strings.Contains(got, want) {
		t.Errorf("weir audit verify on the restored data directory: %s, want %q", got, want)
	}
}

// TestBackupAuditRotating: a trail rotated while it is copied is copied
// again, so the copy never misses the file rotated meanwhile; one that
// keeps rotating is refused after auditCopyTries copies.
func TestBackupAuditRotating(t *testing.T) {
	dd := t.TempDir()
	path := filepath.Join(dd, "audit", "audit-r1.jsonl")
	s, err := audit.Open(audit.Config{Path: path, Replica: "r1", MaxSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := 0
	rotate := func() { // records until the trail rotates
		for before := len(audit.RotatedFiles(path)); len(audit.RotatedFiles(path)) == before; n++ {
			if err := s.Record(padded(n)); err != nil {
				t.Fatal(err)
			}
		}
	}
	rotate()
	lists := 0
	list := func(rotations int) func() map[string][]string {
		return func() map[string][]string {
			if lists++; lists <= rotations {
				rotate()
			}
			return audit.Trails([]string{path})
		}
	}
	out := t.TempDir()
	// The second listing, after the first copy, sees a rotation.
	copied, _, err := copyAuditTrails(list(2), path, dd, out)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("audit trail audit/audit-r1.jsonl: %d events in %d files, chain intact", n, len(audit.RotatedFiles(path))+1)
	if !slices.Contains(copied, want) {
		t.Errorf("copied %q, want %q", copied, want)
	}
	lists = 0
	if _, _, err := copyAuditTrails(list(2*auditCopyTries), path, dd, t.TempDir()); err == nil || !strings.Contains(err.Error(), "rotated during each of 3 copies") {
		t.Errorf("a trail rotating at every copy: %v, want a refusal", err)
	}
}

// TestBackupAuditNotes: an audit trail in the log or outside the data
// directory is not copied, and the backup says so.
func TestBackupAuditNotes(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*AuditConfig)
		want string
	}{
		{"log", func(a *AuditConfig) { a.Sink = auditSinkLog }, "audit.sink is log: the audit trail is in weir's log"},
		{"outside", func(a *AuditConfig) { a.Path = filepath.Join(t.TempDir(), "audit.jsonl") }, "is outside the data directory: back it up yourself"},
		{"none yet", func(*AuditConfig) {}, "no audit file yet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.DataDir = t.TempDir()
			tc.set(&cfg.Audit)
			_, notes, err := backup(t.Context(), cfg, filepath.Join(t.TempDir(), "out"))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, tc.want) }) {
				t.Errorf("notes %q, want one saying %q", notes, tc.want)
			}
		})
	}
}
