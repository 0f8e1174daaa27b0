// SPDX-License-Identifier: Apache-2.0

package ha_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weir-pki/weir/internal/dnstest"
	"github.com/weir-pki/weir/internal/weirproc"
)

// challengeTimeout is every replica's challenges.timeout.
const challengeTimeout = 2 * time.Second

// validationLease is the lease of a validation job with challengeTimeout:
// server/server.go makes the validation timeout challenges.timeout + 5 s
// and acme.Config.setDefaults makes the lease twice that.
const validationLease = 2 * (challengeTimeout + 5*time.Second)

// claimInterval is how often a replica claims validation jobs whose lease
// ended (acme.Config.ClaimInterval's default).
const claimInterval = 5 * time.Second

// Every replica's rate-limiting.backend-timeout is 1 s, twice the
// default: on a 2-core machine, with three replicas, Redis and the
// clients on it, a burst of 60 concurrent new-orders makes Redis answers
// slow, and on-backend-error: allow admits the requests it could not
// decide (with the former default of 50 ms, TestOvershootAcrossReplicas
// saw 11 of 60 admitted against a burst of 5, each logged as "rate
// limiter backend error"). The tests check that the shared limiter is
// exact when it decides; backendErrors reports every undecided request.

// loadLimits is a rate-limiting block for load: every limit on, in the
// shared backend, and far from the load's needs. The global layer is off:
// it is in-process per replica by design and keyed by the client IP,
// which is 127.0.0.1 for every client here.
const loadLimits = `  global: { enabled: false }
  account-creation: { enabled: true, per-ip-per-hour: 1000, burst: 200 }
  order-creation: { enabled: true, orders-per-account-per-hour: 100000, order-burst: 10000, san-budget-per-account-per-hour: 100000 }
  duplicate-certificate: { enabled: true, max-per-window: 5, window: 168h }
  failed-validation: { enabled: true, max-per-window: 5, window: 1h }
  pending-authorizations: { enabled: true, max: 1000 }
`

// clusterOpts shape a set of replicas.
type clusterOpts struct {
	// dsn is the PostgreSQL store of every replica.
	dsn string
	// redis holds the limiter's buckets and the nonces.
	redis *redisServer
	// limits is the body of the rate-limiting block (indented by two
	// spaces) after backend, redis and on-backend-error; loadLimits
	// when empty.
	limits string
	// trustProxies sets server.trusted-proxies to loopback, so that a
	// client's X-Forwarded-For picks its IP bucket.
	trustProxies bool
	// transparency turns the verifiable log on, integrating every 200 ms.
	transparency bool
}

// cluster is three weir replicas on one PostgreSQL store and one Redis,
// with the DNS server and http-01 responder they validate against, and
// the client side: a round-robin dialer over the replicas and a recorder
// of every response.
type cluster struct {
	t        *testing.T
	bin      string
	opts     clusterOpts
	listens  []string
	dataDirs []string
	procs    []*weirproc.Proc
	base     string // replica 1's base URL, every replica's external-url
	roots    *x509.CertPool
	rr       *weirproc.RoundRobin
	dns      *dnstest.Server
	resp     *responder
	db       *pgxpool.Pool
	rec      *recorder
	lb       *http.Client // every request to the next replica, recorded
}

