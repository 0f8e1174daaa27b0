// SPDX-License-Identifier: Apache-2.0

// Peer CAs: a side of -compare (or -weir) named pebble=PATH or
// step-ca=PATH runs that ACME server instead of weir, under the same
// workers, flow and measurement (peerpebble.go, peerstepca.go).

package main

import (
	"context"
	"debug/buildinfo"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/weir-pki/weir/internal/weirproc"
)

// peerSpec is a peer CA named on the command line: kind=PATH.
type peerSpec struct {
	kind string // pebble or step-ca
	bin  string
}

// peerKinds are the peer CAs the tool can run, with the arguments that
// make each print its version.
var peerKinds = map[string][]string{
	"pebble":  {"-version"},
	"step-ca": {"version"},
}

// parsePeer reads pebble=PATH or step-ca=PATH; ok is false for anything
// else (a weir binary or a git revision).
func parsePeer(s string) (p peerSpec, ok bool) {
	kind, bin, found := strings.Cut(s, "=")
	if _, known := peerKinds[kind]; !found || !known || bin == "" {
		return peerSpec{}, false
	}
	return peerSpec{kind: kind, bin: bin}, true
}

var semver = regexp.MustCompile(`\bv?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\b`)

// version is the peer's version: from its version command when that
// names one (a build from source says "dev"), else from the Go module
// version recorded in the binary (go install ...@v2.10.3).
func (p peerSpec) version(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, p.bin, peerKinds[p.kind]...).CombinedOutput()
	if m := semver.FindStringSubmatch(string(out)); m != nil && !strings.HasSuffix(m[1], "-dev") {
		return "v" + m[1]
	}
	if bi, err := buildinfo.ReadFile(p.bin); err == nil && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "(version unknown)"
}

// label is how reports name the peer: "pebble v2.10.3".
func (p peerSpec) label(ctx context.Context) string { return p.kind + " " + p.version(ctx) }

// check says whether the binary is there.
func (p peerSpec) check() error {
	st, err := os.Stat(p.bin)
	if err != nil {
		return fmt.Errorf("%s: %w", p.kind, err)
	}
	if st.IsDir() || st.Mode()&0o111 == 0 {
		return fmt.Errorf("%s: %s is not an executable file", p.kind, p.bin)
	}
	return nil
}

// peerServer is what the load needs of a running peer besides its
// process (the cluster's one replica).
type peerServer struct {
	spec    peerSpec
	label   string // "pebble v2.10.3"
	dirURL  string // its ACME directory
	storage string // where it keeps its state, for the report
	// wrap, when set, goes around the client's transport (a peer's
	// quirk the client cannot take as it is).
	wrap func(http.RoundTripper) http.RoundTripper
}

// wrapTransport puts ps.wrap around the transport of the workers' client.
func (ps *peerServer) wrapTransport(ct *countingTransport) {
	if ps != nil && ps.wrap != nil {
		ct.rt = ps.wrap(ct.rt)
	}
}

// peerEnv keeps a peer's HTTP clients (its validation client among them)
// off any proxy of the environment: every request stays on 127.0.0.1.
var peerEnv = []string{"HTTP_PROXY=", "HTTPS_PROXY=", "http_proxy=", "https_proxy=", "NO_PROXY=*", "no_proxy=*"}

// startPeer starts the peer p in dir as the cluster's only replica, its
// http-01 validations going to so.httpPort and its DNS to so.dnsAddr.
func startPeer(ctx context.Context, cl *cluster, p peerSpec, dir string, so serverOptions, stderr io.Writer) error {
	if err := p.check(); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ps := &peerServer{spec: p, label: p.label(ctx)}
	var (
		proc *weirproc.Proc
		err  error
	)
	switch p.kind {
	case "pebble":
		proc, err = startPebble(ctx, ps, dir, so)
	case "step-ca":
		proc, err = startStepCA(ctx, ps, dir, so)
	default:
		err = fmt.Errorf("unknown peer %q", p.kind)
	}
	if proc != nil {
		cl.replicas = append(cl.replicas, &replica{Proc: proc})
	}
	if err != nil {
		return err
	}
	cl.peer = ps
	cl.storage = ps.storage
	cl.rateLimits = "none (" + p.kind + " has no rate limits)"
	cl.redisMode = "none"
	logf(stderr, "%s: pid %d at %s (dir %s)", ps.label, proc.PID, ps.dirURL, dir)
	return nil
}

// directoryURL is the ACME directory the workers start from: a peer's,
// or weir's (replica 1's).
func (cl *cluster) directoryURL() string {
	if cl.peer != nil {
		return cl.peer.dirURL
	}
	return cl.first().Base + "/directory"
}

// describe names the peer in the report in place of a weir binary.
func (ps *peerServer) describe(rep *report) {
	if ps == nil {
		return
	}
	rep.Weir, rep.WeirRev = ps.label, "("+ps.spec.bin+")"
}

// forPeer is o for a peer side of -compare: the options only weir has
// (a PostgreSQL schema, replicas, a Redis, the log) start nothing.
func forPeer(o options) options {
	if _, ok := parsePeer(o.weir); ok {
		o.storage, o.replicas, o.redis, o.postgresSchema = "sqlite", 1, "none", ""
		o.log, o.countPG = false, false
	}
	return o
}

// checkPeerFlags refuses what a peer cannot do: -weir pebble=PATH runs
// alone on the peer's own store; a peer side of -compare takes no
// +settings.
func checkPeerFlags(o *options) error {
	if p, ok := parsePeer(o.weir); ok {
		if o.storage != "sqlite" || o.replicas != 1 || o.log || o.countPG || o.probe || o.cpuProfile != "" ||
			o.populate > 0 || o.fleet > 0 || o.postgresSchema != "" || (o.redis != "auto" && o.redis != "none") {
			return fmt.Errorf("-weir %s=…: a peer CA runs alone on its own store: it does not go with -storage postgres, -replicas, -redis, -log, -count-pg, -probe, -cpuprofile, -populate, -fleet or -postgres-schema", p.kind)
		}
	}
	for _, side := range o.compare {
		build, set, err := parseSide(side)
		if err != nil {
			continue // compare reports it
		}
		if p, ok := parsePeer(build); ok && set != (sideSettings{}) {
			return fmt.Errorf("-compare: side %q: a peer (%s) takes no +settings", side, p.kind)
		}
	}
	return nil
}

// sideLabel names a -compare side in the table's heading: a weir build
// and its revision, or the peer and its version.
func sideLabel(s *compareSide) string {
	if p, ok := parsePeer(s.Name); ok {
		return fmt.Sprintf("%s %s (%s)", p.kind, s.Rev, p.bin)
	}
	return strings.TrimSpace(s.Name + " " + s.Rev)
}

// peerNotes are the caveats of the peer sides, printed under the table.
func peerNotes(sides []*compareSide) []string {
	var out []string
	for _, s := range sides {
		if p, ok := parsePeer(s.Name); ok {
			out = append(out, peerCaveat[p.kind])
		}
	}
	return out
}

// peerCaveat is what a reader of a peer's figures must know.
var peerCaveat = map[string]string{
	"pebble":  "pebble keeps everything in memory (no durability, no database) and logs every request; it validates each challenge from 3 goroutines, each with a fresh DNS-over-TCP lookup and HTTP connection, and finalizes asynchronously (x/crypto/acme then polls the order, waiting 1 s when it is still processing: its certs/s and p99 carry that wait, its CPU per certificate does not)",
	"step-ca": "step-ca stores in badger (v2) in the run dir and logs every request; it validates http-01 and signs during the request",
}
