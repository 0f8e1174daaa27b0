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
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"regexp"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/weir-pki/weir/internal/dnstest"
	"github.com/weir-pki/weir/internal/weirproc"
	"github.com/weir-pki/weir/storage/postgres/pgschema"
)

// validSchema is a schema name -postgres-schema takes.
var validSchema = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const exitStall = 3

var errStall = errors.New("stall")

type options struct {
	weir         string
	levels       []int
	count        int
	duration     time.Duration
	runs         int
	dataDir      string
	keep         bool
	json         bool
	h2           bool
	warmup       time.Duration
	stall        time.Duration
	maxLevel     time.Duration
	workers      int
	rateLimits   string
	quiet        float64
	quietWait    time.Duration
	maxOther     float64
	retries      int
	budget       time.Duration
	cpuProfile   string
	allocProfile string
	traceFile    string
	profileC     int
	profileD     time.Duration
	replicas     int
	storage      string
	postgresDSN  string
	redis        string
	clientGOGC   int
	clientProf   string

	probe            bool          // -probe: time the start-up costs before any load
	probeProf        string        // -probe-profile: file prefix of the server profiles of the probe
	populate         int           // -populate: fill a store with this many certificates and exit
	populateSpan     time.Duration // issue times spread over this much of the past
	populateLifetime time.Duration
	postgresSchema   string // an existing schema to run on (kept), or the one -populate fills
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("weir-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{}
	levels := fs.String("c", "8,32,64", "comma-separated `list` of concurrencies (workers, one ACME account each)")
	fs.StringVar(&o.weir, "weir", "", "weir `binary` to run (default: build ./cmd/weir into a temp dir)")
	fs.IntVar(&o.count, "n", 0, "issuances started per level and run (0: use -d); failed ones are not repeated")
	fs.DurationVar(&o.duration, "d", 10*time.Second, "duration of each level and run when -n is 0")
	fs.IntVar(&o.runs, "runs", 3, "runs of each level; the median is reported")
	fs.StringVar(&o.dataDir, "data", "", "weir data `dir` (default: a temp dir, removed at the end); replica N > 1 uses dir-rN")
	fs.BoolVar(&o.keep, "keep", false, "keep the temp data dir (server logs, database) and the PostgreSQL schema")
	fs.BoolVar(&o.json, "json", false, "print the results as JSON")
	fs.BoolVar(&o.h2, "h2", false, "let the client negotiate HTTP/2 (default: HTTP/1.1 keep-alive, one connection per worker)")
	fs.DurationVar(&o.warmup, "warmup", 2*time.Second, "unmeasured warm-up at the highest concurrency (0: none)")
	fs.DurationVar(&o.stall, "stall", 30*time.Second, "a level where no certificate completes for this long has stalled")
	fs.DurationVar(&o.maxLevel, "max-level", 3*time.Minute, "hard bound on one level's run")
	fs.Float64Var(&o.quiet, "quiet", 0.2, "before each run, wait until other processes use less than this many `cores` (0: don't wait)")
	fs.DurationVar(&o.quietWait, "quiet-wait", 60*time.Second, "longest wait for a quiet machine before a run (the run is then flagged)")
	fs.Float64Var(&o.maxOther, "max-other", 0.3, "a run during which other processes used more than this many `cores` is disturbed and run again (0: never)")
	fs.IntVar(&o.retries, "retries", 2, "how often a disturbed run is run again; the least disturbed attempt is kept")
	fs.DurationVar(&o.budget, "budget", 12*time.Minute, "after this long, stop waiting for quiet and stop re-running disturbed runs")
	fs.StringVar(&o.rateLimits, "ratelimits", "off", "weir's rate limits: off (all disabled), high (all enabled, never reached: measures the limiter), server (weir's defaults)")
	fs.IntVar(&o.workers, "validation-workers", 0, "set acme.validation-workers in the server config (0: weir's default)")
	fs.IntVar(&o.replicas, "replicas", 1, "weir replicas, dialled in turn by the client (more than 1 needs -storage postgres)")
	fs.StringVar(&o.storage, "storage", "sqlite", "weir's ACME store: sqlite (in the data dir) or postgres (-postgres-dsn)")
	fs.StringVar(&o.postgresDSN, "postgres-dsn", os.Getenv("WEIR_TEST_POSTGRES_DSN"), "PostgreSQL server `DSN` for -storage postgres (default $WEIR_TEST_POSTGRES_DSN); the tool creates a schema there and drops it at the end (kept with -keep and after a stall)")
	fs.StringVar(&o.redis, "redis", "auto", "Redis for the limiter and the nonces: auto (a private redis-server when -replicas > 1 and one is installed, else none), private (always a private redis-server), none, or the host:port of a running Redis (its CPU then counts as other processes')")
	fs.IntVar(&o.clientGOGC, "client-gogc", 400, "the load tool's own garbage collector target, as GOGC (0: Go's default, or GOGC from the environment); weir serve sets 400 for itself the same way")
	fs.StringVar(&o.clientProf, "client-cpuprofile", "", "save the load tool's own CPU profile (the client side: x/crypto/acme, the http-01 responder, the DNS server) over the whole run to `file`")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "after the measured runs, run one more level with the server's -pprof on and save its CPU profile to `file` (with -replicas > 1: replica 1's profile only)")
	fs.StringVar(&o.allocProfile, "allocprofile", "", "with -cpuprofile, also save the server's allocs profile to `file`")
	fs.StringVar(&o.traceFile, "trace", "", "with -cpuprofile, also save a 5 s execution trace of the server to `file` (go tool trace -pprof=sync)")
	fs.IntVar(&o.profileC, "profile-c", 0, "concurrency of the profiled level (default: the highest of -c)")
	fs.DurationVar(&o.profileD, "profile-d", 10*time.Second, "length of the CPU profile")
	fs.BoolVar(&o.probe, "probe", false, "right after the server starts, before any load: time the first issuance, read the RSS 5 s after start, and time the admin overview, a search miss and revocations through the admin API (7 each)")
	fs.StringVar(&o.probeProf, "probe-profile", "", "with -probe: save the server's CPU profile over its first 10 s to `prefix`.cpu and its heap at 5 s to prefix.heap")
	fs.IntVar(&o.populate, "populate", 0, "fill a new store (SQLite in -data, or -storage postgres in -postgres-schema) with `N` certificates signed by -data's CA, and exit")
	fs.DurationVar(&o.populateSpan, "populate-span", 30*24*time.Hour, "with -populate: issue times spread evenly over this much of the past")
	fs.DurationVar(&o.populateLifetime, "populate-lifetime", 90*24*time.Hour, "with -populate: the certificates' lifetime")
	fs.StringVar(&o.postgresSchema, "postgres-schema", "", "with -storage postgres: the `schema` -populate fills (created if missing), or an existing one a load run uses and keeps")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var err error
	if o.levels, err = parseLevels(*levels); err != nil {
		return nil, err
	}
	switch {
	case o.runs < 1 || o.runs > 100:
		return nil, errors.New("-runs: between 1 and 100")
	case o.count < 0 || o.count > 1_000_000:
		return nil, errors.New("-n: between 0 and 1000000")
	case o.count == 0 && (o.duration <= 0 || o.duration > 30*time.Minute):
		return nil, errors.New("-d: a positive duration up to 30m")
	case o.stall <= 0:
		return nil, errors.New("-stall: must be positive")
	case o.maxLevel <= 0:
		return nil, errors.New("-max-level: must be positive")
	case o.profileD < time.Second || o.profileD > 5*time.Minute:
		return nil, errors.New("-profile-d: between 1s and 5m")
	}
	if (o.allocProfile != "" || o.traceFile != "") && o.cpuProfile == "" {
		return nil, errors.New("-allocprofile and -trace need -cpuprofile")
	}
	switch {
	case o.replicas < 1 || o.replicas > 16:
		return nil, errors.New("-replicas: between 1 and 16")
	case o.storage != "sqlite" && o.storage != "postgres":
		return nil, fmt.Errorf("-storage: %q is not sqlite or postgres", o.storage)
	case o.replicas > 1 && o.storage != "postgres":
		return nil, errors.New("-replicas: more than one replica needs a shared store: -storage postgres")
	case o.storage == "postgres" && o.postgresDSN == "":
		return nil, errors.New("-storage postgres needs -postgres-dsn or WEIR_TEST_POSTGRES_DSN")
	}
	switch o.redis {
	case "auto", "private", "none":
	default:
		if _, _, err := net.SplitHostPort(o.redis); err != nil {
			return nil, fmt.Errorf("-redis: %q is not auto, private, none or host:port", o.redis)
		}
	}
	if _, ok := rateLimitBlocks[o.rateLimits]; !ok {
		return nil, fmt.Errorf("-ratelimits: %q is not off, high or server", o.rateLimits)
	}
	if o.clientGOGC < 0 {
		return nil, errors.New("-client-gogc: 0 or more")
	}
	if o.profileC == 0 {
		o.profileC = slices.Max(o.levels)
	}
	switch {
	case o.populate < 0 || o.populate > 100_000_000:
		return nil, errors.New("-populate: between 0 and 100000000")
	case o.populate > 0 && (o.populateSpan <= 0 || o.populateLifetime <= 0):
		return nil, errors.New("-populate-span and -populate-lifetime: positive durations")
	case o.postgresSchema != "" && !validSchema.MatchString(o.postgresSchema):
		return nil, fmt.Errorf("-postgres-schema: %q: lower-case letters, digits and _ only", o.postgresSchema)
	}
	return o, nil
}