// startCluster starts three replicas: replica 1 first, which makes the
// CA in its data directory, then the other two with that CA copied in
// (weirproc.SeedCA) and the same configuration but for data-dir and
// server.listen.
func startCluster(t *testing.T, o clusterOpts) *cluster {
	t.Helper()
	bin := builder.Binary(t)
	cl := &cluster{t: t, bin: bin, opts: o, rec: &recorder{}}

	var err error
	cl.dns, err = dnstest.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.dns.Close() })
	cl.dns.SetDefaultAddrs(netip.MustParseAddr("127.0.0.1"))

	cl.resp = newResponder(o.dsn)
	t.Cleanup(cl.resp.close)
	httpLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: cl.resp, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(httpLn)
	t.Cleanup(func() { hs.Close() })
	httpPort := httpLn.Addr().(*net.TCPAddr).Port

	root := t.TempDir()
	if cl.listens, err = weirproc.FreeAddrs(3); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		cl.dataDirs = append(cl.dataDirs, filepath.Join(root, fmt.Sprintf("replica%d", i+1)))
	}
	cl.base = "https://" + cl.listens[0]

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	for i := range 3 {
		if i > 0 {
			if err := weirproc.SeedCA(cl.dataDirs[0], cl.dataDirs[i]); err != nil {
				t.Fatal(err)
			}
		}
		p, err := weirproc.Start(ctx, weirproc.Options{
			Bin: bin, DataDir: cl.dataDirs[i], Listen: cl.listens[i],
			Config:       cl.config(i, httpPort),
			ReadyTimeout: 90 * time.Second,
		})
		if err != nil {
			t.Fatalf("starting replica %d: %v", i+1, err)
		}
		cl.procs = append(cl.procs, p)
		t.Cleanup(func() {
			select {
			case <-p.Exited(): // killed by the test
			default:
				if err := p.Stop(20 * time.Second); err != nil {
					t.Errorf("stopping replica %d (pid %d): %v", i+1, p.PID, err)
				}
			}
			if t.Failed() {
				t.Logf("the log of replica %d (pid %d), last lines:\n%s", i+1, p.PID, p.Tail(12))
			}
		})
	}
	cl.roots = cl.procs[0].Roots
	cl.rr = &weirproc.RoundRobin{Addrs: append([]string(nil), cl.listens...)}
	cl.lb = cl.client(cl.rr.DialContext, "")

	cl.db, err = pgxpool.New(t.Context(), o.dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.db.Close)
	t.Logf("replicas %v (pids %d %d %d), lease of a validation %s", cl.listens, cl.procs[0].PID, cl.procs[1].PID, cl.procs[2].PID, validationLease)
	return cl
}

// config is replica i's configuration: identical for all but data-dir
// and server.listen.
func (cl *cluster) config(i, httpPort int) string {
	o := cl.opts
	limits := o.limits
	if limits == "" {
		limits = loadLimits
	}
	proxies := "[]"
	if o.trustProxies {
		proxies = `["127.0.0.1"]`
	}
	return fmt.Sprintf(`data-dir: %q
server:
  listen: %q
  external-url: %q
  http: { listen: "" }
  trusted-proxies: %s
acme:
  nonces: { backend: redis }
challenges:
  http-01: { enabled: true, port: %d }
  dns-resolver: %q
  timeout: %s
storage:
  driver: postgres
  dsn: %q
  max-conns: 6
rate-limiting:
  backend: redis
  redis: { addrs: [%q] }
  on-backend-error: allow
  backend-timeout: 1s
%sadmin:
  enabled: false
log:
  level: warn
%s`, cl.dataDirs[i], cl.listens[i], cl.base, proxies, httpPort, cl.dns.Addr(), challengeTimeout, o.dsn, o.redis.addr(), limits, transparencyBlock(o.transparency))
}

// transparencyBlock is the transparency block of a cluster whose log is
// on, "" otherwise.
func transparencyBlock(on bool) string {
	if !on {
		return ""
	}
	return "transparency:\n  enabled: true\n  interval: 200ms\n"
}

// client returns an HTTP client that trusts weir's root, opens a new
// connection for every request through dial, sets X-Forwarded-For when
// xff is not empty, and records every response in cl.rec.
func (cl *cluster) client(dial func(ctx context.Context, network, addr string) (net.Conn, error), xff string) *http.Client {
	tr := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: cl.roots},
		DialContext:         dial,
		DisableKeepAlives:   true,
		TLSHandshakeTimeout: 10 * time.Second,
	}
	cl.t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Timeout: 30 * time.Second, Transport: &recordingTransport{base: tr, rec: cl.rec, xff: xff}}
}

// direct returns a recorded HTTP client that reaches replica i only.
func (cl *cluster) direct(i int) *http.Client {
	addr := cl.listens[i]
	return cl.client(func(ctx context.Context, network, _ string) (net.Conn, error) {
		d := &net.Dialer{Timeout: 5 * time.Second}
		return d.DialContext(ctx, network, addr)
	}, "")
}

