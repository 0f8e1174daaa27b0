// SPDX-License-Identifier: Apache-2.0

// Command weir-load measures weir's full-flow issuance throughput.
//
// It builds (or takes) a weir binary, runs it as separate processes
// (internal/weirproc) on loopback ports with fresh data directories, an
// in-process http-01 responder and an in-process DNS server (internal/dnstest)
// that resolves every name to 127.0.0.1, and drives it with
// golang.org/x/crypto/acme: each worker has its own account and loops
// new-order, authz, http-01, accept, poll (unless accept already answered
// valid, as lego reads it), finalize with a fresh P-256 CSR, and the
// chain download.
//
// By default one weir runs on SQLite in its data directory. -storage
// postgres puts the ACME objects on the PostgreSQL server of -postgres-dsn
// (default $WEIR_TEST_POSTGRES_DSN), in a schema the tool creates and drops
// at the end. -replicas N (N > 1 needs postgres) runs N weir servers as
// docs/high-availability.md describes: replica 1 starts first and makes the
// CA, the others get a copy of it (weirproc.SeedCA) and all share replica
// 1's server.external-url; the client dials the replicas in turn
// (weirproc.RoundRobin), so with keep-alive (one connection per worker) the
// workers spread over the replicas. With several replicas -redis auto starts
// a private redis-server on a free loopback port (when installed) and puts
// the limiter (rate-limiting.backend: redis) on it; without a Redis each
// replica has its own limiter. The nonces are weir's default (auto:
// PostgreSQL's on PostgreSQL) unless -nonces says otherwise.
//
// For each concurrency level it reports the median over -runs of:
// certificates per second (wall clock), server CPU per certificate (the sum
// over the replicas, from /proc/PID/stat), store CPU per certificate (the
// PostgreSQL server processes and the private redis-server; SQLite's is in
// the server's), client CPU per certificate, server RSS (the sum over the
// replicas of sampled VmRSS and of VmHWM), p50/p99 latency of a whole
// issuance and the error count. A level where no certificate completes for
// -stall is a stall: the tool saves the servers' goroutines and exits with
// status 3.
//
// weir's rate limits are switched off by default (-ratelimits off): its
// defaults refuse a load test within seconds. -ratelimits high enables every
// limit with values never reached, to measure the limiter's cost.
//
// The machine may be shared: the CPU used by other processes during a run
// is measured, the tool waits for a quiet machine before each run (-quiet),
// and a run disturbed by more than -max-other cores is run again (-retries).
//
//	go run ./cmd/weir-load -c 8,32,64 -d 10s -runs 3
//	go run ./cmd/weir-load -c 32 -n 2000 -json
//	go run ./cmd/weir-load -c 32 -d 5s -runs 1 -cpuprofile cpu.pprof
//	go run ./cmd/weir-load -c 8,32,64 -storage postgres
//	go run ./cmd/weir-load -c 8,32,64 -storage postgres -replicas 3
//	go run ./cmd/weir-load -c 8 -runs 3 -compare main,HEAD   # the A/B of a change
//
// A side of -compare, or -weir for a run of its own, may be a peer CA
// instead of weir (peer.go): pebble=PATH (github.com/letsencrypt/pebble)
// or step-ca=PATH (github.com/smallstep/certificates), a binary built
// elsewhere, named in the report with its version. The tool gives it
// what it gives weir: a fresh run directory, loopback ports, a throwaway
// PKI made with crypto/x509 (P-256), the DNS server and the http-01
// responder (pebble: its config's httpPort and -dnsserver, with
// PEBBLE_VA_NOSLEEP=1, PEBBLE_WFE_NONCEREJECT=0, PEBBLE_AUTHZREUSE=100;
// step-ca: an ACME provisioner in ca.json, badger v2 in the run dir,
// --resolver, and --acme-http-port with --insecure, as it otherwise
// dials port 80), and the same workers, flow and figures, the peer's CPU
// from /proc/PID/stat. Pebble keeps everything in memory (no
// durability), and finalizes asynchronously without the Location
// x/crypto/acme polls, which the tool supplies (x/crypto/acme then
// waits 1 s when the order is still processing: pebble's certs/s and p99
// carry that wait, its CPU per certificate does not); each peer logs
// every request.
//
//	go run ./cmd/weir-load -c 8 -runs 3 -compare HEAD,pebble=/path/to/pebble
//	go run ./cmd/weir-load -c 8 -runs 3 -compare HEAD,step-ca=/path/to/step-ca
//	go run ./cmd/weir-load -c 8 -n 100 -runs 1 -weir step-ca=/path/to/step-ca
//
// -fleet N simulates N ACME clients with ARI (RFC 9773) against a weir on
// SQLite it starts with short certificate lifetimes (-fleet-lifetime,
// default 10m) and the loopback whitelisted (every simulated client has
// 127.0.0.1; real fleets do not): each is a goroutine with one name,
// cNNNN.fleet.test (http-01 through the tool's responder), an account
// shared with -fleet-per-account - 1 others, and one HTTP/2 client shared
// by all. It polls its renewalInfo, honouring Retry-After, renews with
// replaces (a JWS the tool signs, fleetclient.go) at a uniformly random
// time of the suggested window, or at once when the window has begun,
// polling again first when Retry-After comes before that time; it waits
// out a 429 for its Retry-After, counting the limit it names and whether
// the Retry-After reaches past its certificate's expiry, and counts a
// lapse when its certificate expires before the renewal is in hand. The
// first certificates are ramped in over -fleet-ramp, then the fleet runs
// for -fleet-steady, under weir's account limits or -fleet-limits tight.
// -drill then rotates the intermediate as docs/operations.md says: issuer
// b made with weir ca new-intermediate-key, sign-intermediate (with the
// root key weir keeps in the data directory, ca/root-key.pem) and
// add-issuer, listed and made active, weir restarted on the same ports
// (step 1); after -drill-step2-after, renew-early on ca.intermediate,
// saved and reloaded live (step 2); then the fleet runs until every
// client holds a certificate of B or A's deadline (the latest expiry of
// A's certificates at step 1) has passed by -drill-grace. The report is a
// per-minute table (clients on A and on B, expired, renewals, 429s by
// limit, refusals past expiry, lapses, certs/min against the fleet's SAN
// budget and the planner's ceiling) and a summary, with the data dir,
// the admin URL and its token file, to watch the dashboard during the
// drill; it exits 1 unless the drill had 0 lapses, 0 refusals past
// expiry and every client on B before A's deadline.
//
//	go run ./cmd/weir-load -fleet 2000 -fleet-steady 10m
//	go run ./cmd/weir-load -fleet 2000 -fleet-per-account 50 -fleet-limits tight -drill -keep
//
// Only 127.0.0.1 (and the PostgreSQL server of -postgres-dsn) is ever
// contacted; every loop is bounded by count and time.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"runtime/debug"
	"runtime/pprof"
	"syscall"
	"time"
)

