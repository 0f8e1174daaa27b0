// SPDX-License-Identifier: Apache-2.0

// Package dnstest provides a tiny authoritative DNS server for tests and
// for the load tool (cmd/weir-load).
//
// The server answers A and AAAA queries for every name with a configurable
// set of default addresses (127.0.0.1 and ::1 unless changed), per-name
// address overrides, and TXT records set by the test or read from a
// directory. CAA records, CNAME aliases and failing RCODEs (SERVFAIL) can
// be set per name too (caa.go). It listens on UDP and TCP on the same port so that it can be
// used as the sole resolver of a stub client that falls back to TCP when a
// UDP answer is truncated.
package dnstest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

const (
	// tcpIdleTimeout bounds how long a TCP connection may sit idle between
	// queries (or in the middle of one) before the server closes it.
	tcpIdleTimeout = 10 * time.Second
	// tcpWriteTimeout bounds how long writing one TCP response may take.
	tcpWriteTimeout = 5 * time.Second
	// listenAttempts is how many times Start retries binding TCP on the
	// port picked for UDP when the caller asked for an ephemeral port.
	listenAttempts = 10
	// maxUDPPacket is the largest datagram the server reads.
	maxUDPPacket = 65535
)

// Server is a tiny DNS server for tests: it answers A/AAAA for every name with
// configured addresses (default A 127.0.0.1 and AAAA ::1), and TXT records set
// by the test. UDP and TCP are served on the same port.
//
// All methods are safe for concurrent use.
type Server struct {
	udp *net.UDPConn
	tcp *net.TCPListener
	wg  sync.WaitGroup

	mu       sync.Mutex
	closed   bool
	conns    map[net.Conn]struct{}
	defaults []netip.Addr
	addrs    map[string][]netip.Addr
	txt      map[string][]string
	txtDir   string
	// caa, cname and rcodes are set by SetCAA, SetCNAME and SetRCode
	// (caa.go); nil until first set.
	caa    map[string][]CAA
	cname  map[string]string
	rcodes map[rcodeKey]dnsmessage.RCode
}

// Start starts a server listening on addr (for example "127.0.0.1:0") over
// both UDP and TCP on the same port. When the port is 0, the UDP port is
// picked first and TCP is bound to it, retrying with a new port a few times
// if that TCP port is already taken.
func Start(addr string) (*Server, error) {
	udpAddr, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("dnstest: resolve %q: %w", addr, err)
	}
	attempts := 1
	if udpAddr.Port == 0 {
		attempts = listenAttempts
	}
	var lastErr error
	for range attempts {
		udp, tcp, err := listenPair(udpAddr)
		if err != nil {
			lastErr = err
			continue
		}
		s := &Server{
			udp:      udp,
			tcp:      tcp,
			conns:    make(map[net.Conn]struct{}),
			defaults: []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback()},
			addrs:    make(map[string][]netip.Addr),
			txt:      make(map[string][]string),
		}
		s.wg.Add(2)
		go s.serveUDP()
		go s.serveTCP()
		return s, nil
	}
	return nil, fmt.Errorf("dnstest: listen on %q: %w", addr, lastErr)
}

// listenPair binds UDP on addr and then TCP on the same IP and port.
func listenPair(addr *net.UDPAddr) (*net.UDPConn, *net.TCPListener, error) {
	udp, err := net.ListenUDP("udp", addr)
	if err != nil {
		return nil, nil, err
	}
	bound, ok := udp.LocalAddr().(*net.UDPAddr)
	if !ok {
		udp.Close()
		return nil, nil, fmt.Errorf("unexpected UDP address type %T", udp.LocalAddr())
	}
	tcp, err := net.ListenTCP("tcp", &net.TCPAddr{IP: bound.IP, Port: bound.Port, Zone: bound.Zone})
	if err != nil {
		udp.Close()
		return nil, nil, err
	}
	return udp, tcp, nil
}

// Addr returns the address the server listens on, such as "127.0.0.1:5353".
// The same address serves UDP and TCP.
func (s *Server) Addr() string {
	return s.udp.LocalAddr().String()
}

// Close stops the server, closes all open connections and waits for every
// server goroutine to finish. Calling Close more than once returns nil.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	errUDP := s.udp.Close()
	errTCP := s.tcp.Close()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return errors.Join(errUDP, errTCP)
}

// isClosed reports whether Close has been called.
func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// serveUDP answers datagrams until the UDP socket is closed.
func (s *Server) serveUDP() {
	defer s.wg.Done()
	buf := make([]byte, maxUDPPacket)
	for {
		n, peer, err := s.udp.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) || s.isClosed() {
				return
			}
			// Transient errors (for example ICMP-induced ones) must not
			// stop the server; back off briefly to avoid spinning.
			time.Sleep(10 * time.Millisecond)
			continue
		}
		resp := s.handle(buf[:n], false)
		if resp == nil {
			continue
		}
		_, _ = s.udp.WriteToUDPAddrPort(resp, peer)
	}
}

// serveTCP accepts connections until the listener is closed.
func (s *Server) serveTCP() {
	defer s.wg.Done()
	for {
		c, err := s.tcp.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || s.isClosed() {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if !s.track(c) {
			c.Close()
			return
		}
		s.wg.Add(1)
		go s.serveConn(c)
	}
}

// track registers c so that Close can close it. It reports false if the
// server is already closed.
func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

// untrack closes c and forgets it.
func (s *Server) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	c.Close()
}

// serveConn answers length-prefixed queries on c until the peer closes it,
// it idles for too long, or the server is closed.
func (s *Server) serveConn(c net.Conn) {
	defer s.wg.Done()
	defer s.untrack(c)
	var lenBuf [2]byte
	msg := make([]byte, 0, 512)
	for {
		if err := c.SetReadDeadline(time.Now().Add(tcpIdleTimeout)); err != nil {
			return
		}
		if _, err := io.ReadFull(c, lenBuf[:]); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint16(lenBuf[:]))
		msg = msg[:0]
		if cap(msg) < n {
			msg = make([]byte, 0, n)
		}
		msg = msg[:n]
		if _, err := io.ReadFull(c, msg); err != nil {
			return
		}
		resp := s.handle(msg, true)
		if resp == nil {
			// Garbage: the framing is still intact, so keep reading.
			continue
		}
		out := make([]byte, 2, 2+len(resp))
		binary.BigEndian.PutUint16(out, uint16(len(resp)))
		out = append(out, resp...)
		if err := c.SetWriteDeadline(time.Now().Add(tcpWriteTimeout)); err != nil {
			return
		}
		if _, err := c.Write(out); err != nil {
			return
		}
	}
}
