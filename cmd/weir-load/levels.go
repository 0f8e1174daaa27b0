// SPDX-License-Identifier: Apache-2.0

// The load run: the cluster started, each concurrency level measured (with
// quiet-machine waits and retries), the optional CPU profile.

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/weir-pki/weir/internal/dnstest"
	"github.com/weir-pki/weir/internal/pgcount"
	"github.com/weir-pki/weir/internal/weirproc"
	"github.com/weir-pki/weir/storage/postgres/pgschema"
)

func load(ctx context.Context, o *options, stderr io.Writer) (*report, int, error) {
	tmp, err := os.MkdirTemp("", "weir-load-")
	if err != nil {
		return nil, 1, err
	}
	keep := o.keep // a stall keeps the temp dir (server logs, database) too
	cl := &cluster{storage: o.storage}
	defer func() {
		if !keep {
			os.RemoveAll(tmp)
		} else if o.dataDir == "" {
			logf(stderr, "kept %s", tmp)
		}
	}()
	bin, rev := o.weir, ""
	if bin == "" {
		logf(stderr, "building weir")
		if bin, err = weirproc.Build(ctx, tmp); err != nil {
			return nil, 1, err
		}
		rev = weirproc.GitRev(ctx)
	}
	dataDir := o.dataDir
	if dataDir == "" {
		dataDir = tmp + "/data"
	}

	dns, err := dnstest.Start("127.0.0.1:0")
	if err != nil {
		return nil, 1, err
	}
	defer dns.Close()
	dns.SetDefaultAddrs(netip.MustParseAddr("127.0.0.1"))
	resp, err := startResponder()
	if err != nil {
		return nil, 1, err
	}
	defer resp.close()

	so := serverOptions{
		bin: bin, dnsAddr: dns.Addr(), httpPort: resp.port,
		pprof: o.cpuProfile != "" || o.probeProf != "", validationWorkers: o.workers, rateLimits: o.rateLimits,
		log: o.log, nonces: o.nonces,
	}
	if o.storage == "postgres" && o.postgresSchema != "" {
		// A schema of the caller's (filled by -populate): used, never dropped.
		so.postgresDSN = pgschema.WithParams(o.postgresDSN, map[string]string{"search_path": o.postgresSchema, "application_name": o.postgresSchema})
		cl.storage = "postgres (schema " + o.postgresSchema + ", kept)"
	} else if o.storage == "postgres" {
		pgCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		cl.pg, err = pgschema.Create(pgCtx, o.postgresDSN, "weir_load_")
		cancel()
		if err != nil {
			return nil, 1, err
		}
		cl.storage = "postgres (schema " + cl.pg.Name + ")"
		so.postgresDSN = cl.pg.DSN
		logf(stderr, "PostgreSQL schema %s", cl.pg.Name)
		// Registered before the servers' stop, so it runs after it.
		defer func() {
			if keep { // -keep, or a stall
				logf(stderr, "kept PostgreSQL schema %s (drop it with DROP SCHEMA %s CASCADE)", cl.pg.Name, cl.pg.Name)
				return
			}
			dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := cl.pg.Drop(dctx); err != nil {
				logf(stderr, "%v", err)
			}
		}()
	}
	if o.countPG {
		var through string
		if cl.pgc, through, err = pgcount.StartDSN(so.postgresDSN); err != nil {
			return nil, 1, fmt.Errorf("-count-pg: %w", err)
		}
		defer cl.pgc.Close()
		so.postgresDSN = through
	}
	stopped := false
	defer func() {
		if !stopped {
			if err := cl.stop(40 * time.Second); err != nil {
				logf(stderr, "stopping: %v", err)
			}
		}
	}()
	if so.redisAddr, err = startRedis(ctx, cl, o.redis, o.replicas, tmp+"/redis", stderr); err != nil {
		return nil, 1, err
	}
	if p, ok := parsePeer(o.weir); ok { // a peer CA instead of weir (peer.go)
		err = startPeer(ctx, cl, p, dataDir, so, stderr)
	} else {
		err = startCluster(ctx, cl, clusterOptions{server: so, replicas: o.replicas, dataDirs: replicaDataDirs(dataDir, o.replicas)}, stderr)
	}
	if err != nil {
		return nil, 1, err
	}
	ready := time.Now()
	srv := cl.first()
	if o.log {
		if cl.log, err = newAdminClient(srv); err != nil {
			return nil, 1, err
		}
	}
	logf(stderr, "%d replica(s) at %s, storage %s, redis %s (http-01 :%d, dns %s)", len(cl.replicas), srv.Base, cl.storage, cl.redisMode, resp.port, dns.Addr())

	maxC := slices.Max(append(slices.Clone(o.levels), o.profileC))
	var dial func(context.Context, string, string) (net.Conn, error)
	if cl.rr != nil {
		dial = cl.rr.DialContext
	}
	hc, ct := newHTTPClient(srv.Roots, maxC, o.h2, dial)
	cl.peer.wrapTransport(ct)
	regCtx, regCancel := context.WithTimeout(ctx, 2*time.Minute)
	clients, err := newAccounts(regCtx, maxC, cl.directoryURL(), hc)
	regCancel()
	if err != nil {
		return nil, 1, err
	}
	logf(stderr, "registered %d accounts", len(clients))
	l := &loader{clients: clients, resp: resp, verify: srv.Roots}

	rep := &report{
		Weir: bin, WeirRev: rev, RateLimits: cl.rateLimits, GoVersion: runtime.Version(), CPUs: runtime.NumCPU(), ClkTck: weirproc.ClockTicks(),
		Replicas: len(cl.replicas), Storage: cl.storage, Redis: cl.redisMode, ServerLog: srv.LogPath,
	}
	cl.peer.describe(rep)
	if o.count > 0 {
		rep.Mode = fmt.Sprintf("%d certificates per run", o.count)
	} else {
		rep.Mode = fmt.Sprintf("%s per run", o.duration)
	}
	finish := func() {
		rep.Protocols = ct.protocols()
		rep.ReplicaList = cl.replicaReports()
	}
	budgetEnd := time.Now().Add(o.budget)
	seq := 0
	spec := func(c int) levelSpec {
		seq++
		return levelSpec{concurrency: c, count: o.count, duration: o.duration, maxTime: o.maxLevel, stall: o.stall, tag: "l" + strconv.Itoa(seq)}
	}

	if o.probe {
		if rep.Probe, err = probe(ctx, l, srv, ready, o.probeProf, stderr); err != nil {
			finish()
			return rep, 1, err
		}
	}

	if o.warmup > 0 {
		s := spec(maxC)
		s.count, s.duration = 0, o.warmup
		logf(stderr, "warm-up: %s at concurrency %d", o.warmup, maxC)
		if out := l.runLevel(ctx, s); out.stalled {
			keep = true
			finish()
			return rep, exitStall, stallError(cl, rep, tmp, out.stallNote)
		}
	}

	for _, c := range o.levels {
		lr := levelResult{Concurrency: c}
		for r := 1; r <= o.runs; r++ {
			if ctx.Err() != nil {
				finish()
				return rep, 1, ctx.Err()
			}
			var res runResult
			for attempt := 0; ; attempt++ {
				if time.Now().Before(budgetEnd) {
					waitQuiet(ctx, o, cl, rep.ClkTck, stderr)
				}
				a := measure(ctx, l, cl, ct, rep.ClkTck, spec(c))
				a.Run, a.Attempts = r, attempt+1
				logf(stderr, "c=%d run %d: %d certs in %.1fs = %.1f/s, server CPU %.2f ms/cert, store CPU %.2f ms/cert, client CPU %.2f ms/cert, p50 %.1f ms, p99 %.1f ms, errors %d, other processes %.2f cores%s",
					c, r, a.Certs, a.ElapsedSec, a.CertsPerSec, a.ServerCPUMsPerCert, a.StoreCPUMsPerCert, a.ClientCPUMsPerCert, a.P50Ms, a.P99Ms, a.Errors, a.OtherCPUCores, logLagNote(a))
				if attempt == 0 || a.OtherCPUCores < res.OtherCPUCores || a.Stalled {
					a.Attempts = attempt + 1
					res = a
				}
				res.Attempts = attempt + 1
				if res.Stalled || o.maxOther <= 0 || res.OtherCPUCores <= o.maxOther {
					break
				}
				if attempt >= o.retries || !time.Now().Before(budgetEnd) || ctx.Err() != nil {
					res.Disturbed = true
					logf(stderr, "c=%d run %d: other processes used %.2f cores (> %.2f); kept as disturbed", c, r, res.OtherCPUCores, o.maxOther)
					break
				}
				logf(stderr, "c=%d run %d: disturbed by other processes (%.2f cores); running it again", c, r, a.OtherCPUCores)
			}
			lr.Runs = append(lr.Runs, res)
			lr.ErrorsTotal += res.Errors
			for k, n := range res.ErrorKinds {
				logf(stderr, "  error ×%d: %s", n, k)
			}
			if res.Stalled {
				lr.Median = medianOf(lr.Runs)
				rep.Levels = append(rep.Levels, lr)
				keep = true
				finish()
				return rep, exitStall, stallError(cl, rep, tmp, res.StallNote)
			}
		}
		lr.Median = medianOf(lr.Runs)
		rep.Levels = append(rep.Levels, lr)
		printPGCounts(stderr, c, lr.Runs[len(lr.Runs)-1].PG)
	}
	finish()

	if o.cpuProfile != "" {
		if time.Now().Before(budgetEnd) {
			waitQuiet(ctx, o, cl, rep.ClkTck, stderr)
		}
		if err := profile(ctx, o, l, srv, spec(o.profileC), stderr); err != nil {
			if errors.Is(err, errStall) {
				keep = true
				return rep, exitStall, errors.Join(err, stallError(cl, rep, tmp, "during the profiled level"))
			}
			return rep, 1, err
		}
		rep.CPUProfile = o.cpuProfile
	}

	rep.ReplicaList = cl.replicaReports()
	stopped = true
	if err := cl.stop(40 * time.Second); err != nil {
		logf(stderr, "stopping: %v", err)
	}
	return rep, 0, nil
}

