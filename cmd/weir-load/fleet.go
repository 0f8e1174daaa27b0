// SPDX-License-Identifier: Apache-2.0

// -fleet N: N simulated ACME clients, cheap goroutines sharing one HTTP
// client (HTTP/2), each holding a certificate for its own name and
// renewing it through ARI (fleetagent.go), against a weir the tool runs
// (drill.go). The fleet's accounts, its clients and the watcher that
// samples them every second.

package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// fleet is the simulated clients and what they share.
type fleet struct {
	conn    *acmeConn
	resp    *responder
	stats   *fleetStats
	issuers issuerSet
	clients []*simClient
	accts   int
	view    *weirView // weir's migration view, read once a minute; nil: none

	// Set by the watcher.
	allOnB   chan struct{} // closed when every client holds a certificate of B
	allOnBAt atomic.Int64  // its time, Unix nanoseconds
	lapsed   atomic.Int64  // lapses so far
}

// issuerSet tells the issuers apart by the authority key identifier of
// the certificates they sign.
type issuerSet struct {
	a []byte                 // the subject key identifier of issuer A (default)
	b atomic.Pointer[[]byte] // issuer B's, once made
}

func (s *issuerSet) label(aki []byte) int32 {
	switch {
	case bytes.Equal(aki, s.a):
		return issuerA
	case s.b.Load() != nil && bytes.Equal(aki, *s.b.Load()):
		return issuerB
	}
	return issuerOther
}

// fleetHTTPClient is the one HTTP client of the fleet: HTTP/2 to weir
// (its streams shared by every client), trusting weir's root.
func fleetHTTPClient(roots *x509.CertPool) *http.Client {
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout: 10 * time.Second,
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
	}
	return &http.Client{Transport: tr, Timeout: 60 * time.Second}
}

// newFleet registers the accounts (perAccount clients share one) and
// makes the clients, cNNNN.fleet.test, with one certificate key for all.
func newFleet(ctx context.Context, conn *acmeConn, resp *responder, stats *fleetStats, n, perAccount int, trace bool, stderr io.Writer) (*fleet, error) {
	f := &fleet{conn: conn, resp: resp, stats: stats, allOnB: make(chan struct{})}
	certKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	f.accts = (n + perAccount - 1) / perAccount
	accts := make([]*fleetAccount, f.accts)
	errs := make([]error, f.accts)
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for i := range accts {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			a, err := newFleetAccountKey()
			for attempt := 0; err == nil && attempt < 5; attempt++ {
				if err = conn.register(ctx, a); err == nil || ctx.Err() != nil {
					break
				}
				sleepUntil(ctx, time.Now().Add(time.Second<<attempt))
			}
			accts[i], errs[i] = a, err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("registering accounts: %w", err)
	}
	logf(stderr, "registered %d accounts for %d clients", f.accts, n)
	width := len(fmt.Sprint(n - 1))
	f.clients = make([]*simClient, n)
	for i := range f.clients {
		name := fmt.Sprintf("c%0*d.fleet.test", max(4, width), i)
		csr, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{DNSNames: []string{name}}, certKey)
		if err != nil {
			return nil, err
		}
		f.clients[i] = &simClient{f: f, name: name, acct: accts[i/perAccount], csr: csr}
		if trace && i == 0 {
			f.clients[i].trace = stderr
		}
	}
	return f, nil
}

// start runs every client, the first certificates spread evenly over
// ramp; the returned wait blocks until every client has returned (after
// ctx ends).
func (f *fleet) start(ctx context.Context, ramp time.Duration) (wait func()) {
	var wg sync.WaitGroup
	t0 := time.Now()
	for i, c := range f.clients {
		at := t0.Add(ramp * time.Duration(i) / time.Duration(len(f.clients)))
		wg.Go(func() { c.run(ctx, at) })
	}
	return wg.Wait
}

// counts are the gauges: clients holding a certificate of A, of B, and
// whose certificate in hand has expired.
func (f *fleet) counts(now time.Time) (onA, onB, expired int) {
	for _, c := range f.clients {
		na := c.notAfter.Load()
		if na != 0 && now.UnixNano() > na {
			expired++
		}
		switch c.issuer.Load() {
		case issuerA:
			onA++
		case issuerB:
			onB++
		}
	}
	return onA, onB, expired
}

// latestNotAfter is the latest expiry of the certificates of A in hand:
// A's deadline, taken at the rotation.
func (f *fleet) latestNotAfter() time.Time {
	var last int64
	for _, c := range f.clients {
		if c.issuer.Load() == issuerA {
			last = max(last, c.notAfter.Load())
		}
	}
	if last == 0 {
		return time.Time{}
	}
	return time.Unix(0, last)
}

// someCertOnA is the certID of a certificate of A still in hand, or "".
// It reads certID, which only the client's goroutine writes, under no
// lock: it is used for a check that may read a stale one.
func (f *fleet) someCertOnA() string {
	for _, c := range f.clients {
		if c.issuer.Load() == issuerA && c.notAfter.Load() > time.Now().UnixNano() {
			if id := c.heldID.Load(); id != nil {
				return *id
			}
		}
	}
	return ""
}

// watch samples the clients every second until ctx ends: it counts a
// lapse when a certificate in hand expires (once per certificate), sets
// the minute's gauges, prints each finished minute, and closes allOnB
// when every client holds a certificate of B.
func (f *fleet) watch(ctx context.Context, stderr io.Writer) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	last := -1
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := time.Now()
		for _, c := range f.clients {
			na := c.notAfter.Load()
			if seen := c.lapsedFor.Load(); na != 0 && now.UnixNano() > na && seen != na && c.lapsedFor.CompareAndSwap(seen, na) {
				f.lapsed.Add(1)
				f.stats.add(func(m *fleetMinute) { m.Lapsed++ })
			}
		}
		onA, onB, expired := f.counts(now)
		m := f.stats.gauges(now, onA, onB, expired)
		if onB == len(f.clients) && f.allOnBAt.CompareAndSwap(0, now.UnixNano()) {
			close(f.allOnB)
		}
		if m.Minute != last {
			if last >= 0 {
				rows, _, _ := f.stats.snapshot(now)
				logMinute(stderr, rows[last])
				go f.sampleWeir(ctx, last)
			}
			last = m.Minute
		}
	}
}
