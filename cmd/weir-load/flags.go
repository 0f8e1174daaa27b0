// SPDX-License-Identifier: Apache-2.0

// The command line flags and their checks.

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

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
	compare      []string // -compare A,B: two builds, interleaved (compare.go)
	log          bool     // -log: weir's verifiable log on (loglag.go)
	countPG      bool     // -count-pg: count PostgreSQL's round trips and statements (pgcount.go)
	nonces       string   // -nonces: acme.nonces.backend ("": redis with a Redis, else weir's default)

	probe            bool          // -probe: time the start-up costs before any load
	probeProf        string        // -probe-profile: file prefix of the server profiles of the probe
	populate         int           // -populate: fill a store with this many certificates and exit
	populateSpan     time.Duration // issue times spread over this much of the past
	populateLifetime time.Duration
	populateShards   int    // -crl-shards: the CRL shards -populate assigns, as ca.crl-shards does
	postgresSchema   string // an existing schema to run on (kept), or the one -populate fills

	// -fleet N and -drill (fleet.go, drill.go)
	fleet            int
	fleetPerAccount  int
	fleetLifetime    time.Duration
	fleetRamp        time.Duration
	fleetSteady      time.Duration
	fleetLimits      string  // default or tight
	fleetTightFactor float64 // -fleet-limits tight=F
	fleetMaxRenewals int     // acme.renewal-info.max-renewals-per-hour; 0: weir's default
	fleetMax         time.Duration
	fleetTrace       bool
	drill            bool
	drillStep2After  time.Duration
	drillGrace       time.Duration
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("weir-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{}
	levels := fs.String("c", "8,32,64", "comma-separated `list` of concurrencies (workers, one ACME account each)")
	fs.StringVar(&o.weir, "weir", "", "weir `binary` to run (default: build ./cmd/weir into a temp dir), or a peer CA instead of weir: pebble=PATH or step-ca=PATH (peer.go)")
	compare := fs.String("compare", "", "`A,B`: run the levels on two builds, each a peer CA (pebble=PATH or step-ca=PATH, with no +settings: peer.go), a weir binary or a git revision of this repository (built with -trimpath) followed by any of +log, +nonces=BACKEND, +ratelimits=MODE, +storage=STORE and +redis=MODE (one build under two settings: HEAD,HEAD+log; the embedded path against PostgreSQL and Redis: HEAD,HEAD+storage=postgres+redis=private), interleaved round by round (A B, B A, …) for -runs rounds, each run on a fresh server and store, and print each side's medians and B/A: the A/B of a change to the hot path")
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
	fs.BoolVar(&o.log, "log", false, "turn weir's verifiable log on (transparency.enabled) and report each run's integration lag p99; a -compare side named REV+log runs with it on; with -populate, fill the log too (an issuance entry per certificate, origin "+populateLogOrigin+")")
	fs.BoolVar(&o.countPG, "count-pg", false, "with -storage postgres: put a counting proxy between the replicas and PostgreSQL and report each run's round trips and statements per certificate, by statement (the proxy's hop costs time: count with it, time without it)")
	fs.StringVar(&o.nonces, "nonces", "", "weir's acme.nonces.backend: auto, memory, redis or postgres (default: weir's own, auto: PostgreSQL's with -storage postgres, else Redis's when there is a Redis); a -compare side REV+nonces=BACKEND sets it for that side")
	fs.StringVar(&o.rateLimits, "ratelimits", "off", "weir's rate limits: off (all disabled), high (all enabled, never reached: measures the limiter), default (weir's defaults with loopback whitelisted, the limits enabled by default at values never reached), server (weir's defaults)")
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
	fs.IntVar(&o.populateShards, "crl-shards", 0, "with -populate: put each certificate in CRL shard 1 + (serial mod `N`), as weir with ca.crl-shards N does (0: shard 0, as before sharding)")
	fs.StringVar(&o.postgresSchema, "postgres-schema", "", "with -storage postgres: the `schema` -populate fills (created if missing), or an existing one a load run uses and keeps")
	fs.IntVar(&o.fleet, "fleet", 0, "run a fleet of `N` simulated ARI clients, each holding a certificate for its own name cNNNN.fleet.test and renewing it at a random time of its renewalInfo window with replaces, against a weir on SQLite with short lifetimes and the loopback whitelisted; print a per-minute table (clients on A and B, renewals, 429s by limit, lapses, certs/min against the limits) and a summary")
	fs.IntVar(&o.fleetPerAccount, "fleet-per-account", 1, "with -fleet: clients sharing one ACME account")
	fs.DurationVar(&o.fleetLifetime, "fleet-lifetime", 10*time.Minute, "with -fleet: ca.certificate-lifetime (ca.backdate is the lesser of 1m and half of it)")
	fs.DurationVar(&o.fleetRamp, "fleet-ramp", time.Minute, "with -fleet: the first certificates are asked for evenly over this long")
	fs.DurationVar(&o.fleetSteady, "fleet-steady", 5*time.Minute, "with -fleet: how long the fleet runs after the ramp (with -drill: before step 1)")
	fs.StringVar(&o.fleetLimits, "fleet-limits", "default", "with -fleet: the account limits, default (weir's), or tight: orders and SAN budget an hour per account 1.25 times the renewals the fleet's steady state asks of it (tight=F: F times)")
	fs.IntVar(&o.fleetMaxRenewals, "fleet-max-renewals", 0, "with -fleet: acme.renewal-info.max-renewals-per-hour, the planner's ceiling for the whole CA (0: weir's default)")
	fs.DurationVar(&o.fleetMax, "fleet-max", 2*time.Hour, "with -fleet: hard bound on the run after the accounts are registered")
	fs.BoolVar(&o.fleetTrace, "fleet-trace", false, "with -fleet: log every decision of the first client (c0000) to stderr: each renewalInfo answer, the time it chose, its renewals and 429s")
	fs.BoolVar(&o.drill, "drill", false, "with -fleet: after the steady state, rotate the intermediate as docs/operations.md says (step 1: weir ca new-intermediate-key, sign-intermediate with the data dir's root key, add-issuer -id b, ca.issuers and ca.active-issuer: b, restart; step 2: renew-early on ca.intermediate, reloaded live) and run until every client holds a certificate of B or A's deadline passes; exit 1 unless 0 lapsed, 0 refusals with a Retry-After past expiry and every client on B before A's deadline")
	fs.DurationVar(&o.drillStep2After, "drill-step2-after", 30*time.Second, "with -drill: the time between step 1 (the restart) and step 2 (renew-early)")
	fs.DurationVar(&o.drillGrace, "drill-grace", time.Minute, "with -drill: how long past A's deadline the fleet runs when not every client is on B")
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
	if *compare != "" {
		if o.compare = strings.Split(*compare, ","); len(o.compare) != 2 || o.compare[0] == "" || o.compare[1] == "" {
			return nil, errors.New("-compare: two builds, A,B (binaries or git revisions)")
		}
		if o.weir != "" || o.dataDir != "" || o.cpuProfile != "" || o.probe || o.populate > 0 || o.keep || o.postgresSchema != "" {
			return nil, errors.New("-compare runs each build on a fresh server and store: it does not go with -weir, -data, -cpuprofile, -probe, -populate, -keep or -postgres-schema")
		}
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
	}
	if err := checkSide(*o); err != nil {
		return nil, err
	}
	if err := checkRedis(o.redis); err != nil {
		return nil, fmt.Errorf("-%w", err)
	}
	if o.nonces != "" {
		if err := checkNonces(o.nonces); err != nil {
			return nil, fmt.Errorf("-%w", err)
		}
	}
	if _, ok := rateLimitBlocks[o.rateLimits]; !ok {
		return nil, fmt.Errorf("-ratelimits: %q is not off, high, default or server", o.rateLimits)
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
	case o.populateShards < 0 || o.populateShards > 1024:
		return nil, errors.New("-crl-shards: between 0 and 1024")
	case o.populate > 0 && (o.populateSpan <= 0 || o.populateLifetime <= 0):
		return nil, errors.New("-populate-span and -populate-lifetime: positive durations")
	case o.postgresSchema != "" && !validSchema.MatchString(o.postgresSchema):
		return nil, fmt.Errorf("-postgres-schema: %q: lower-case letters, digits and _ only", o.postgresSchema)
	}
	if err := checkPeerFlags(o); err != nil {
		return nil, err
	}
	if err := checkFleetFlags(o); err != nil {
		return nil, err
	}
	return o, nil
}

