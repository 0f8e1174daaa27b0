// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weir-pki/weir/internal/pgcount"
	"github.com/weir-pki/weir/internal/weirproc"
	"github.com/weir-pki/weir/storage/postgres/pgschema"
)

// serverOptions are what the load tool puts into one replica's config.
type serverOptions struct {
	bin, dataDir, dnsAddr string
	httpPort              int
	pprof                 bool
	validationWorkers     int
	rateLimits            string // a key of rateLimitBlocks
	externalURL           string // server.external-url; "" for replica 1
	postgresDSN           string // storage driver postgres with this DSN; "": SQLite
	redisAddr             string // the limiter on this Redis (the nonces too when nonces says redis); "": none
	nonces                string // acme.nonces.backend; "": weir's default
	log                   bool   // transparency.enabled: the verifiable log on
}

// rateLimitBlocks are the rate-limiting: config blocks of -ratelimits.
// "off" disables every limit, "high" enables every limit with values no
// load run reaches (to measure the limiter's cost), "server" keeps weir's
// defaults (which refuse a load test within seconds).
var rateLimitBlocks = map[string]string{
	"off": `rate-limiting:
  global: { enabled: false }
  account-creation: { enabled: false }
  order-creation: { enabled: false }
  duplicate-certificate: { enabled: false }
  failed-validation: { enabled: false }
  pending-authorizations: { enabled: false }
  registered-domain: { enabled: false }
`,
	"high": `rate-limiting:
  global: { enabled: true, requests-per-minute: 6000000, burst: 1000000 }
  account-creation: { enabled: true, per-ip-per-hour: 1000000000, burst: 100000000 }
  order-creation: { enabled: true, orders-per-account-per-hour: 1000000000, order-burst: 100000000, san-budget-per-account-per-hour: 1000000000 }
  duplicate-certificate: { enabled: true, max-per-window: 1000000000, window: 168h }
  failed-validation: { enabled: true, max-per-window: 1000000000, window: 1h }
  pending-authorizations: { enabled: true, max: 1000000000 }
  registered-domain: { enabled: true, max-per-window: 1000000000, window: 168h }
`,
	// weir's defaults as a load from loopback meets them when the
	// operator whitelists it: the IP-keyed limits (global,
	// account-creation) bypassed, the others enabled as by default
	// (registered-domain off) at values never reached.
	"default": `rate-limiting:
  whitelist: ["127.0.0.0/8", "::1/128"]
  order-creation: { enabled: true, orders-per-account-per-hour: 1000000000, order-burst: 100000000, san-budget-per-account-per-hour: 1000000000 }
  duplicate-certificate: { enabled: true, max-per-window: 1000000000, window: 168h }
  failed-validation: { enabled: true, max-per-window: 1000000000, window: 1h }
  pending-authorizations: { enabled: true, max: 1000000000 }
`,
	"server": "",
}

// serverConfig is the YAML of one replica listening on listen, with its
// admin listener on admin (a free port: several replicas, or another weir
// on the machine, must not collide on the default 127.0.0.1:14001) and
// no plain-HTTP listener.
func serverConfig(o serverOptions, listen, admin string) string {
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "data-dir: %q\n", o.dataDir)
	fmt.Fprintf(&cfg, "server:\n  listen: %q\n", listen)
	if o.externalURL != "" {
		fmt.Fprintf(&cfg, "  external-url: %q\n", o.externalURL)
	}
	// No plain-HTTP listener: the load needs no CRL over HTTP, and
	// several replicas would collide on its default port.
	cfg.WriteString("  http: { listen: \"\" }\n")
	fmt.Fprintf(&cfg, "admin:\n  listen: %q\n", admin)
	// No -nonces: weir's own default (auto), the nonces an operator gets:
	// PostgreSQL's on PostgreSQL, else Redis's when the limiter is on it.
	nonces := o.nonces
	if o.validationWorkers > 0 || nonces != "" {
		cfg.WriteString("acme:\n")
		if o.validationWorkers > 0 {
			fmt.Fprintf(&cfg, "  validation-workers: %d\n", o.validationWorkers)
		}
		if nonces != "" {
			fmt.Fprintf(&cfg, "  nonces: { backend: %s }\n", nonces)
		}
	}
	fmt.Fprintf(&cfg, "challenges:\n  http-01:\n    port: %d\n  dns-resolver: %q\n", o.httpPort, o.dnsAddr)
	if o.postgresDSN != "" {
		fmt.Fprintf(&cfg, "storage:\n  driver: postgres\n  dsn: %q\n", o.postgresDSN)
	}
	fmt.Fprintf(&cfg, "log:\n  level: warn\n")
	if o.log {
		cfg.WriteString("transparency:\n  enabled: true\n")
	}
	rl := rateLimitBlocks[o.rateLimits]
	if o.redisAddr != "" {
		if rl == "" {
			rl = "rate-limiting:\n"
		}
		rl += fmt.Sprintf("  backend: redis\n  redis: { addrs: [%q] }\n", o.redisAddr)
	}
	cfg.WriteString(rl)
	return cfg.String()
}

