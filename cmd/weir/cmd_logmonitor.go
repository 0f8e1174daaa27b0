// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/weir-pki/weir/acme/transparency"
	"github.com/weir-pki/weir/web/admin"
)

// exitAlarm is the exit code of "weir log monitor" when it raised an
// alarm: apart from 1 (it could not run) and 2 (a usage error), so that
// a supervisor can tell "the log is bad" from "the monitor is broken".
const exitAlarm = 3

// logMonitorUsage is the verb's usage line in the log group's help.
const logMonitorUsage = "monitor -url URL -key VKEY|@FILE -state FILE [-checkpoint FILE] [-interval D] [-stale D] [-once] [-metrics-listen ADDR] [-keep-serving] [-witness-key VKEY|@FILE]... [-witnesses N] [-clear-alarm]"

// logMonitor is "weir log monitor": it follows the verifiable log served
// at -url from another host, holding in -state the last checkpoint it
// verified and checking each new one against it (transparency.Monitor).
func logMonitor(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("log monitor", "log "+logMonitorUsage,
		"Follows the verifiable log served at URL (its checkpoint and tlog-tiles) from\n"+
			"another host. It keeps the last checkpoint it verified in the state file and,\n"+
			"every interval, checks that the served one extends it (a consistency proof\n"+
			"from the served hash tiles) and that every new entry matches the tree and\n"+
			"parses. The first run checks every entry from 0 (or from -checkpoint) and then\n"+
			"trusts that tree.\n\n"+
			"It exits 3 on an alarm, printing it: fork, rewind, bad-signature, bad-tile,\n"+
			"entry-mismatch, unparseable-entry (these stick in the state file until\n"+
			"-clear-alarm), or stale (no checkpoint verified for longer than -stale, or\n"+
			"with witnesses a newest cosignature older than -stale). A fetch that fails is\n"+
			"retried at the next interval and only counts towards staleness. With -once it\n"+
			"checks once: 0 when the log verifies, 3 on an alarm, 1 when the check could\n"+
			"not be made. With -keep-serving it does not exit on an alarm: it keeps\n"+
			"checking and serving -metrics-listen (weir_log_monitor_alarm{reason} is 1)\n"+
			"until stopped, then exits 3 if the last check raised an alarm.", stderr)
	rawURL := fs.String("url", "", "the log's base `URL` (its checkpoint is URL/checkpoint)")
	keyArg := fs.String("key", "", "the log's note verifier `key` (name+hash+base64), or @FILE holding it")
	statePath := fs.String("state", "", "the state `file`: the last checkpoint verified (created on the first run)")
	startPath := fs.String("checkpoint", "", "a signed checkpoint `file` to start from on the first run, instead of checking every entry from 0")
	interval := fs.Duration("interval", 10*time.Second, "check every `duration`")
	stale := fs.Duration("stale", 5*time.Minute, "raise a stale alarm when no checkpoint verified for longer than this `duration` (0: never)")
	once := fs.Bool("once", false, "check once and exit")
	metricsAddr := fs.String("metrics-listen", "", "serve Prometheus metrics at http://`ADDR`/metrics")
	keepServing := fs.Bool("keep-serving", false, "after an alarm, keep checking and serving metrics until stopped")
	var witnessKeys []string
	fs.Func("witness-key", "a witness's tlog-cosignature/v1 verifier `key`, or @FILE holding it (repeatable)", func(s string) error {
		witnessKeys = append(witnessKeys, s)
		return nil
	})
	minWitnesses := fs.Int("witnesses", 0, "how many of the witnesses must have cosigned a checkpoint (default: 1 with any -witness-key)")
	clearAlarm := fs.Bool("clear-alarm", false, "forget the alarm the state file holds, then monitor as usual")
	if code, ok := parseNoArgs(fs, args, stdout, stderr); !ok {
		return code
	}
	switch {
	case *rawURL == "" || *keyArg == "" || *statePath == "":
		return usageError(fs, stderr, "-url, -key and -state are required")
	case *interval <= 0:
		return usageError(fs, stderr, fmt.Sprintf("-interval %s: want a positive duration", *interval))
	case *stale < 0:
		return usageError(fs, stderr, fmt.Sprintf("-stale %s: want a duration of 0 or more", *stale))
	case *minWitnesses < 0 || *minWitnesses > len(witnessKeys):
		return usageError(fs, stderr, fmt.Sprintf("-witnesses %d: want 1 to the %d -witness-key given", *minWitnesses, len(witnessKeys)))
	}
	if *minWitnesses == 0 && len(witnessKeys) > 0 {
		*minWitnesses = 1
	}
	m, err := newLogMonitor(*rawURL, *keyArg, *statePath, *startPath, witnessKeys, *minWitnesses, *stale)
	if err != nil {
		return fail(stderr, "log monitor", err)
	}
	if *clearAlarm {
		if err := m.ClearAlarm(); err != nil {
			return fail(stderr, "log monitor", err)
		}
	}
	reasons := make([]string, len(transparency.Reasons))
	for i, r := range transparency.Reasons {
		reasons[i] = string(r)
	}
	metrics := admin.NewLogMonitorMetrics(reasons)
	if *metricsAddr != "" {
		addr, stop, err := listenMetrics(*metricsAddr, metrics.Handler())
		if err != nil {
			return fail(stderr, "log monitor", err)
		}
		defer stop()
		fmt.Fprintf(stderr, "weir log monitor: metrics at http://%s/metrics\n", addr)
	}
	loop := monitorLoop{m: m, metrics: metrics, stdout: stdout, stderr: stderr, keepServing: *keepServing}
	if *once {
		return loop.check(ctx, true)
	}
	return loop.run(ctx, *interval)
}

