// SPDX-License-Identifier: Apache-2.0

package weirproc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// RoundRobin is a load balancer in the client. Put its DialContext into
// an http.Transport: whatever address a URL names (replicas share
// server.external-url), each new connection goes to the next of Addrs.
// An address that refuses, or does not answer within 2 s, is skipped as a
// load balancer's health check would, and the next one tried; each
// address is tried at most once per dial. With keep-alive each connection
// stays with the replica it reached; with DisableKeepAlives every request
// goes to the next replica.
type RoundRobin struct {
	Addrs []string // host:port of each replica's listener

	next  atomic.Uint64
	mu    sync.Mutex
	dials map[string]int64
}

// dialTimeout is how long one address may take to accept a connection.
const dialTimeout = 2 * time.Second

// DialContext ignores the address asked for and connects to the next of
// Addrs that accepts; it fails when none does, or when ctx ends.
func (rr *RoundRobin) DialContext(ctx context.Context, network, _ string) (net.Conn, error) {
	n := len(rr.Addrs)
	if n == 0 {
		return nil, errors.New("weirproc: RoundRobin has no addresses")
	}
	d := &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}
	tried := make([]bool, n)
	var errs []error
	for range n {
		// One step of the shared rotation per attempt, so that a dead
		// address's turn passes to the next one and the live ones still
		// alternate. Concurrent dials may take turns in between: then
		// the first address this dial has not tried after it.
		i := int((rr.next.Add(1) - 1) % uint64(n))
		for tried[i] {
			i = (i + 1) % n
		}
		tried[i] = true
		addr := rr.Addrs[i]
		c, err := d.DialContext(ctx, network, addr)
		if err == nil {
			rr.mu.Lock()
			if rr.dials == nil {
				rr.dials = make(map[string]int64, n)
			}
			rr.dials[addr]++
			rr.mu.Unlock()
			return c, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("weirproc: no replica accepted a connection: %w", errors.Join(errs...))
}

// Dials returns the connections made to each address (the successful
// dials; an address never reached is absent).
func (rr *RoundRobin) Dials() map[string]int64 {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	out := make(map[string]int64, len(rr.dials))
	for k, v := range rr.dials {
		out[k] = v
	}
	return out
}