// waitQuiet waits, at most o.quietWait, until processes other than weir,
// its stores and this tool use less than o.quiet cores over a second.
func waitQuiet(ctx context.Context, o *options, cl *cluster, tck int64, stderr io.Writer) {
	if o.quiet <= 0 {
		return
	}
	deadline := time.Now().Add(o.quietWait)
	for warned := false; ; {
		b0, _ := weirproc.MachineCPU()
		s0, st0 := cl.serverTicks(), cl.storeTicks(ctx)
		c0, _ := weirproc.ProcCPU("self")
		t0 := time.Now()
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		b1, _ := weirproc.MachineCPU()
		s1, st1 := cl.serverTicks(), cl.storeTicks(ctx)
		c1, _ := weirproc.ProcCPU("self")
		other := float64((b1-b0)-(s1-s0)-ticksBetween(st0, st1)-(c1-c0)) / float64(tck) / time.Since(t0).Seconds()
		if other < o.quiet {
			return
		}
		if time.Now().After(deadline) {
			logf(stderr, "machine still busy (other processes %.2f cores); measuring anyway", other)
			return
		}
		if !warned {
			logf(stderr, "waiting for a quiet machine: other processes use %.2f cores", other)
			warned = true
		}
	}
}

// stallError saves the servers' goroutines and describes the stall.
func stallError(cl *cluster, rep *report, tmp, note string) error {
	rep.Stalled = true
	dest := tmp + "/goroutines-at-stall.txt"
	if wd, err := os.Getwd(); err == nil {
		dest = wd + "/weir-load-stall-goroutines.txt"
	}
	rep.StallDump = strings.Join(cl.stallDumps(dest), ", ")
	return fmt.Errorf("STALL: %s; server goroutines in %s", note, rep.StallDump)
}

