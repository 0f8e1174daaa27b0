// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-pki/weir/internal/audit"
)

// TestAuditVerify: weir audit verify exits 0 on an untouched trail, 1
// naming the altered line after an edit, 0 with the help for -h and 2 for
// a usage error.
func TestAuditVerify(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit-a.jsonl")
	s, err := audit.Open(audit.Config{Path: path, Replica: "a"})
	if err != nil {
		t.Fatal(err)
	}
	for _, serial := range []string{"01", "02", "03"} {
		if err := s.Record(audit.Event{Type: audit.TypeIssuance, Actor: audit.Actor{Kind: "account", ID: "1"},
			Data: map[string]any{"serial": serial}}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	if code, out := runWeir("audit", "verify", path); code != 0 || !strings.Contains(out, "ok: 3 events in 1 files") {
		t.Fatalf("untouched: exit %d: %s", code, out)
	}
	data, _ := os.ReadFile(path)
	os.WriteFile(path, []byte(strings.Replace(string(data), `"serial":"02"`, `"serial":"07"`, 1)), 0o600)
	if code, out := runWeir("audit", "verify", path); code != 1 || !strings.Contains(out, path+":2: ") {
		t.Fatalf("edited: exit %d: %s", code, out)
	}
	if code, out := runWeir("audit", "verify", "-h"); code != 0 || !strings.Contains(out, "Usage: weir audit verify") {
		t.Fatalf("-h: exit %d: %s", code, out)
	}
	if code, _ := runWeir("audit", "check"); code != 2 {
		t.Fatalf("unknown verb: exit %d", code)
	}
}