// runResult is one run of one level.
type runResult struct {
	Concurrency        int            `json:"concurrency"`
	Run                int            `json:"run"`
	Certs              int            `json:"certs"`
	Errors             int            `json:"errors"`
	ErrorKinds         map[string]int `json:"error_kinds,omitempty"`
	ElapsedSec         float64        `json:"elapsed_s"`
	CertsPerSec        float64        `json:"certs_per_s"`
	ServerCPUSec       float64        `json:"server_cpu_s"`
	ServerCPUMsPerCert float64        `json:"server_cpu_ms_per_cert"`
	StoreCPUSec        float64        `json:"store_cpu_s"`
	StoreCPUMsPerCert  float64        `json:"store_cpu_ms_per_cert"`
	ClientCPUMsPerCert float64        `json:"client_cpu_ms_per_cert"`
	MachineBusyPct     float64        `json:"machine_busy_pct"`
	OtherCPUCores      float64        `json:"other_cpu_cores"`
	P50Ms              float64        `json:"p50_ms"`
	P99Ms              float64        `json:"p99_ms"`
	MaxMs              float64        `json:"max_ms"`
	ServerRSSMaxMiB    float64        `json:"server_rss_max_mib"`
	ServerHWMMiB       float64        `json:"server_vmhwm_mib"`
	RequestsPerCert    float64        `json:"requests_per_cert"`
	Attempts           int            `json:"attempts,omitempty"`
	Disturbed          bool           `json:"disturbed,omitempty"`
	Stalled            bool           `json:"stalled,omitempty"`
	StallNote          string         `json:"stall_note,omitempty"`
}