// measure runs one level and takes the CPU and memory of the servers (the
// sum over the replicas), of their stores and of the client around it.
func measure(ctx context.Context, l *loader, cl *cluster, ct *countingTransport, tck int64, s levelSpec) runResult {
	var rssMax atomic.Int64
	sampleDone := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			if kb := cl.serverKB("VmRSS"); kb > rssMax.Load() {
				rssMax.Store(kb)
			}
			select {
			case <-sampleDone:
				return
			case <-t.C:
			}
		}
	}()
	store0 := cl.storeTicks(ctx)
	each0 := cl.replicaTicks()
	srv0 := sumTicks(each0)
	cli0, _ := weirproc.ProcCPU("self")
	busy0, total0 := weirproc.MachineCPU()
	req0 := ct.requests.Load()
	pg0 := cl.pgc.Counts()

	var lag0 lagHistogram
	if cl.log != nil {
		lag0, _ = scrapeLag(ctx, cl.log) // none yet: every entry counts
	}
	out := l.runLevel(ctx, s)

	each1 := cl.replicaTicks()
	srv1 := sumTicks(each1)
	cli1, _ := weirproc.ProcCPU("self")
	busy1, total1 := weirproc.MachineCPU()
	req1 := ct.requests.Load()
	pg1 := cl.pgc.Counts()
	store := ticksBetween(store0, cl.storeTicks(ctx))
	close(sampleDone)
	<-sampled
	hwm := cl.serverKB("VmHWM")

	slices.Sort(out.latencies)
	r := runResult{
		Concurrency: s.concurrency, Certs: out.certs, Errors: out.errors, ElapsedSec: out.elapsed.Seconds(),
		ServerCPUSec: float64(srv1-srv0) / float64(tck),
		StoreCPUSec:  float64(store) / float64(tck),
		P50Ms:        percentile(out.latencies, 50), P99Ms: percentile(out.latencies, 99), MaxMs: percentile(out.latencies, 100),
		ServerRSSMaxMiB: float64(rssMax.Load()) / 1024, ServerHWMMiB: float64(hwm) / 1024,
		Stalled: out.stalled, StallNote: out.stallNote,
	}
	if len(out.errKinds) > 0 {
		r.ErrorKinds = out.errKinds
	}
	if cl.pgc != nil {
		r.PG = perCert(pg1.Sub(pg0), out.certs)
	}
	if out.elapsed > 0 {
		r.CertsPerSec = float64(out.certs) / out.elapsed.Seconds()
	}
	if total1 > total0 {
		r.MachineBusyPct = 100 * float64(busy1-busy0) / float64(total1-total0)
		// CPU used by neither weir, its stores nor this tool: other
		// processes (and kernel work charged to no process). Anything
		// much above zero means the numbers are disturbed.
		other := float64((busy1-busy0)-(srv1-srv0)-store-(cli1-cli0)) / float64(tck) / out.elapsed.Seconds()
		r.OtherCPUCores = max(0, other)
	}
	if cl.log != nil {
		if lag1, err := settle(ctx, cl.log); err == nil {
			r.LogLagP99Sec = lag1.p99Since(lag0)
		}
	}
	if out.certs > 0 {
		r.ServerCPUMsPerCert = 1000 * r.ServerCPUSec / float64(out.certs)
		r.StoreCPUMsPerCert = 1000 * r.StoreCPUSec / float64(out.certs)
		r.ClientCPUMsPerCert = 1000 * float64(cli1-cli0) / float64(tck) / float64(out.certs)
		r.RequestsPerCert = float64(req1-req0) / float64(out.certs)
		if len(each1) > 1 {
			for i := range each1 {
				r.ReplicaCPUMsPerCert = append(r.ReplicaCPUMsPerCert, 1000*float64(each1[i]-each0[i])/float64(tck)/float64(out.certs))
			}
		}
	}
	return r
}