// replica is one weir server of the cluster.
type replica struct {
	*weirproc.Proc
	pprofAddr string // "" unless started with -pprof
	adminAddr string // host:port of its admin listener (plain HTTP)
}

// startServer starts one replica; a weir that predates the rate-limiting:
// block (its strict config parser refuses the key) is started again
// without it when -ratelimits is off, since it has no limits to switch
// off. It returns the -ratelimits mode in effect.
func startServer(ctx context.Context, o serverOptions) (*replica, string, error) {
	r, err := startServerOnce(ctx, o)
	if err != nil && o.rateLimits == "off" && o.redisAddr == "" && strings.Contains(err.Error(), "field rate-limiting not found") {
		o.rateLimits = "server"
		if r, err = startServerOnce(ctx, o); err == nil {
			return r, "none (this weir has no rate limiting)", nil
		}
	}
	return r, o.rateLimits, err
}

// startServerOnce writes the config into the data dir, starts weir serve
// and waits until its directory answers over HTTPS with its root.
func startServerOnce(ctx context.Context, o serverOptions) (*replica, error) {
	addrs, err := weirproc.FreeAddrs(3) // distinct: ACME, admin, pprof
	if err != nil {
		return nil, err
	}
	listen, admin := addrs[0], addrs[1]
	r := &replica{adminAddr: admin}
	var args []string
	if o.pprof {
		r.pprofAddr = addrs[2]
		args = append(args, "-pprof", r.pprofAddr)
	}
	r.Proc, err = weirproc.Start(ctx, weirproc.Options{
		Bin: o.bin, DataDir: o.dataDir, Listen: listen, Args: args,
		Config: serverConfig(o, listen, admin),
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// cluster is the weir replicas under load and the stores they share.
type cluster struct {
	replicas   []*replica
	rateLimits string               // the -ratelimits mode in effect
	storage    string               // sqlite, or postgres with the schema's name
	redisMode  string               // what -redis came to
	rr         *weirproc.RoundRobin // the client's balancer; nil for one replica
	pg         *pgschema.Schema     // nil for SQLite
	pgc        *pgcount.Proxy       // -count-pg's counter in front of PostgreSQL, or nil
	redis      *weirproc.Redis      // a private redis-server, or nil
	log        *adminClient         // replica 1's admin API when the verifiable log is on
	peer       *peerServer          // a peer CA (peer.go) as the one replica, or nil
}

// clusterOptions are the flags that shape the cluster.
type clusterOptions struct {
	server   serverOptions // the first replica's; the others' derive from it
	replicas int
	dataDirs []string // one per replica
}

// startCluster starts replica 1 (which makes the CA), gives the others
// its CA and starts them with its external URL, one after the other (the
// first runs the database migrations alone).
func startCluster(ctx context.Context, cl *cluster, o clusterOptions, stderr io.Writer) error {
	so := o.server
	so.dataDir = o.dataDirs[0]
	first, mode, err := startServer(ctx, so)
	if err != nil {
		return fmt.Errorf("replica 1: %w", err)
	}
	cl.replicas = append(cl.replicas, first)
	cl.rateLimits = mode
	logf(stderr, "replica 1: weir pid %d at %s (data %s)", first.PID, first.Base, first.DataDir)
	for i := 2; i <= o.replicas; i++ {
		so := o.server
		so.dataDir, so.externalURL, so.pprof = o.dataDirs[i-1], first.Base, false
		if strings.HasPrefix(mode, "none") {
			so.rateLimits = "server"
		}
		if err := weirproc.SeedCA(first.DataDir, so.dataDir); err != nil {
			return err
		}
		r, _, err := startServer(ctx, so)
		if err != nil {
			return fmt.Errorf("replica %d: %w", i, err)
		}
		cl.replicas = append(cl.replicas, r)
		logf(stderr, "replica %d: weir pid %d at %s (data %s)", i, r.PID, r.Listen, r.DataDir)
	}
	if o.replicas > 1 {
		addrs := make([]string, len(cl.replicas))
		for i, r := range cl.replicas {
			addrs[i] = r.Listen
		}
		cl.rr = &weirproc.RoundRobin{Addrs: addrs}
	}
	return nil
}

// stop stops every replica (in parallel, SIGTERM then SIGKILL after
// grace), then the private Redis.
func (cl *cluster) stop(grace time.Duration) error {
	errs := make([]error, len(cl.replicas))
	var wg sync.WaitGroup
	for i, r := range cl.replicas {
		wg.Go(func() {
			if err := r.Stop(grace); err != nil {
				errs[i] = fmt.Errorf("replica %d (pid %d): %w", i+1, r.PID, err)
			}
		})
	}
	wg.Wait()
	cl.replicas = nil
	if cl.redis != nil {
		errs = append(errs, cl.redis.Stop(10*time.Second))
		cl.redis = nil
	}
	return errors.Join(errs...)
}

// first is replica 1: its base is every replica's external URL, its
// root.pem every replica's root, and only it runs pprof.
func (cl *cluster) first() *replica { return cl.replicas[0] }

// serverTicks is the CPU time of every replica, in clock ticks.
func (cl *cluster) serverTicks() int64 { return sumTicks(cl.replicaTicks()) }

// sumTicks is the sum of replicaTicks.
func sumTicks(ticks []int64) int64 {
	var sum int64
	for _, n := range ticks {
		sum += n
	}
	return sum
}

// replicaTicks is each replica's CPU in clock ticks (0 for one that could
// not be read).
func (cl *cluster) replicaTicks() []int64 {
	ticks := make([]int64, len(cl.replicas))
	for i, r := range cl.replicas {
		if n, err := r.CPUTicks(); err == nil {
			ticks[i] = n
		}
	}
	return ticks
}

// serverKB sums a /proc status value (VmRSS, VmHWM) over the replicas.
func (cl *cluster) serverKB(key string) int64 {
	var sum int64
	for _, r := range cl.replicas {
		if n, err := r.StatusKB(key); err == nil {
			sum += n
		}
	}
	return sum
}

// storeTicks is the CPU time, per PID, of the store processes working for
// the replicas: the PostgreSQL backends of the schema, PostgreSQL's own
// processes (WAL writer, checkpointer, ...: shared with the server's other
// users) and the private redis-server. SQLite runs inside weir: nothing.
func (cl *cluster) storeTicks(ctx context.Context) map[int]int64 {
	out := map[int]int64{}
	if cl.pg != nil {
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		ours, aux, err := cl.pg.BackendPIDs(qctx)
		cancel()
		if err == nil {
			for _, pid := range append(ours, aux...) {
				if n, err := weirproc.ProcCPU(strconv.Itoa(pid)); err == nil {
					out[pid] = n
				}
			}
		}
	}
	if cl.redis != nil {
		if n, err := cl.redis.CPUTicks(); err == nil {
			out[cl.redis.PID] = n
		}
	}
	return out
}

// ticksBetween is the CPU the store processes used between two
// storeTicks: a process that appeared counts whole, one that ended is
// lost.
func ticksBetween(before, after map[int]int64) int64 {
	var sum int64
	for pid, n := range after {
		if d := n - before[pid]; d > 0 {
			sum += d
		}
	}
	return sum
}

// startRedis resolves -redis: auto starts a private redis-server when
// there are several replicas and the binary exists, private always starts
// one, none uses none, anything else is the address of a running Redis.
// It returns the address ("" for none) and sets cl.redis and cl.redisMode.
func startRedis(ctx context.Context, cl *cluster, mode string, replicas int, dir string, stderr io.Writer) (string, error) {
	switch mode {
	case "none":
		cl.redisMode = "none"
		return "", nil
	case "auto", "private":
		if mode == "auto" && replicas < 2 {
			cl.redisMode = "none (auto, one replica)"
			return "", nil
		}
		r, err := weirproc.StartRedis(ctx, dir)
		if errors.Is(err, exec.ErrNotFound) && mode == "auto" {
			cl.redisMode = "none (auto: no redis-server on PATH)"
			logf(stderr, "no redis-server on PATH: the limiter stays per replica and nonces go to the store")
			return "", nil
		}
		if err != nil {
			return "", err
		}
		cl.redis = r
		cl.redisMode = fmt.Sprintf("private redis-server %s", r.Addr)
		logf(stderr, "redis-server pid %d at %s", r.PID, r.Addr)
		return r.Addr, nil
	}
	cl.redisMode = mode
	return mode, nil
}

// replicaDataDirs names the data directories: base for replica 1 and
// base-rN for replica N.
func replicaDataDirs(base string, n int) []string {
	dirs := []string{base}
	for i := 2; i <= n; i++ {
		dirs = append(dirs, base+"-r"+strconv.Itoa(i))
	}
	return dirs
}

// stallDumps saves every replica's goroutines; replica 1's goes to dest,
// replica N's to dest with -rN before the extension.
func (cl *cluster) stallDumps(dest string) []string {
	var out []string
	ext := filepath.Ext(dest)
	for i, r := range cl.replicas {
		d := dest
		if i > 0 {
			d = strings.TrimSuffix(dest, ext) + "-r" + strconv.Itoa(i+1) + ext
		}
		out = append(out, r.DumpGoroutines(d, r.pprofAddr))
	}
	return out
}