// validSchema is a schema name -postgres-schema takes.
var validSchema = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const exitStall = 3

var errStall = errors.New("stall")

func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "weir-load: %v\n", err)
		return 2
	}
	if _, set := os.LookupEnv("GOGC"); o.clientGOGC > 0 && !set {
		// The client shares the machine's cores with the server: like
		// weir serve, it collects less often than Go's default.
		debug.SetGCPercent(o.clientGOGC)
	}
	if o.clientProf != "" {
		f, err := os.Create(o.clientProf)
		if err != nil {
			fmt.Fprintf(stderr, "weir-load: -client-cpuprofile: %v\n", err)
			return 2
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "weir-load: -client-cpuprofile: %v\n", err)
			return 2
		}
		defer pprof.StopCPUProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.fleet > 0 {
		return runFleet(ctx, o, stdout, stderr)
	}
	if o.populate > 0 {
		if err := populate(ctx, o, stderr); err != nil {
			fmt.Fprintf(stderr, "weir-load: -populate: %v\n", err)
			return 1
		}
		return 0
	}
	if len(o.compare) == 2 {
		rep, code, err := compare(ctx, o, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "weir-load: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
		if rep != nil && err == nil {
			printCompare(stdout, rep, o.json)
		}
		return code
	}
	rep, code, err := load(ctx, o, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "weir-load: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	if rep != nil {
		writeReport(stdout, o.json, rep, func() { printTable(stdout, rep) })
	}
	return code
}

// writeReport prints rep as indented JSON, or as text with print.
func writeReport(w io.Writer, asJSON bool, rep any, print func()) {
	if !asJSON {
		print()
		return
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(rep)
}

func logf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}