// newLogMonitor is the Monitor the flags describe.
func newLogMonitor(rawURL, keyArg, statePath, startPath string, witnessArgs []string, minWitnesses int, stale time.Duration) (*transparency.Monitor, error) {
	logKey, err := keyOrFile(keyArg)
	if err != nil {
		return nil, fmt.Errorf("-key: %w", err)
	}
	witnessKeys := make([]string, len(witnessArgs))
	for i, w := range witnessArgs {
		if witnessKeys[i], err = keyOrFile(w); err != nil {
			return nil, fmt.Errorf("-witness-key: %w", err)
		}
	}
	c := transparency.MonitorConfig{StatePath: statePath, Stale: stale, MinWitnesses: minWitnesses}
	if c.LogKey, c.Witnesses, err = transparency.MonitorKeys(logKey, witnessKeys); err != nil {
		return nil, err
	}
	if startPath != "" {
		if c.Start, err = os.ReadFile(startPath); err != nil {
			return nil, fmt.Errorf("-checkpoint: %w", err)
		}
	}
	if c.Log, err = transparency.NewTileFetcher(rawURL, nil); err != nil {
		return nil, fmt.Errorf("-url: %w", err)
	}
	return transparency.NewMonitor(c)
}

// keyOrFile is a key given on the command line, or read from the file
// an argument "@FILE" names (its one line).
func keyOrFile(arg string) (string, error) {
	path, ok := strings.CutPrefix(arg, "@")
	if !ok {
		return arg, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	k := strings.TrimSpace(string(b))
	if k == "" || strings.ContainsAny(k, "\n") {
		return "", fmt.Errorf("%s: want one line holding a key", path)
	}
	return k, nil
}

// monitorLoop runs a monitor's checks and reports them.
type monitorLoop struct {
	m              *transparency.Monitor
	metrics        *admin.LogMonitorMetrics
	stdout, stderr io.Writer
	keepServing    bool
	lastSize       int64
	reported       bool
	lastAlarm      string // the alarm printed last, while it is raised
}

// run checks every interval until ctx ends, or until an alarm unless
// keepServing.
func (l *monitorLoop) run(ctx context.Context, interval time.Duration) int {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	code := 0
	for {
		code = l.check(ctx, false)
		if code == exitAlarm && !l.keepServing {
			return code
		}
		select {
		case <-ctx.Done():
			if code != exitAlarm {
				code = 0
			}
			return code
		case <-ticker.C:
		}
	}
}

// check checks once and reports: exit code 0 when the log verified,
// exitAlarm on an alarm, 1 when the check failed (transient). once
// (-once) reports even a log that did not change.
func (l *monitorLoop) check(ctx context.Context, once bool) int {
	r, err := l.m.Check(ctx)
	alarm := ""
	if r.Alarm != nil {
		alarm = string(r.Alarm.Reason)
	}
	l.metrics.Record(alarm, err != nil, r.Checkpoint.Size, r.Verified, r.Grew)
	switch {
	case r.Alarm != nil && r.Alarm.Error() == l.lastAlarm:
		// With -keep-serving: the same alarm again, said in short.
		fmt.Fprintf(l.stderr, "weir log monitor: ALARM %s (still)\n", r.Alarm.Reason)
		return exitAlarm
	case r.Alarm != nil:
		fmt.Fprintf(l.stderr, "weir log monitor: ALARM %s: %s\n", r.Alarm.Reason, r.Alarm.Message)
		if r.Alarm.Checkpoint != "" {
			fmt.Fprintf(l.stderr, "the checkpoint served:\n%s", r.Alarm.Checkpoint)
		}
		l.lastAlarm = r.Alarm.Error()
		return exitAlarm
	case errors.Is(err, context.Canceled):
		return 1
	case err != nil:
		retry := " (retried at the next interval)"
		if once {
			retry = ""
		}
		fmt.Fprintf(l.stderr, "weir log monitor: the check failed%s: %v\n", retry, err)
		return 1
	}
	l.lastAlarm = ""
	if once || !l.reported || r.Checkpoint.Size != l.lastSize {
		fmt.Fprintf(l.stdout, "ok: %s tree of size %d, root %s (%d new entries verified)\n",
			r.Checkpoint.Origin, r.Checkpoint.Size, r.Checkpoint.Hash, r.Checkpoint.Size-r.OldSize)
	}
	l.reported, l.lastSize = true, r.Checkpoint.Size
	return 0
}

// listenMetrics serves h at addr's /metrics until the returned stop is
// called; bound is the address it listens on.
func listenMetrics(addr string, h http.Handler) (bound string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("-metrics-listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return ln.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}, nil
}
