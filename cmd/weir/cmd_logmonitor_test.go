// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/weir-pki/weir/acme/transparency/monitortest"
)

// runLogMonitor runs "weir log monitor args" with ctx.
func runLogMonitor(ctx context.Context, args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = logMonitor(ctx, args, &o, &e)
	return code, o.String(), e.String()
}

// TestLogMonitorOnce runs "weir log monitor -once" against a served log:
// 0 while it verifies, 3 on an alarm (and again, the alarm sticking),
// 0 after -clear-alarm; 2 for a usage error, 1 for a bad key.
func TestLogMonitorOnce(t *testing.T) {
	signer, _, vkey := monitortest.NewLogKey(t, "ca.example.internal/log")
	srv := monitortest.NewServer(t)
	entries := monitortest.EventEntries(t, "cli", 0, 300)
	srv.Serve(monitortest.Files(t, entries, signer))
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "log.vkey")
	if err := os.WriteFile(keyFile, []byte(vkey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state.json")
	base := []string{"-url", srv.URL, "-key", "@" + keyFile, "-state", state, "-once"}
	ctx := context.Background()

	code, out, errOut := runLogMonitor(ctx, base...)
	if code != 0 || !strings.Contains(out, "tree of size 300") || !strings.Contains(out, "(300 new entries verified)") {
		t.Fatalf("first run: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	srv.Serve(monitortest.Files(t, entries[:200], signer))
	code, _, errOut = runLogMonitor(ctx, base...)
	if code != exitAlarm || !strings.Contains(errOut, "ALARM rewind") || !strings.Contains(errOut, "size 200") {
		t.Fatalf("truncated log: exit %d, want %d\nstderr: %s", code, exitAlarm, errOut)
	}
	srv.Serve(monitortest.Files(t, entries, signer))
	if code, _, errOut = runLogMonitor(ctx, base...); code != exitAlarm || !strings.Contains(errOut, "ALARM rewind") {
		t.Fatalf("the alarm did not stick: exit %d\nstderr: %s", code, errOut)
	}
	if code, out, errOut = runLogMonitor(ctx, append(base, "-clear-alarm")...); code != 0 || !strings.Contains(out, "tree of size 300") {
		t.Fatalf("-clear-alarm: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}

	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"-url", srv.URL, "-state", state}, 2, "-url, -key and -state are required"},
		{append(base, "-interval", "0s"), 2, "want a positive duration"},
		{append(base, "-witnesses", "2"), 2, "-witnesses 2"},
		{append(base, "-key", "not-a-key"), 1, "not a note verifier key"},
		{append(base, "-key", "@"+filepath.Join(dir, "missing")), 1, "no such file"},
		{append(base, "-witness-key", vkey), 1, "is not a cosignature/v1 key"},
		{append(base, "-url", "ftp://x"), 1, "want an http:// or https:// URL"},
		{append(base, "-url", "http://127.0.0.1:1"), 1, "the check failed"},
	} {
		code, _, errOut := runLogMonitor(ctx, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.says) {
			t.Errorf("weir log monitor %s: exit %d, want %d saying %q\nstderr: %s", strings.Join(tc.args, " "), code, tc.code, tc.says, errOut)
		}
	}
}

// alarmWatcher is the monitor's stderr: at the second alarm it prints it
// scrapes the metrics the monitor serves and ends the monitor's context,
// so that the test sees it go on after an alarm, with no clock involved.
type alarmWatcher struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	alarms  int
	scraped string
	err     error
	cancel  context.CancelFunc
}

var metricsLine = regexp.MustCompile(`metrics at (http://\S+/metrics)`)

func (w *alarmWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !bytes.Contains(p, []byte("ALARM")) {
		return len(p), nil
	}
	if w.alarms++; w.alarms == 2 {
		w.scraped, w.err = scrape(metricsLine.FindStringSubmatch(w.buf.String()))
		w.cancel()
	}
	return len(p), nil
}

func scrape(m []string) (string, error) {
	if m == nil {
		return "", io.ErrUnexpectedEOF
	}
	resp, err := http.Get(m[1])
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// TestLogMonitorKeepServing: with -keep-serving an alarm does not end
// the monitor; it keeps checking and its metrics show the alarm, and it
// exits 3 when stopped.
func TestLogMonitorKeepServing(t *testing.T) {
	_, _, vkey := monitortest.NewLogKey(t, "ca.example.internal/log")
	srv := monitortest.NewServer(t)
	other, _, _ := monitortest.NewLogKey(t, "ca.example.internal/log")
	srv.Serve(monitortest.Files(t, monitortest.EventEntries(t, "keep", 0, 5), other))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &alarmWatcher{cancel: cancel}
	var out bytes.Buffer
	code := logMonitor(ctx, []string{"-url", srv.URL, "-key", vkey, "-state", filepath.Join(t.TempDir(), "s.json"),
		"-interval", "1ms", "-keep-serving", "-metrics-listen", "127.0.0.1:0"}, &out, w)
	if code != exitAlarm {
		t.Fatalf("exit %d, want %d\nstderr: %s", code, exitAlarm, w.buf.String())
	}
	if w.err != nil {
		t.Fatalf("scraping the metrics: %v\nstderr: %s", w.err, w.buf.String())
	}
	if n := strings.Count(w.buf.String(), "does not verify with the log key"); n != 1 || !strings.Contains(w.buf.String(), "ALARM bad-signature (still)") {
		t.Errorf("the alarm said in full %d times, want once and then in short:\n%s", n, w.buf.String())
	}
	for _, want := range []string{
		`weir_log_monitor_alarm{reason="bad-signature"} 1`,
		`weir_log_monitor_alarm{reason="fork"} 0`,
		`weir_log_monitor_checks_total{result="alarm"} 2`,
		`weir_log_monitor_checks_total{result="ok"} 0`,
		`weir_log_monitor_verified_size 0`,
	} {
		if !strings.Contains(w.scraped, want) {
			t.Errorf("the metrics do not say %s:\n%s", want, w.scraped)
		}
	}
}
