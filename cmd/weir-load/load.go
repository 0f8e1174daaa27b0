// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	xacme "golang.org/x/crypto/acme"
)

// responder is the http-01 server that weir validates against: it serves
// the key authorizations the workers put into keyAuths.
type responder struct {
	keyAuths sync.Map // token -> key authorization
	hits     atomic.Int64
	srv      *http.Server
	port     int
}

const challengePrefix = "/.well-known/acme-challenge/"

func startResponder() (*responder, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &responder{port: ln.Addr().(*net.TCPAddr).Port}
	r.srv = &http.Server{
		Handler:           r,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       30 * time.Second,
	}
	go r.srv.Serve(ln)
	return r, nil
}

func (r *responder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.hits.Add(1)
	token, ok := strings.CutPrefix(req.URL.Path, challengePrefix)
	if !ok {
		http.NotFound(w, req)
		return
	}
	v, ok := r.keyAuths.Load(token)
	if !ok {
		http.NotFound(w, req)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = w.Write([]byte(v.(string)))
}

func (r *responder) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.srv.Shutdown(ctx)
}

// countingTransport counts requests and the protocol each response came
// back on (HTTP/1.1 or HTTP/2.0).
type countingTransport struct {
	rt       http.RoundTripper
	requests atomic.Int64
	mu       sync.Mutex
	protos   map[string]int64
}

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.requests.Add(1)
	res, err := t.rt.RoundTrip(req)
	if err == nil {
		t.mu.Lock()
		t.protos[res.Proto]++
		t.mu.Unlock()
	}
	return res, err
}

func (t *countingTransport) protocols() map[string]int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]int64, len(t.protos))
	for k, v := range t.protos {
		out[k] = v
	}
	return out
}

// newHTTPClient is the one client every worker shares: keep-alive, enough
// idle connections per host for every worker, HTTP/2 only when asked. A
// non-nil dial replaces the dialer (weirproc.RoundRobin with several
// replicas: the URLs name replica 1, each new connection goes to the next
// replica).
func newHTTPClient(roots *x509.CertPool, maxConns int, h2 bool, dial func(ctx context.Context, network, addr string) (net.Conn, error)) (*http.Client, *countingTransport) {
	if dial == nil {
		dial = (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         dial,
		TLSClientConfig:     &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConns:        maxConns + 16,
		MaxIdleConnsPerHost: maxConns + 16,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   h2,
	}
	ct := &countingTransport{rt: tr, protos: map[string]int64{}}
	return &http.Client{Transport: ct, Timeout: 30 * time.Second}, ct
}

// newAccounts registers n ACME accounts, one per worker, a few at a time.
func newAccounts(ctx context.Context, n int, dirURL string, hc *http.Client) ([]*xacme.Client, error) {
	clients := make([]*xacme.Client, n)
	errs := make([]error, n)
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			if err != nil {
				errs[i] = err
				return
			}
			c := &xacme.Client{Key: key, DirectoryURL: dirURL, HTTPClient: hc, UserAgent: "weir-load"}
			if _, err := c.Register(ctx, &xacme.Account{}, xacme.AcceptTOS); err != nil {
				errs[i] = fmt.Errorf("registering account %d: %w", i, err)
				return
			}
			clients[i] = c
		})
	}
	wg.Wait()
	return clients, errors.Join(errs...)
}

// levelSpec says how long one level runs.
type levelSpec struct {
	concurrency int
	count       int           // certificates to issue (0: run for duration)
	duration    time.Duration // used when count is 0
	maxTime     time.Duration // hard bound on the level
	stall       time.Duration // no certificate for this long is a stall
	tag         string        // makes the names of this level unique
}

// levelOutcome is what the workers measured.
type levelOutcome struct {
	certs     int
	errors    int
	errKinds  map[string]int
	latencies []time.Duration
	elapsed   time.Duration
	stalled   bool
	stallNote string
}

// loader runs levels against one server.
type loader struct {
	clients []*xacme.Client
	resp    *responder
	verify  *x509.CertPool // roots for a sampled chain check
}

// runLevel runs spec.concurrency workers, each on its own account, until
// the count or duration is reached, watching for stalls.
func (l *loader) runLevel(parent context.Context, spec levelSpec) levelOutcome {
	ctx, cancel := context.WithTimeout(parent, spec.maxTime)
	defer cancel()

	var (
		issued   atomic.Int64 // certificates claimed (count mode)
		lastDone atomic.Int64 // unix nanos of the last completed certificate
		mu       sync.Mutex
		out      = levelOutcome{errKinds: map[string]int{}}
		stalled  atomic.Bool
	)
	start := time.Now()
	lastDone.Store(start.UnixNano())
	deadline := start.Add(spec.duration)

	more := func() bool {
		if ctx.Err() != nil {
			return false
		}
		if spec.count > 0 {
			return issued.Add(1) <= int64(spec.count)
		}
		return time.Now().Before(deadline)
	}

	// The stall watch: no certificate completing for spec.stall.
	watchDone := make(chan struct{})
	go func() {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-watchDone:
				return
			case <-t.C:
				if since := time.Since(time.Unix(0, lastDone.Load())); since > spec.stall {
					stalled.Store(true)
					mu.Lock()
					out.stallNote = fmt.Sprintf("no certificate completed for %s at concurrency %d", since.Round(time.Millisecond), spec.concurrency)
					mu.Unlock()
					cancel()
					return
				}
			}
		}
	}()

	var wg sync.WaitGroup
	for w := range spec.concurrency {
		c := l.clients[w]
		wg.Go(func() {
			for i := 0; more(); i++ {
				name := fmt.Sprintf("w%d-i%d.%s.load.test", w, i, spec.tag)
				certCtx, certCancel := context.WithTimeout(ctx, 2*spec.stall)
				t0 := time.Now()
				_, err := l.issueOne(certCtx, c, name, i == 0)
				d := time.Since(t0)
				certCancel()
				mu.Lock()
				if err != nil {
					if ctx.Err() == nil { // errors caused by the level ending don't count
						out.errors++
						out.errKinds[errKind(err)]++
					}
				} else {
					out.certs++
					out.latencies = append(out.latencies, d)
				}
				mu.Unlock()
				if err == nil {
					lastDone.Store(time.Now().UnixNano())
				} else {
					// Do not spin on a failing server.
					select {
					case <-ctx.Done():
					case <-time.After(50 * time.Millisecond):
					}
				}
			}
		})
	}
	wg.Wait()
	close(watchDone)
	out.elapsed = time.Since(start)
	out.stalled = stalled.Load()
	return out
}