// levelResult is the median of a level's runs.
type levelResult struct {
	Concurrency int         `json:"concurrency"`
	Median      runResult   `json:"median"`
	ErrorsTotal int         `json:"errors_total"`
	Runs        []runResult `json:"runs"`
}

type report struct {
	Weir        string           `json:"weir"`
	WeirRev     string           `json:"weir_rev,omitempty"`
	GoVersion   string           `json:"go"`
	CPUs        int              `json:"cpus"`
	ClkTck      int64            `json:"clk_tck"`
	Mode        string           `json:"mode"`
	Replicas    int              `json:"replicas"`
	Storage     string           `json:"storage"`
	Redis       string           `json:"redis"`
	RateLimits  string           `json:"ratelimits"`
	Protocols   map[string]int64 `json:"protocols"`
	Levels      []levelResult    `json:"levels"`
	Stalled     bool             `json:"stalled"`
	StallDump   string           `json:"stall_dump,omitempty"`
	CPUProfile  string           `json:"cpu_profile,omitempty"`
	Probe       *probeResult     `json:"probe,omitempty"`
	ServerLog   string           `json:"server_log,omitempty"` // replica 1's
	ReplicaList []replicaReport  `json:"replica_list"`
}

// replicaReport is one replica in the report.
type replicaReport struct {
	PID         int    `json:"pid"`
	Listen      string `json:"listen"`
	DataDir     string `json:"data_dir"`
	Log         string `json:"log"`
	Connections int64  `json:"connections,omitempty"` // the client's, with several replicas
}

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
	err = startCluster(ctx, cl, clusterOptions{server: so, replicas: o.replicas, dataDirs: replicaDataDirs(dataDir, o.replicas)}, stderr)
	if err != nil {
		return nil, 1, err
	}
	ready := time.Now()
	srv := cl.first()
	logf(stderr, "%d replica(s) at %s, storage %s, redis %s (http-01 :%d, dns %s)", len(cl.replicas), srv.Base, cl.storage, cl.redisMode, resp.port, dns.Addr())

	maxC := slices.Max(append(slices.Clone(o.levels), o.profileC))
	var dial func(context.Context, string, string) (net.Conn, error)
	if cl.rr != nil {
		dial = cl.rr.DialContext
	}
	hc, ct := newHTTPClient(srv.Roots, maxC, o.h2, dial)
	regCtx, regCancel := context.WithTimeout(ctx, 2*time.Minute)
	clients, err := newAccounts(regCtx, maxC, srv.Base+"/directory", hc)
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
				logf(stderr, "c=%d run %d: %d certs in %.1fs = %.1f/s, server CPU %.2f ms/cert, store CPU %.2f ms/cert, client CPU %.2f ms/cert, p50 %.1f ms, p99 %.1f ms, errors %d, other processes %.2f cores",
					c, r, a.Certs, a.ElapsedSec, a.CertsPerSec, a.ServerCPUMsPerCert, a.StoreCPUMsPerCert, a.ClientCPUMsPerCert, a.P50Ms, a.P99Ms, a.Errors, a.OtherCPUCores)
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