// alive fails the test for every replica but those in dead that has
// exited, and for one whose PID changed.
func (cl *cluster) alive(t *testing.T, pids []int, dead ...int) {
	t.Helper()
	for i, p := range cl.procs {
		if contains(dead, i) {
			continue
		}
		select {
		case <-p.Exited():
			t.Errorf("replica %d (pid %d) exited: %v\n%s", i+1, p.PID, p.Err(), p.Tail(30))
		default:
		}
		if pids != nil && pids[i] != p.PID {
			t.Errorf("replica %d runs as pid %d, was %d: it was restarted", i+1, p.PID, pids[i])
		}
	}
}

func (cl *cluster) pids() []int {
	var out []int
	for _, p := range cl.procs {
		out = append(out, p.PID)
	}
	return out
}

// dials reports the connections made to each replica through cl.rr.
func (cl *cluster) dials() []int64 {
	d := cl.rr.Dials()
	out := make([]int64, len(cl.listens))
	for i, a := range cl.listens {
		out[i] = d[a]
	}
	return out
}

// replicaOf returns the replica number (1-based) of a listener address,
// 0 when unknown.
func (cl *cluster) replicaOf(addr string) int {
	for i, a := range cl.listens {
		if a == addr {
			return i + 1
		}
	}
	return 0
}

func contains(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// responder answers http-01 challenges from tokens. While held names an
// owner, it holds the requests for tokens of challenges in processing
// leased to that owner (looked up in the store) until the hold ends or
// the validating process goes away: a validation caught in the middle on
// one replica, while the others validate as usual.
type responder struct {
	tokens sync.Map // token -> key authorization
	paused sync.Map // token -> chan struct{}, closed to answer
	dsn    string

	mu      sync.Mutex
	db      *pgxpool.Pool
	owner   string        // "" when nothing is held
	release chan struct{} // closed when the hold ends
	held    atomic.Int64  // requests held now
}

func newResponder(dsn string) *responder {
	return &responder{dsn: dsn, release: make(chan struct{})}
}

func (r *responder) set(token, ka string) { r.tokens.Store(token, ka) }

// pause holds the validation requests for token until the returned
// function is called.
func (r *responder) pause(token string) (resume func()) {
	ch := make(chan struct{})
	r.paused.Store(token, ch)
	var once sync.Once
	return func() { once.Do(func() { r.paused.Delete(token); close(ch) }) }
}

// hold starts holding the validations of owner's challenges.
func (r *responder) hold(ctx context.Context, owner string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.db == nil {
		db, err := pgxpool.New(ctx, r.dsn)
		if err != nil {
			return err
		}
		r.db = db
	}
	r.owner, r.release = owner, make(chan struct{})
	return nil
}

// unhold lets every held request go and answers all at once again.
func (r *responder) unhold() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.owner != "" {
		close(r.release)
		r.owner = ""
	}
}

func (r *responder) close() {
	r.unhold()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.db != nil {
		r.db.Close()
		r.db = nil
	}
}

func (r *responder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	token := strings.TrimPrefix(req.URL.Path, "/.well-known/acme-challenge/")
	v, ok := r.tokens.Load(token)
	if !ok {
		http.NotFound(w, req)
		return
	}
	if ch, ok := r.paused.Load(token); ok {
		select {
		case <-ch.(chan struct{}):
		case <-req.Context().Done():
			return
		case <-time.After(time.Minute):
		}
	}
	r.mu.Lock()
	owner, release, db := r.owner, r.release, r.db
	r.mu.Unlock()
	if owner != "" && db != nil {
		ctx, cancel := context.WithTimeout(req.Context(), time.Second)
		var id string
		err := db.QueryRow(ctx, `SELECT id FROM challenges WHERE token = $1 AND status = 'processing' AND lease_owner = $2`, token, owner).Scan(&id)
		cancel()
		if err == nil {
			r.held.Add(1)
			select {
			case <-release:
			case <-req.Context().Done(): // the validating replica went away
			case <-time.After(2 * time.Minute):
			}
			r.held.Add(-1)
			if req.Context().Err() != nil {
				return
			}
		}
	}
	io.WriteString(w, v.(string))
}

// backendErrors counts the "rate limiter backend error" lines of each
// replica's log: requests the limiter could not decide, which
// on-backend-error: allow admitted.
func (cl *cluster) backendErrors() []int {
	var out []int
	for _, p := range cl.procs {
		b, _ := os.ReadFile(p.LogPath)
		out = append(out, strings.Count(string(b), "rate limiter backend error"))
	}
	return out
}
