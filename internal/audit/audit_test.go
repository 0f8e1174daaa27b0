// SPDX-License-Identifier: Apache-2.0

package audit

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func open(t *testing.T, path string, maxSize int64) *Sink {
	t.Helper()
	s, err := Open(Config{Path: path, Replica: "r1", MaxSize: maxSize})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func issuance(i int) Event {
	return Event{Type: TypeIssuance, Actor: Actor{Kind: "account", ID: fmt.Sprint("acct", i), Address: "127.0.0.1"},
		Data: map[string]any{"serial": fmt.Sprintf("%x", i), "names": []string{"a.example"}}}
}

func mustVerify(t *testing.T, files ...string) Report {
	t.Helper()
	return mustVerifyFrom(t, 0, files...)
}

// mustVerifyFrom verifies files that begin at seq from (0: the head).
func mustVerifyFrom(t *testing.T, from uint64, files ...string) Report {
	t.Helper()
	rep, err := Verify(files, VerifyOptions{From: from})
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	return rep
}

func TestChainVerifiesAndNamesTheAlteredLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit-r1.jsonl")
	s := open(t, path, 0)
	for i := range 5 {
		if err := s.Record(issuance(i)); err != nil {
			t.Fatal(err)
		}
	}
	if rep := mustVerify(t, path); rep.Events != 5 || rep.Continues != "" {
		t.Fatalf("report %+v", rep)
	}
	data, _ := os.ReadFile(path)
	edited := bytes.Replace(data, []byte(`"acct2"`), []byte(`"acct9"`), 1)
	os.WriteFile(path, edited, 0o600)
	_, err := Verify([]string{path}, VerifyOptions{})
	var b *Break
	if !errors.As(err, &b) || b.Line != 3 || !strings.Contains(b.Reason, "altered") {
		t.Fatalf("want a break at line 3 (altered), got %v", err)
	}
	// Removing a line breaks the next one's link.
	lines := strings.SplitAfter(string(data), "\n")
	os.WriteFile(path, []byte(lines[0]+lines[1]+lines[3]+lines[4]), 0o600)
	_, err = Verify([]string{path}, VerifyOptions{})
	if !errors.As(err, &b) || b.Line != 3 || !strings.Contains(b.Reason, "removed") {
		t.Fatalf("want a break at line 3 (removed), got %v", err)
	}
}

func TestRotationCarriesTheChain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit-r1.jsonl")
	s := open(t, path, 1000)
	for i := range 20 {
		if err := s.Record(issuance(i)); err != nil {
			t.Fatal(err)
		}
	}
	rotated := RotatedFiles(path)
	if len(rotated) < 2 {
		t.Fatalf("want several rotated files, got %v", rotated)
	}
	for _, f := range append(rotated, path) {
		if st, _ := os.Stat(f); st.Size() > 1000 {
			t.Errorf("%s is %d bytes, past max-size", f, st.Size())
		}
	}
	if rep := mustVerify(t, append(rotated, path)...); rep.Events != 20 || rep.Files != len(rotated)+1 {
		t.Fatalf("report %+v", rep)
	}
	// The current file alone continues a trail: refused as a trail whose
	// head is missing, unless told where it begins.
	_, err := Verify([]string{path}, VerifyOptions{})
	var b *Break
	if !errors.As(err, &b) || b.Line != 1 || !strings.Contains(b.Reason, "head is missing") {
		t.Fatalf("the current file alone: %v, want its head missing at line 1", err)
	}
	current, _ := os.ReadFile(path)
	first := uint64(20 - strings.Count(string(current), "\n") + 1)
	if rep := mustVerifyFrom(t, first, path); rep.Continues == "" || rep.First != first || rep.Last != 20 {
		t.Fatalf("the current file from seq %d: report %+v, want it to continue an earlier event and end at seq 20", first, rep)
	}
	// Out of order, the chain breaks at the first file's first line.
	_, err = Verify([]string{path, rotated[0]}, VerifyOptions{From: first})
	if !errors.As(err, &b) || b.File != rotated[0] || b.Line != 1 {
		t.Fatalf("want a break at %s:1, got %v", rotated[0], err)
	}
	// A restart after a rotation left an empty file continues from the
	// rotated one.
	s.Close()
	os.Rename(path, rotatedName(path, time.Now().Add(time.Hour)))
	os.WriteFile(path, nil, 0o600)
	s2 := open(t, path, 1000)
	s2.Record(issuance(99))
	mustVerify(t, append(RotatedFiles(path), path)...)
}

