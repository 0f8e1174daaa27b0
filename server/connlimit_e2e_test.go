// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/internal/acmeenv"
)

// TestFirstRequestDeadline: a connection that sends no request is closed
// after server.connections.first-request-timeout, over HTTP/1.1 and
// over HTTP/2 after its preface alike, while one that has sent a request
// stays open; a connection beyond max-per-ip is refused at accept.
func TestFirstRequestDeadline(t *testing.T) {
	e := startEnv(t, func(c *Config) {
		c.Server.Connections.FirstRequestTimeout = time.Second
		c.Server.Connections.MaxPerIP = 3
	})
	addr := strings.TrimPrefix(e.Base, "https://")
	noConnections(t, e)
	dial := func(proto string) *tls.Conn {
		t.Helper()
		c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: e.Roots, NextProtos: []string{proto}})
		if err != nil {
			t.Fatalf("dialing %s: %v", proto, err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// closedBefore reports whether weir closed c before t.
	closedBefore := func(c *tls.Conn, t time.Time) bool {
		c.SetReadDeadline(t)
		_, err := io.Copy(io.Discard, c)
		return !acmeenv.IsTimeout(err)
	}
	dialed := time.Now()
	h1 := dial("http/1.1")
	h2 := dial("h2")
	if _, err := h2.Write(append([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 0, 0, 0, 4, 0, 0, 0, 0, 0)); err != nil {
		t.Fatal(err)
	}
	busy := dial("http/1.1")
	if _, err := io.WriteString(busy, "GET /directory HTTP/1.1\r\nHost: "+addr+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	// The three places of 127.0.0.1 are taken: a fourth is refused.
	if c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: e.Roots}); err == nil {
		c.Close()
		t.Error("a fourth connection from 127.0.0.1 with max-per-ip 3 was admitted")
	}
	// weir's timers start at accept, after dialed: the connections cannot
	// be closed less than 1 s after it, and with the default
	// first-request-timeout (10 s) they would still be open 9 s after it,
	// however the machine schedules weir.
	if !closedBefore(h1, dialed.Add(9*time.Second)) {
		t.Error("an HTTP/1.1 connection without a request is open 9 s after it was dialed, with a first-request-timeout of 1 s")
	}
	if !closedBefore(h2, dialed.Add(9*time.Second)) {
		t.Error("an HTTP/2 connection that sent only its preface is open 9 s after it was dialed, with a first-request-timeout of 1 s")
	}
	took := time.Since(dialed)
	t.Logf("both closed %s after the dials", took.Round(10*time.Millisecond))
	if took < time.Second {
		t.Errorf("the connections without a request were closed %v after the dials, before the first-request-timeout of 1 s", took)
	}
	if closedBefore(busy, time.Now().Add(500*time.Millisecond)) {
		t.Error("the connection that sent a request was closed by the first-request deadline")
	}
	// busy still holds a place; two are free again. An HTTP/2
	// connection that has sent a request outlives the deadline too.
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: e.Roots}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	get := func() (proto string, reused bool) {
		t.Helper()
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }})
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.Base+"/directory", nil)
		res, err := hc.Do(req)
		if err != nil {
			t.Fatalf("a new connection once places are free: %v", err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("directory = %d", res.StatusCode)
		}
		return res.Proto, reused
	}
	get()
	time.Sleep(1500 * time.Millisecond)
	if proto, reused := get(); proto != "HTTP/2.0" || !reused {
		t.Errorf("second request: %s, reused %v; want the first HTTP/2 connection, kept past the first-request deadline", proto, reused)
	}
}

// TestReloadConnections: max-per-ip reloads live and applies to the next
// connection; idle-timeout needs a restart, which the reload says.
func TestReloadConnections(t *testing.T) {
	e := startEnv(t, func(c *Config) { c.Server.Connections.MaxPerIP = 1 })
	addr := strings.TrimPrefix(e.Base, "https://")
	noConnections(t, e)
	held, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: e.Roots})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: e.Roots}); err == nil {
		c.Close()
		t.Fatal("a second connection from 127.0.0.1 with max-per-ip 1 was admitted")
	}
	cfg := e.cfg
	cfg.Server.Connections.MaxPerIP = 2
	cfg.Server.Connections.IdleTimeout = 30 * time.Second
	e.writeConfig(cfg)
	if err := e.srv.reload("test"); err != nil {
		t.Fatalf("reload: %v", err)
	}
	c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: e.Roots})
	if err != nil {
		t.Fatalf("a second connection after max-per-ip was raised to 2: %v", err)
	}
	c.Close()
	e.srv.reloaded.mu.Lock()
	restart := strings.Join(e.srv.reloaded.restart, "; ")
	e.srv.reloaded.mu.Unlock()
	if !strings.Contains(restart, "server.connections") {
		t.Errorf("needs restart = %q, want server.connections (idle-timeout changed)", restart)
	}
}

// noConnections closes the test client's idle connections and waits (at
// most 5 s) until weir counts none open, so that the test's own take the
// places it counts on.
func noConnections(t *testing.T, e *testEnv) {
	t.Helper()
	e.HTTP.CloseIdleConnections()
	for i := 0; ; i++ {
		n := e.srv.conns.Open()
		if n == 0 {
			return
		}
		if i == 500 {
			t.Fatalf("weir still counts %d connections open after the client closed its own", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