// parseFleetLimits reads -fleet-limits: default, tight (factor 1.25) or
// tight=F.
func parseFleetLimits(o *options) bool {
	mode, f, hasF := strings.Cut(o.fleetLimits, "=")
	o.fleetTightFactor = 1.25
	switch {
	case mode == "default" && !hasF:
		return true
	case mode != "tight":
		return false
	case hasF:
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || !(v > 0) || v > 1000 {
			return false
		}
		o.fleetTightFactor = v
	}
	o.fleetLimits = "tight"
	return true
}

// checkFleetFlags checks the flags of -fleet and -drill.
func checkFleetFlags(o *options) error {
	if o.fleet == 0 {
		if o.drill {
			return errors.New("-drill needs -fleet N")
		}
		return nil
	}
	switch {
	case o.fleet < 1 || o.fleet > 100_000:
		return errors.New("-fleet: between 1 and 100000")
	case o.fleetPerAccount < 1 || o.fleetPerAccount > o.fleet:
		return errors.New("-fleet-per-account: between 1 and -fleet")
	case o.fleetLifetime < 2*time.Minute:
		return errors.New("-fleet-lifetime: at least 2m")
	case o.fleetRamp < 0 || o.fleetSteady < 0 || o.drillStep2After < 0 || o.drillGrace < 0:
		return errors.New("-fleet-ramp, -fleet-steady, -drill-step2-after and -drill-grace: 0 or more")
	case o.fleetMax <= 0:
		return errors.New("-fleet-max: a positive duration")
	case !parseFleetLimits(o):
		return fmt.Errorf("-fleet-limits: %q is not default, tight or tight=F (F a positive factor)", o.fleetLimits)
	case o.fleetMaxRenewals < 0:
		return errors.New("-fleet-max-renewals: 0 or more")
	case o.storage != "sqlite" || o.replicas != 1 || len(o.compare) > 0 || o.populate > 0:
		return errors.New("-fleet runs one weir on SQLite: it does not go with -storage postgres, -replicas, -compare or -populate")
	}
	return nil
}
