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
// the limiter (rate-limiting.backend: redis) and the nonces
// (acme.nonces.backend: redis) on it; without a Redis, nonces are in
// PostgreSQL and each replica has its own limiter.
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
		if o.json {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			_ = enc.Encode(rep)
		} else {
			printTable(stdout, rep)
		}
	}
	return code
}

func logf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}