// replicaReports describes the replicas and the client's connections to
// each.
func (cl *cluster) replicaReports() []replicaReport {
	var dials map[string]int64
	if cl.rr != nil {
		dials = cl.rr.Dials()
	}
	out := make([]replicaReport, len(cl.replicas))
	for i, r := range cl.replicas {
		out[i] = replicaReport{PID: r.PID, Listen: r.Listen, DataDir: r.DataDir, Log: r.LogPath, Connections: dials[r.Listen]}
	}
	return out
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
	srv0 := cl.serverTicks()
	cli0, _ := weirproc.ProcCPU("self")
	busy0, total0 := weirproc.MachineCPU()
	req0 := ct.requests.Load()

	out := l.runLevel(ctx, s)

	srv1 := cl.serverTicks()
	cli1, _ := weirproc.ProcCPU("self")
	busy1, total1 := weirproc.MachineCPU()
	req1 := ct.requests.Load()
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
	if out.certs > 0 {
		r.ServerCPUMsPerCert = 1000 * r.ServerCPUSec / float64(out.certs)
		r.StoreCPUMsPerCert = 1000 * r.StoreCPUSec / float64(out.certs)
		r.ClientCPUMsPerCert = 1000 * float64(cli1-cli0) / float64(tck) / float64(out.certs)
		r.RequestsPerCert = float64(req1-req0) / float64(out.certs)
	}
	return r
}