func TestTornLineIsCutAndRecorded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit-r1.jsonl")
	s := open(t, path, 0)
	for i := range 3 {
		s.Record(issuance(i))
	}
	s.Close()
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"time":"2026-01-01T00:00:00Z","replica":"r1","seq":4,"type":"iss`)
	f.Close()
	if _, err := Verify([]string{path}, VerifyOptions{}); err == nil || !strings.Contains(err.Error(), "torn") {
		t.Fatalf("verify of a torn file: %v", err)
	}
	s = open(t, path, 0)
	s.Record(issuance(4))
	if rep := mustVerify(t, path); rep.Events != 5 {
		t.Fatalf("report %+v", rep)
	}
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if !strings.Contains(lines[3], `"type":"`+TypeTruncated+`"`) || !strings.Contains(lines[3], `"bytes":`) {
		t.Fatalf("line 4 does not record the cut: %s", lines[3])
	}
}

func TestConcurrentWritersKeepOneChain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit-r1.jsonl")
	s := open(t, path, 4096)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				s.Record(issuance(g*100 + i))
			}
		}()
	}
	wg.Wait()
	if rep := mustVerify(t, append(RotatedFiles(path), path)...); rep.Events != 200 {
		t.Fatalf("report %+v", rep)
	}
	if s.Failures() != 0 {
		t.Fatalf("%d failures", s.Failures())
	}
}

func TestUnreadableLastLineRefusesToStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit-r1.jsonl")
	os.WriteFile(path, []byte("not an audit line\n"), 0o600)
	if _, err := Open(Config{Path: path}); err == nil || !strings.Contains(err.Error(), "move the file aside") {
		t.Fatalf("got %v", err)
	}
}

func TestLogSinkChainsToo(t *testing.T) {
	var buf bytes.Buffer
	s, err := Open(Config{Replica: "r1", Log: slog.New(slog.NewTextHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	s.Record(issuance(1))
	s.Record(issuance(2))
	out := buf.String()
	if strings.Count(out, "msg=audit") != 2 || !strings.Contains(out, `\"seq\":2`) || !strings.Contains(out, `\"prev\":\"\"`) {
		t.Fatalf("log sink output:\n%s", out)
	}
}

func TestWriteFailureIsCountedAndLogged(t *testing.T) {
	var buf bytes.Buffer
	path := filepath.Join(t.TempDir(), "audit-r1.jsonl")
	s, err := Open(Config{Path: path, Replica: "r1", Log: slog.New(slog.NewTextHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	s.Record(issuance(1))
	s.f.Close() // the disk goes away under the sink
	if err := s.Record(issuance(2)); err == nil {
		t.Fatal("a write to a closed file succeeded")
	}
	if s.Failures() != 1 || !strings.Contains(buf.String(), "audit: the event could not be written") {
		t.Fatalf("failures %d, log:\n%s", s.Failures(), buf.String())
	}
	if rep := mustVerify(t, path); rep.Events != 1 {
		t.Fatalf("report %+v", rep)
	}
}

// TestEventWrittenBeforeRecordReturns: in both sync modes an event's line
// is in the file when Record returns (a process killed then loses none),
// and the chain verifies.
func TestEventWrittenBeforeRecordReturns(t *testing.T) {
	for _, each := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "audit-r1.jsonl")
		s, err := Open(Config{Path: path, Replica: "r1", SyncEach: each})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if err := s.Record(issuance(i)); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(b), "\n"); n != i+1 {
				t.Fatalf("SyncEach %v: %d lines in the file after %d events", each, n, i+1)
			}
		}
		if rep := mustVerify(t, path); rep.Events != 3 {
			t.Fatalf("SyncEach %v: report %+v", each, rep)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("SyncEach %v: Close: %v", each, err)
		}
	}
}
