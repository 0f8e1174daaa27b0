// SPDX-License-Identifier: Apache-2.0

package ha_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/weir-pki/weir/internal/weirproc"
)

// The flood of TestPrefaceFlood.
const (
	floodConns   = 5000
	floodWorkers = 64
	floodRSSMiB  = 200
)

// h2Preface is what an HTTP/2 client sends first: the connection preface
// and an empty SETTINGS frame.
var h2Preface = append([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 0, 0, 0, 4, 0, 0, 0, 0, 0)

// TestPrefaceFlood opens 5,000 TLS connections from 127.0.0.1 to a weir
// process with the default server.connections, each sending only the
// HTTP/2 preface, and holds them, while a client on 127.0.0.2 takes a
// certificate: the issuance succeeds, weir's peak RSS (VmHWM) stays under
// 200 MiB, at most max-per-ip (256) of the connections are admitted, and
// those are closed by weir after first-request-timeout (10 s). Then the
// same with HTTP/1.1 connections that send one request and stay open
// (keep-alive), closed after idle-timeout (5 s here).
func TestPrefaceFlood(t *testing.T) {
	t.Run("h2-preface", func(t *testing.T) { flood(t, "h2", "") })
	t.Run("http1-keepalive", func(t *testing.T) { flood(t, "http/1.1", "  connections: { idle-timeout: 5s }\n") })
}

// flood is TestPrefaceFlood over proto (h2: the preface only; http/1.1:
// one request), with server, the lines of the server block.
func flood(t *testing.T, proto, server string) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur < floodConns+1024 {
		lim.Cur = min(lim.Max, floodConns+1024)
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur < floodConns+256 {
			t.Fatalf("RLIMIT_NOFILE %d (hard %d) is too low for %d connections: %v", lim.Cur, lim.Max, floodConns, err)
		}
	}
	bin := builder.Binary(t)
	s := newSolo(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	listen, err := weirproc.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	p, err := weirproc.Start(ctx, weirproc.Options{Bin: bin, DataDir: filepath.Join(dir, "d"), Listen: listen,
		Config: s.config(filepath.Join(dir, "d"), listen, server, "")})
	if err != nil {
		t.Fatal(err)
	}
	s.started(p)
	base, _ := p.StatusKB("VmRSS")

	issued := make(chan error, 1)
	go func() {
		c, err := s.acmeClient(ctx, s.httpClient("127.0.0.2"))
		if err == nil {
			_, err = s.issue(ctx, c, "flood.example.com")
		}
		issued <- err
	}()

	tlsCfg := &tls.Config{RootCAs: p.Roots, NextProtos: []string{proto}}
	first := h2Preface
	if proto != "h2" {
		first = []byte("GET /directory HTTP/1.1\r\nHost: " + listen + "\r\n\r\n")
	}
	d := &net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.1")}}
	var (
		mu       sync.Mutex
		held     []*tls.Conn
		refused  atomic.Int64
		next     atomic.Int64
		wg       sync.WaitGroup
		floodErr atomic.Value
	)
	start := time.Now()
	for range floodWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= floodConns {
				c, err := tls.DialWithDialer(d, "tcp", listen, tlsCfg)
				if err != nil {
					if isRefusal(err) {
						refused.Add(1)
						continue
					}
					floodErr.Store(err)
					return
				}
				if _, err := c.Write(first); err != nil {
					c.Close()
					refused.Add(1)
					continue
				}
				mu.Lock()
				held = append(held, c)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, c := range held {
			c.Close()
		}
	})
	if err, _ := floodErr.Load().(error); err != nil {
		t.Fatalf("a flood connection failed otherwise than refused: %v", err)
	}
	t.Logf("%d %s connections from 127.0.0.1 in %s: %d held, %d refused", floodConns, proto, time.Since(start).Round(time.Millisecond), len(held), refused.Load())
	if len(held) > 256 {
		t.Errorf("%d connections admitted from one address, want at most max-per-ip 256", len(held))
	}
	rss, _ := p.StatusKB("VmRSS")
	t.Logf("weir's RSS: %d MiB before the flood, %d MiB with it", base>>10, rss>>10)

	select {
	case err := <-issued:
		if err != nil {
			t.Fatalf("issuance from 127.0.0.2 during the flood: %v", err)
		}
		t.Logf("issued a certificate to 127.0.0.2 during the flood")
	case <-ctx.Done():
		t.Fatal("issuance from 127.0.0.2 did not finish")
	}

	// weir closes what it admitted once first-request-timeout (10 s)
	// has passed since its accept (HTTP/2), or idle-timeout (5 s) since
	// its request (HTTP/1.1).
	closedBy := time.Now().Add(15 * time.Second)
	closed := 0
	for _, c := range held {
		c.SetReadDeadline(closedBy)
		if _, err := io.Copy(io.Discard, c); !isTimeout(err) { // EOF or a reset: weir closed it
			closed++
		}
	}
	t.Logf("%d of %d held connections closed by weir within %s of the flood's start", closed, len(held), time.Since(start).Round(time.Second))
	if closed != len(held) {
		t.Errorf("%d of %d %s connections still open after their timeout", len(held)-closed, len(held), proto)
	}
	hwm, _ := p.StatusKB("VmHWM")
	t.Logf("weir's peak RSS (VmHWM): %d MiB", hwm>>10)
	if hwm>>10 >= floodRSSMiB {
		t.Errorf("weir's peak RSS %d MiB, want under %d MiB", hwm>>10, floodRSSMiB)
	}
}

// isRefusal reports whether err is a connection weir closed at accept.
func isRefusal(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, syscall.EPIPE)
}

// isTimeout reports whether err is a deadline.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
