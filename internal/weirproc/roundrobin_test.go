// SPDX-License-Identifier: Apache-2.0

package weirproc

import (
	"context"
	"net"
	"testing"
	"time"
)

// listen opens a loopback listener that accepts and closes connections
// until the test ends.
func listen(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln.Addr().String()
}

// closedAddr is a loopback address that refuses connections: a port that
// was just closed.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestRoundRobin: dials rotate over the addresses whatever address is
// asked for, a refusing address is skipped (its turn passes to the next),
// and the live ones still alternate; Dials counts the connections.
func TestRoundRobin(t *testing.T) {
	a, b, dead := listen(t), listen(t), closedAddr(t)
	rr := &RoundRobin{Addrs: []string{a, dead, b}}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var got []string
	for range 6 {
		c, err := rr.DialContext(ctx, "tcp", "example.invalid:443")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, c.RemoteAddr().String())
		c.Close()
	}
	for i, addr := range got {
		if want := []string{a, b}[i%2]; addr != want {
			t.Fatalf("dial %d reached %s, want %s (all: %v)", i, addr, want, got)
		}
	}
	d := rr.Dials()
	if d[a] != 3 || d[b] != 3 || d[dead] != 0 || len(d) != 2 {
		t.Fatalf("Dials() = %v, want 3 for %s and %s", d, a, b)
	}
}

// TestRoundRobinAllDown: with every address refusing, a dial fails after
// trying each once.
func TestRoundRobinAllDown(t *testing.T) {
	rr := &RoundRobin{Addrs: []string{closedAddr(t), closedAddr(t)}}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if c, err := rr.DialContext(ctx, "tcp", ""); err == nil {
		c.Close()
		t.Fatal("dial succeeded with every address refusing")
	}
	if d := rr.Dials(); len(d) != 0 {
		t.Fatalf("Dials() = %v, want none", d)
	}
	if _, err := (&RoundRobin{}).DialContext(ctx, "tcp", ""); err == nil {
		t.Fatal("dial succeeded with no addresses")
	}
}
