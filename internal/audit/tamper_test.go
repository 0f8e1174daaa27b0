// SPDX-License-Identifier: Apache-2.0

package audit

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rechain rewrites lines (without their newlines) as an editor who knows
// the format would: each line's prev is set to the hash of the line
// before it and its own hash recomputed, so that the chain holds.
func rechain(t *testing.T, lines []string) string {
	t.Helper()
	var out strings.Builder
	prev := ""
	for i, l := range lines {
		var r record
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if i > 0 {
			r.Prev = prev
		}
		line, hash, err := encodeLine(r)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(line)
		out.WriteByte('\n')
		prev = hash
	}
	return out.String()
}

// TestVerifyCatchesRechainedTampering: the tampered copies of a trail
// that kept a valid chain, because the hashes after the edit were
// recomputed, are refused, each at the line where it begins: events
// removed from the start, one removed from the middle, one duplicated.
// A trail that begins later on purpose passes when told where it begins.
func TestVerifyCatchesRechainedTampering(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit-r1.jsonl")
	s := open(t, path, 0)
	for i := range 8 {
		if err := s.Record(issuance(i)); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if rep := mustVerify(t, path); rep.First != 1 || rep.Last != 8 {
		t.Fatalf("untouched: %+v, want seq 1 to 8", rep)
	}
	tampered := filepath.Join(t.TempDir(), "tampered.jsonl")
	for _, tc := range []struct {
		name   string
		text   string
		from   uint64
		line   int
		reason string
	}{
		{"first 3 removed", strings.Join(lines[3:], "\n") + "\n", 0, 1, "head is missing"},
		{"first 3 removed, head rechained", rechain(t, lines[3:]), 0, 1, "head is missing"},
		{"middle removed, rechained", rechain(t, append(append([]string{}, lines[:4]...), lines[5:]...)), 0, 5, "jumps from 4: 1 events were removed"},
		{"middle duplicated, rechained", rechain(t, append(append([]string{}, lines[:5]...), lines[4:]...)), 0, 6, "does not follow the seq 5"},
		{"said to begin elsewhere", strings.Join(lines[3:], "\n") + "\n", 2, 1, "not seq 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(tampered, []byte(tc.text), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Verify([]string{tampered}, VerifyOptions{From: tc.from})
			var b *Break
			if !errors.As(err, &b) || b.Line != tc.line || !strings.Contains(b.Reason, tc.reason) {
				t.Fatalf("got %v, want a break at line %d: %q", err, tc.line, tc.reason)
			}
		})
	}
	// Archived on purpose: the rest verifies from seq 4.
	if err := os.WriteFile(tampered, []byte(strings.Join(lines[3:], "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if rep := mustVerifyFrom(t, 4, tampered); rep.First != 4 || rep.Last != 8 || rep.Continues == "" {
		t.Fatalf("from seq 4: %+v", rep)
	}
}