// profile runs one more level with the server's CPU profile being taken.
func profile(ctx context.Context, o *options, l *loader, srv *replica, s levelSpec, stderr io.Writer) error {
	secs := int(o.profileD / time.Second)
	s.count, s.duration = 0, time.Duration(secs)*time.Second+time.Second
	logf(stderr, "profiling the server: %ds at concurrency %d", secs, s.concurrency)
	hc := &http.Client{Timeout: time.Duration(secs)*time.Second + 30*time.Second}
	profErr := make(chan error, 1)
	go func() {
		profErr <- fetch(ctx, hc, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", srv.pprofAddr, secs), o.cpuProfile)
	}()
	traceErr := make(chan error, 1)
	go func() {
		if o.traceFile == "" {
			traceErr <- nil
			return
		}
		// Started a little later, to trace the steady state.
		select {
		case <-ctx.Done():
			traceErr <- ctx.Err()
			return
		case <-time.After(time.Duration(secs) * time.Second / 3):
		}
		traceErr <- fetch(ctx, hc, fmt.Sprintf("http://%s/debug/pprof/trace?seconds=%d", srv.pprofAddr, min(5, secs)), o.traceFile)
	}()
	out := l.runLevel(ctx, s)
	if err := <-profErr; err != nil {
		return fmt.Errorf("CPU profile: %w", err)
	}
	if err := <-traceErr; err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	logf(stderr, "profiled level: %d certs in %.1fs (%.1f/s, with the profiler on), errors %d; CPU profile in %s",
		out.certs, out.elapsed.Seconds(), float64(out.certs)/out.elapsed.Seconds(), out.errors, o.cpuProfile)
	if out.stalled {
		return fmt.Errorf("%w: %s", errStall, out.stallNote)
	}
	if o.allocProfile != "" {
		if err := fetch(ctx, hc, "http://"+srv.pprofAddr+"/debug/pprof/allocs", o.allocProfile); err != nil {
			return fmt.Errorf("allocs profile: %w", err)
		}
	}
	return nil
}

func fetch(ctx context.Context, hc *http.Client, url, dest string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	res, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 512))
		return fmt.Errorf("%s: %s: %s", url, res.Status, b)
	}
	f, err := os.Create(dest)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, res.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