// errKind shortens an error for the error histogram.
func errKind(err error) string {
	var ae *xacme.Error
	if errors.As(err, &ae) {
		return fmt.Sprintf("%d %s: %s", ae.StatusCode, ae.ProblemType, trunc(ae.Detail, 80))
	}
	return trunc(err.Error(), 120)
}

func trunc(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// issueOne runs one whole issuance for name: new-order, authz, http-01,
// accept, poll the authz, finalize with a fresh P-256 CSR, fetch the chain;
// it returns the leaf.
func (l *loader) issueOne(ctx context.Context, c *xacme.Client, name string, check bool) (*x509.Certificate, error) {
	o, err := c.AuthorizeOrder(ctx, xacme.DomainIDs(name))
	if err != nil {
		return nil, fmt.Errorf("new-order: %w", err)
	}
	for _, u := range o.AuthzURLs {
		if err := l.solve(ctx, c, u); err != nil {
			return nil, err
		}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	csr, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{DNSNames: []string{name}}, key)
	if err != nil {
		return nil, err
	}
	chain, _, err := c.CreateOrderCert(ctx, o.FinalizeURL, csr, true)
	if err != nil {
		return nil, fmt.Errorf("finalize: %w", err)
	}
	if len(chain) < 2 {
		return nil, fmt.Errorf("finalize: chain has %d certificates, want leaf and intermediate", len(chain))
	}
	leaf, err := x509.ParseCertificate(chain[0])
	if err != nil {
		return nil, fmt.Errorf("finalize: leaf: %w", err)
	}
	if !slices.Equal(leaf.DNSNames, []string{name}) {
		return nil, fmt.Errorf("finalize: leaf names %v, want %s", leaf.DNSNames, name)
	}
	if check { // the first certificate of each worker and level is verified fully
		inter, err := x509.ParseCertificate(chain[1])
		if err != nil {
			return nil, fmt.Errorf("finalize: intermediate: %w", err)
		}
		pool := x509.NewCertPool()
		pool.AddCert(inter)
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: l.verify, Intermediates: pool, DNSName: name}); err != nil {
			return nil, fmt.Errorf("finalize: chain does not verify: %w", err)
		}
	}
	return leaf, nil
}

// solve completes the http-01 challenge of one authorization and polls it
// with a short backoff (5 ms doubling to 100 ms) rather than WaitAuthorization,
// which sleeps for the server's Retry-After of one second.
func (l *loader) solve(ctx context.Context, c *xacme.Client, authzURL string) error {
	z, err := c.GetAuthorization(ctx, authzURL)
	if err != nil {
		return fmt.Errorf("authz: %w", err)
	}
	if z.Status == xacme.StatusValid {
		return nil
	}
	var chal *xacme.Challenge
	for _, ch := range z.Challenges {
		if ch.Type == "http-01" {
			chal = ch
			break
		}
	}
	if chal == nil {
		return fmt.Errorf("authz %s offers no http-01 challenge", authzURL)
	}
	ka, err := c.HTTP01ChallengeResponse(chal.Token)
	if err != nil {
		return err
	}
	l.resp.keyAuths.Store(chal.Token, ka)
	defer l.resp.keyAuths.Delete(chal.Token)
	accepted, err := c.Accept(ctx, chal)
	if err != nil {
		return fmt.Errorf("accept: %w", err)
	}
	// weir answers the POST with the outcome of a quick validation (as
	// lego reads it, the load reads it): a valid challenge makes its
	// authorization valid, so there is nothing to poll.
	switch accepted.Status {
	case xacme.StatusValid:
		return nil
	case xacme.StatusInvalid:
		return fmt.Errorf("challenge became invalid: %v", accepted.Error)
	}
	backoff := 5 * time.Millisecond
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("polling authz: %w", ctx.Err())
		case <-time.After(backoff):
		}
		z, err := c.GetAuthorization(ctx, authzURL)
		if err != nil {
			return fmt.Errorf("poll authz: %w", err)
		}
		switch z.Status {
		case xacme.StatusValid:
			return nil
		case xacme.StatusInvalid, xacme.StatusDeactivated, xacme.StatusExpired, xacme.StatusRevoked:
			detail := ""
			for _, ch := range z.Challenges {
				if ch.Error != nil {
					detail = ": " + ch.Error.Error()
				}
			}
			return fmt.Errorf("authz became %s%s", z.Status, detail)
		}
		backoff = min(2*backoff, 100*time.Millisecond)
	}
}

// percentile is the nearest-rank percentile of sorted durations, in ms.
func percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p/100*float64(len(sorted))+0.999999) - 1
	i = max(0, min(i, len(sorted)-1))
	return ms(sorted[i])
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// parseLevels reads "8,32,64".
func parseLevels(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > 1024 {
			return nil, fmt.Errorf("-c: %q is not a concurrency between 1 and 1024", f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("-c: no concurrency given")
	}
	return out, nil
}
