// SPDX-License-Identifier: Apache-2.0

package transparency_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/weir-pki/weir/acme/transparency"
	"github.com/weir-pki/weir/acme/transparency/monitortest"
)

const testOrigin = "ca.example.internal/log"

// fakeClock is a monitor's clock that only moves when told.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// monitorEnv is a served log, its key and a monitor's state file.
type monitorEnv struct {
	srv    *monitortest.Server
	signer note.Signer
	key    note.Verifier
	state  string
	clock  *fakeClock
}

func newMonitorEnv(t *testing.T) *monitorEnv {
	signer, key, _ := monitortest.NewLogKey(t, testOrigin)
	return &monitorEnv{
		srv:    monitortest.NewServer(t),
		signer: signer,
		key:    key,
		state:  filepath.Join(t.TempDir(), "monitor.json"),
		clock:  &fakeClock{t: time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC)},
	}
}

// monitor is a new Monitor of the env's log and state file, with c's
// other settings.
func (e *monitorEnv) monitor(t *testing.T, c transparency.MonitorConfig) *transparency.Monitor {
	t.Helper()
	f, err := transparency.NewTileFetcher(e.srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.LogKey, c.Log, c.StatePath, c.Now = e.key, f, e.state, e.clock.Now
	if c.Stale == 0 {
		c.Stale = 5 * time.Minute
	}
	m, err := transparency.NewMonitor(c)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// serve serves the log of entries signed by the log's key.
func (e *monitorEnv) serve(t *testing.T, entries [][]byte) {
	t.Helper()
	e.srv.Serve(monitortest.Files(t, entries, e.signer))
}

// checkOK checks once and wants no alarm, no error, and size held.
func checkOK(t *testing.T, m *transparency.Monitor, size int64) transparency.Result {
	t.Helper()
	r, err := m.Check(context.Background())
	if err != nil || r.Alarm != nil {
		t.Fatalf("Check: alarm %v, error %v; want none", r.Alarm, err)
	}
	if r.Checkpoint.Size != size {
		t.Fatalf("Check holds size %d, want %d", r.Checkpoint.Size, size)
	}
	return r
}

// checkAlarm checks once and wants an alarm of reason whose message
// holds each of parts.
func checkAlarm(t *testing.T, m *transparency.Monitor, reason transparency.Reason, parts ...string) transparency.Result {
	t.Helper()
	r, err := m.Check(context.Background())
	if err != nil {
		t.Fatalf("Check: error %v, want a %s alarm", err, reason)
	}
	if r.Alarm == nil || r.Alarm.Reason != reason {
		t.Fatalf("Check: alarm %v, want a %s alarm", r.Alarm, reason)
	}
	t.Logf("alarm: %v", r.Alarm)
	for _, p := range parts {
		if !strings.Contains(r.Alarm.Message, p) {
			t.Errorf("alarm message %q does not say %q", r.Alarm.Message, p)
		}
	}
	return r
}

func without(entries [][]byte, i int) [][]byte {
	return slices.Concat(entries[:i:i], entries[i+1:])
}

func withAt(entries [][]byte, i int, e []byte) [][]byte {
	return slices.Concat(entries[:i:i], [][]byte{e}, entries[i:])
}

func replaced(entries [][]byte, i int, e []byte) [][]byte {
	out := slices.Clone(entries)
	out[i] = e
	return out
}

// TestMonitorTamper holds a good checkpoint of 300 entries (a full tile
// and a partial one), then serves a tampered log: each tampering raises
// its alarm with a message naming what is wrong, and the checkpoint held,
// in memory and in the state file, stays the good one.
func TestMonitorTamper(t *testing.T) {
	const n = 300
	good := monitortest.EventEntries(t, "good", 0, n)
	more := monitortest.EventEntries(t, "good", n, 20)
	other := monitortest.EventEntries(t, "other", 0, n+100)
	stranger, _, _ := monitortest.NewLogKey(t, testOrigin)
	for _, tc := range []struct {
		name   string
		reason transparency.Reason
		parts  []string
		// tamper serves the tampered log.
		tamper func(t *testing.T, e *monitorEnv)
	}{
		{"truncation", transparency.ReasonRewind, []string{"size 290", "size 300"}, func(t *testing.T, e *monitorEnv) {
			e.serve(t, good[:290])
		}},
		{"entry deleted, log grown", transparency.ReasonFork, []string{"size 304", "size 300", "consistency proof fails"}, func(t *testing.T, e *monitorEnv) {
			e.serve(t, slices.Concat(without(good, 100), more[:5]))
		}},
		{"entry inserted", transparency.ReasonFork, []string{"size 301", "size 300", "consistency proof fails"}, func(t *testing.T, e *monitorEnv) {
			e.serve(t, withAt(good, 150, more[0]))
		}},
		{"entry rewritten", transparency.ReasonFork, []string{"size 300", "two trees of one size"}, func(t *testing.T, e *monitorEnv) {
			e.serve(t, replaced(good, 42, other[42]))
		}},
		{"new tree", transparency.ReasonFork, []string{"size 400", "size 300", "consistency proof fails"}, func(t *testing.T, e *monitorEnv) {
			e.serve(t, other)
		}},
		{"split view of one size", transparency.ReasonFork, []string{"size 300", "two trees of one size"}, func(t *testing.T, e *monitorEnv) {
			e.serve(t, other[:n])
		}},
		{"signed by another key", transparency.ReasonBadSignature, []string{"does not verify with the log key " + testOrigin}, func(t *testing.T, e *monitorEnv) {
			e.srv.Serve(monitortest.Files(t, slices.Concat(good, more), stranger))
		}},
		{"signature altered", transparency.ReasonBadSignature, []string{"does not verify"}, func(t *testing.T, e *monitorEnv) {
			files := monitortest.Files(t, slices.Concat(good, more), e.signer)
			cp := files[transparency.CheckpointPath]
			at := bytes.LastIndex(cp, []byte(" ")) + 30 // in the signature's base64, past the key hash
			if cp[at] == 'A' {
				cp[at] = 'B'
			} else {
				cp[at] = 'A'
			}
			e.srv.Serve(files)
		}},
		{"unparseable entry appended", transparency.ReasonUnparseableEntry, []string{"unparseable entry at index 301", "tile/entries/001.p/48"}, func(t *testing.T, e *monitorEnv) {
			e.serve(t, slices.Concat(good, more[:1], [][]byte{[]byte(`{"v":1,"kind":"event","junk":true}`)}, more[1:3]))
		}},
		{"entry bundle altered, tiles kept", transparency.ReasonEntryMismatch, []string{"entry does not match the tree at index 310", "tile/entries/001.p/64"}, func(t *testing.T, e *monitorEnv) {
			files := monitortest.Files(t, slices.Concat(good, more), e.signer)
			altered := monitortest.Files(t, replaced(slices.Concat(good, more), 310, other[310]), e.signer)
			files["tile/entries/001.p/64"] = altered["tile/entries/001.p/64"]
			e.srv.Serve(files)
		}},
		{"hash tile altered, checkpoint kept", transparency.ReasonBadTile, []string{"do not match the signed root"}, func(t *testing.T, e *monitorEnv) {
			files := monitortest.Files(t, slices.Concat(good, more), e.signer)
			altered := monitortest.Files(t, replaced(slices.Concat(good, more), 310, other[310]), e.signer)
			files["tile/0/001.p/64"] = altered["tile/0/001.p/64"]
			e.srv.Serve(files)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newMonitorEnv(t)
			e.serve(t, good)
			m := e.monitor(t, transparency.MonitorConfig{})
			held := checkOK(t, m, n).Checkpoint
			tc.tamper(t, e)
			r := checkAlarm(t, m, tc.reason, tc.parts...)
			if r.Checkpoint.Size != held.Size || r.Checkpoint.Hash != held.Hash {
				t.Errorf("after the alarm the monitor holds size %d root %s, want the good %d %s", r.Checkpoint.Size, r.Checkpoint.Hash, held.Size, held.Hash)
			}
			if r.Alarm.Checkpoint == "" {
				t.Error("the alarm keeps no evidence (the served checkpoint)")
			}
			// The alarm sticks: the good log served again does not clear
			// it, nor does a new monitor reading the state file, which
			// holds the good checkpoint still.
			e.serve(t, good)
			checkAlarm(t, m, tc.reason)
			m2 := e.monitor(t, transparency.MonitorConfig{})
			r2 := checkAlarm(t, m2, tc.reason)
			if r2.Checkpoint.Size != held.Size || r2.Checkpoint.Hash != held.Hash {
				t.Errorf("the state file holds size %d root %s, want the good %d %s", r2.Checkpoint.Size, r2.Checkpoint.Hash, held.Size, held.Hash)
			}
			if err := m2.ClearAlarm(); err != nil {
				t.Fatal(err)
			}
			checkOK(t, m2, n)
		})
	}
}

// TestMonitorFollows follows a log as it grows, across tile boundaries
// and a restart (a new Monitor reading the state file).
func TestMonitorFollows(t *testing.T) {
	e := newMonitorEnv(t)
	all := monitortest.EventEntries(t, "grow", 0, 700)
	e.serve(t, all[:0])
	m := e.monitor(t, transparency.MonitorConfig{})
	checkOK(t, m, 0)
	for _, size := range []int64{1, 255, 256, 300} {
		e.serve(t, all[:size])
		e.clock.Add(time.Minute)
		r := checkOK(t, m, size)
		if !r.Grew.Equal(e.clock.Now()) || !r.Verified.Equal(e.clock.Now()) {
			t.Errorf("size %d: grew %v, verified %v, want both %v", size, r.Grew, r.Verified, e.clock.Now())
		}
	}
	grew := e.clock.Now()
	e.clock.Add(time.Minute)
	if r := checkOK(t, m, 300); !r.Grew.Equal(grew) || !r.Verified.Equal(e.clock.Now()) {
		t.Errorf("unchanged: grew %v (want %v), verified %v (want %v)", r.Grew, grew, r.Verified, e.clock.Now())
	}
	if files, err := os.ReadDir(filepath.Dir(e.state)); err != nil || len(files) != 1 {
		t.Errorf("the state file's directory holds %v (%v), want the state file alone", files, err)
	}
	m = e.monitor(t, transparency.MonitorConfig{})
	for _, size := range []int64{513, 700} {
		e.serve(t, all[:size])
		if r := checkOK(t, m, size); r.OldSize == 0 {
			t.Errorf("size %d: the new monitor did not start from the state file's checkpoint", size)
		}
	}
}

// TestMonitorTrustOnFirstUse checks every entry on the first run: an
// entry that does not parse, in the first tile, raises its alarm.
func TestMonitorTrustOnFirstUse(t *testing.T) {
	e := newMonitorEnv(t)
	entries := replaced(monitortest.EventEntries(t, "tofu", 0, 300), 5, []byte(`not json`))
	e.serve(t, entries)
	checkAlarm(t, e.monitor(t, transparency.MonitorConfig{}), transparency.ReasonUnparseableEntry, "unparseable entry at index 5", "tile/entries/000")
}

// TestMonitorStart starts from an operator's checkpoint: the entries
// before it are not read again, the ones after are.
func TestMonitorStart(t *testing.T) {
	e := newMonitorEnv(t)
	entries := replaced(monitortest.EventEntries(t, "start", 0, 300), 5, []byte(`not json`))
	start := monitortest.Files(t, entries, e.signer)[transparency.CheckpointPath]
	e.serve(t, slices.Concat(entries, monitortest.EventEntries(t, "start", 300, 10)))
	m := e.monitor(t, transparency.MonitorConfig{Start: start})
	if r := checkOK(t, m, 310); r.OldSize != 300 {
		t.Errorf("old size %d, want the starting checkpoint's 300", r.OldSize)
	}
	if _, err := transparency.NewMonitor(transparency.MonitorConfig{LogKey: e.key, Log: nil, StatePath: e.state}); err == nil {
		t.Error("NewMonitor without a log did not fail")
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, _ := transparency.NewTileFetcher(e.srv.URL, nil)
	_, err := transparency.NewMonitor(transparency.MonitorConfig{LogKey: e.key, Log: f, StatePath: bad})
	if err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("NewMonitor with a broken state file: %v, want an error naming it", err)
	}
}

// TestMonitorStale makes the log unreachable: a transient error within
// the bound, a stale alarm beyond it, and back to normal when the log
// answers again (staleness does not stick).
func TestMonitorStale(t *testing.T) {
	e := newMonitorEnv(t)
	e.serve(t, monitortest.EventEntries(t, "stale", 0, 10))
	m := e.monitor(t, transparency.MonitorConfig{Stale: 5 * time.Minute})
	checkOK(t, m, 10)
	e.srv.SetDown(true)
	e.clock.Add(4 * time.Minute)
	r, err := m.Check(context.Background())
	var fe *transparency.FetchError
	if r.Alarm != nil || err == nil || !errors.As(err, &fe) || !strings.Contains(err.Error(), "503") {
		t.Fatalf("within the bound: alarm %v, error %v; want a fetch error (503) and no alarm", r.Alarm, err)
	}
	e.clock.Add(2 * time.Minute)
	checkAlarm(t, m, transparency.ReasonStale, "for 6m0s", "more than the bound 5m0s", "503")
	e.srv.SetDown(false)
	checkOK(t, m, 10)
}
