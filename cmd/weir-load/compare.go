// SPDX-License-Identifier: Apache-2.0

// -compare A,B: the A/B of a change to the hot path.

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/weir-pki/weir/internal/weirproc"
)

// compareSide is one of the two builds of -compare.
type compareSide struct {
	Name string `json:"name"` // as given: a binary or a git revision, then its settings (compareside.go)
	Rev  string `json:"rev,omitempty"`
	Log  bool   `json:"log,omitempty"` // the verifiable log on (a side named REV+log)
	set  sideSettings
	bin  string
	// Runs are its runs of each level, in the order they ran.
	Runs map[int][]runResult `json:"runs"`
}

// compareReport is what -compare prints.
type compareReport struct {
	Storage    string          `json:"storage"`
	RateLimits string          `json:"ratelimits"`
	Rounds     int             `json:"rounds"`
	Sides      [2]*compareSide `json:"sides"`
	// Medians are each side's medians by level.
	Medians [2]map[int]runResult `json:"medians"`
}

// compare runs the level(s) of o on two builds, interleaved round by
// round in the order A B, B A, A B, … so that a drift of the machine
// falls on both alike, each run on a fresh server and store; the median of
// each side's -runs rounds is compared. A side is a weir binary, or a git
// revision of the repository the tool runs in, built with -trimpath into a
// temporary directory.
func compare(ctx context.Context, o *options, stderr io.Writer) (*compareReport, int, error) {
	tmp, err := os.MkdirTemp("", "weir-compare-")
	if err != nil {
		return nil, 1, err
	}
	defer os.RemoveAll(tmp)
	rep := &compareReport{Storage: o.storage, RateLimits: o.rateLimits, Rounds: o.runs}
	for i, name := range o.compare {
		s := &compareSide{Name: name, Runs: map[int][]runResult{}}
		build, set, err := parseSide(name)
		if err != nil {
			return nil, 2, err
		}
		if err := checkSide(set.apply(*o)); err != nil {
			return nil, 2, fmt.Errorf("-compare: side %q: %w", name, err)
		}
		s.set = set
		s.Log = set.log || o.log
		if s.bin, s.Rev, err = compareBinary(ctx, build, filepath.Join(tmp, fmt.Sprint("side", i)), stderr); err != nil {
			return nil, 1, err
		}
		rep.Sides[i] = s
	}
	base := *o
	base.runs, base.compare = 1, nil
	for round := range o.runs {
		order := []int{0, 1}
		if round%2 == 1 {
			order = []int{1, 0}
		}
		for _, i := range order {
			s := rep.Sides[i]
			one := s.set.apply(base)
			one.weir = s.bin
			one = forPeer(one)
			logf(stderr, "round %d of %d: %s", round+1, o.runs, s.Name)
			r, code, err := load(ctx, &one, stderr)
			if err != nil {
				return rep, code, fmt.Errorf("%s, round %d: %w", s.Name, round+1, err)
			}
			for _, l := range r.Levels {
				if len(l.Runs) > 0 {
					s.Runs[l.Concurrency] = append(s.Runs[l.Concurrency], l.Runs[0])
				}
			}
		}
	}
	for i, s := range rep.Sides {
		rep.Medians[i] = map[int]runResult{}
		for c, runs := range s.Runs {
			rep.Medians[i][c] = medianOf(runs)
		}
	}
	return rep, 0, nil
}

// compareBinary is the weir binary of a -compare side: name itself when it
// is a file, else name as a git revision built into dir.
func compareBinary(ctx context.Context, name, dir string, stderr io.Writer) (bin, rev string, err error) {
	if p, ok := parsePeer(name); ok { // a peer CA: its version for a revision (peer.go)
		return name, p.version(ctx), p.check()
	}
	if st, err := os.Stat(name); err == nil && !st.IsDir() {
		return name, "", nil
	}
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "--short", "--verify", name+"^{commit}").Output()
	if err != nil {
		return "", "", fmt.Errorf("-compare: %q is neither a file nor a git revision of this repository", name)
	}
	rev = strings.TrimSpace(string(out))
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", "", err
	}
	logf(stderr, "building %s (%s)", name, rev)
	archive := exec.CommandContext(ctx, "sh", "-c", `git archive "$1" | tar -x -C "$2"`, "sh", rev, src)
	if out, err := archive.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("-compare: extracting %s: %w\n%s", rev, err, out)
	}
	if bin, err = weirproc.BuildFrom(ctx, src, dir, "-trimpath"); err != nil {
		return "", "", fmt.Errorf("-compare: %s: %w", rev, err)
	}
	return bin, rev, nil
}

// printCompare prints the medians of the two sides and B against A.
func printCompare(w io.Writer, rep *compareReport, asJSON bool) {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
		return
	}
	a, b := rep.Sides[0], rep.Sides[1]
	fmt.Fprintf(w, "A = %s, B = %s; storage %s, rate limits %s; medians of %d interleaved rounds\n",
		sideLabel(a), sideLabel(b), rep.Storage, rep.RateLimits, rep.Rounds)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "c\tmetric\tA\tB\tB/A\tA runs\tB runs\t")
	for _, c := range slices.Sorted(maps.Keys(rep.Medians[0])) {
		ma, mb := rep.Medians[0][c], rep.Medians[1][c]
		for _, m := range compareMetrics {
			fmt.Fprintf(tw, "%d\t%s\t%.2f\t%.2f\t%.3f\t%s\t%s\t\n", c, m.name, m.get(ma), m.get(mb), ratio(m.get(mb), m.get(ma)),
				runValues(a.Runs[c], m.get), runValues(b.Runs[c], m.get))
		}
	}
	tw.Flush()
	for _, n := range peerNotes(rep.Sides[:]) {
		fmt.Fprintln(w, n)
	}
}

// compareMetrics are the figures -compare prints.
var compareMetrics = []struct {
	name string
	get  func(runResult) float64
}{
	{"certs/s", func(r runResult) float64 { return r.CertsPerSec }},
	{"server CPU ms/cert", func(r runResult) float64 { return r.ServerCPUMsPerCert }},
	{"store CPU ms/cert", func(r runResult) float64 { return r.StoreCPUMsPerCert }},
	// What a certificate costs the machine: weir and its PostgreSQL and
	// Redis, the figure that compares the embedded path with the shared one.
	{"server+store CPU ms/cert", func(r runResult) float64 { return r.ServerCPUMsPerCert + r.StoreCPUMsPerCert }},
	// The load tool's CPU per certificate moves with the machine's speed as
	// the server's does: their ratio drifts less than either.
	{"server/client CPU", func(r runResult) float64 { return ratio(r.ServerCPUMsPerCert, r.ClientCPUMsPerCert) }},
	{"store/client CPU", func(r runResult) float64 { return ratio(r.StoreCPUMsPerCert, r.ClientCPUMsPerCert) }},
	{"p50 ms", func(r runResult) float64 { return r.P50Ms }},
	{"p99 ms", func(r runResult) float64 { return r.P99Ms }},
	{"log lag p99 s", func(r runResult) float64 { return r.LogLagP99Sec }},
}

func ratio(b, a float64) float64 {
	if a == 0 {
		return 0
	}
	return b / a
}

// runValues lists one metric of runs, for the table.
func runValues(runs []runResult, get func(runResult) float64) string {
	s := make([]string, len(runs))
	for i, r := range runs {
		s[i] = fmt.Sprintf("%.2f", get(r))
	}
	return strings.Join(s, " ")
}