// medianOf takes the median of each metric over the runs separately.
func medianOf(runs []runResult) runResult {
	med := func(f func(runResult) float64) float64 {
		v := make([]float64, len(runs))
		for i, r := range runs {
			v[i] = f(r)
		}
		slices.Sort(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	m := runResult{Concurrency: runs[0].Concurrency}
	m.Certs = int(med(func(r runResult) float64 { return float64(r.Certs) }))
	m.Errors = int(med(func(r runResult) float64 { return float64(r.Errors) }))
	m.ElapsedSec = med(func(r runResult) float64 { return r.ElapsedSec })
	m.CertsPerSec = med(func(r runResult) float64 { return r.CertsPerSec })
	m.ServerCPUSec = med(func(r runResult) float64 { return r.ServerCPUSec })
	m.ServerCPUMsPerCert = med(func(r runResult) float64 { return r.ServerCPUMsPerCert })
	m.StoreCPUSec = med(func(r runResult) float64 { return r.StoreCPUSec })
	m.StoreCPUMsPerCert = med(func(r runResult) float64 { return r.StoreCPUMsPerCert })
	m.ClientCPUMsPerCert = med(func(r runResult) float64 { return r.ClientCPUMsPerCert })
	m.MachineBusyPct = med(func(r runResult) float64 { return r.MachineBusyPct })
	m.OtherCPUCores = med(func(r runResult) float64 { return r.OtherCPUCores })
	m.P50Ms = med(func(r runResult) float64 { return r.P50Ms })
	m.P99Ms = med(func(r runResult) float64 { return r.P99Ms })
	m.MaxMs = med(func(r runResult) float64 { return r.MaxMs })
	m.ServerRSSMaxMiB = med(func(r runResult) float64 { return r.ServerRSSMaxMiB })
	m.ServerHWMMiB = slices.MaxFunc(runs, func(a, b runResult) int { return cmpF(a.ServerHWMMiB, b.ServerHWMMiB) }).ServerHWMMiB
	m.RequestsPerCert = med(func(r runResult) float64 { return r.RequestsPerCert })
	for _, r := range runs {
		m.Stalled = m.Stalled || r.Stalled
		m.Disturbed = m.Disturbed || r.Disturbed
	}
	return m
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
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

func printTable(w io.Writer, rep *report) {
	fmt.Fprintf(w, "weir-load: %s %s, %s, rate limits %s, %d CPUs, %s; client protocols %v\n", rep.Weir, rep.WeirRev, rep.Mode, rep.RateLimits, rep.CPUs, rep.GoVersion, rep.Protocols)
	fmt.Fprintf(w, "replicas %d, storage %s, redis %s", rep.Replicas, rep.Storage, rep.Redis)
	if rep.Replicas > 1 {
		conns := make([]string, len(rep.ReplicaList))
		for i, r := range rep.ReplicaList {
			conns[i] = strconv.FormatInt(r.Connections, 10)
		}
		fmt.Fprintf(w, "; client connections per replica %s", strings.Join(conns, "/"))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "c\tcerts/s\tsrv CPU ms/cert\tstore CPU ms/cert\tcli CPU ms/cert\tbusy %\tother cores\tp50 ms\tp99 ms\terrors\tRSS max MiB\tVmHWM MiB\treq/cert\truns\t")
	for _, l := range rep.Levels {
		m := l.Median
		fmt.Fprintf(tw, "%d\t%.1f\t%.2f\t%.2f\t%.2f\t%.0f\t%.2f\t%.1f\t%.1f\t%d\t%.1f\t%.1f\t%.1f\t%d\t\n",
			l.Concurrency, m.CertsPerSec, m.ServerCPUMsPerCert, m.StoreCPUMsPerCert, m.ClientCPUMsPerCert, m.MachineBusyPct, m.OtherCPUCores,
			m.P50Ms, m.P99Ms, l.ErrorsTotal, m.ServerRSSMaxMiB, m.ServerHWMMiB, m.RequestsPerCert, len(l.Runs))
	}
	tw.Flush()
	fmt.Fprintln(w, "(medians over the runs; errors is the total; VmHWM is the largest seen; srv CPU, RSS and VmHWM are summed over the replicas;")
	fmt.Fprintln(w, " store CPU: PostgreSQL's processes and a private redis-server, 0 for SQLite (in weir's); other cores: CPU of other processes during the runs)")
	for _, l := range rep.Levels {
		if l.Median.Disturbed {
			fmt.Fprintf(w, "WARNING: c=%d has runs disturbed by other processes (see -json)\n", l.Concurrency)
		}
	}
	if rep.Stalled {
		fmt.Fprintf(w, "STALL: goroutines in %s\n", rep.StallDump)
	}
	if rep.CPUProfile != "" {
		fmt.Fprintf(w, "server CPU profile: %s (go tool pprof -top %s)\n", rep.CPUProfile, rep.CPUProfile)
	}
}
