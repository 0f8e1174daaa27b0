// SPDX-License-Identifier: Apache-2.0

package acme_test

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/postgres/pgtest"
)

// pgRoundTrips is a TCP proxy on loopback between a PostgreSQL client and
// the test server that counts the client's round trips: the simple
// queries (Query) and the ends of extended-protocol exchanges (Sync), each
// of which the client sends and then waits for the server's
// ReadyForQuery. Every statement of the store, in a transaction or not,
// is one or the other (pgx sends a statement without arguments as a
// simple query, and BEGIN and COMMIT are statements), so the count is
// the store's SQL round trips, seen on the wire.
type pgRoundTrips struct {
	ln     net.Listener
	target string
	trips  atomic.Int64
	mu     sync.Mutex
	conns  []net.Conn
}

// countPostgres starts a counter in front of the server of dsn, a
// postgres:// URL with sslmode=disable, and returns it with the DSN that
// connects through it. The proxy stops when the test ends.
func countPostgres(t *testing.T, dsn string) (*pgRoundTrips, string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme != "postgres" && u.Scheme != "postgresql" || u.Query().Get("sslmode") != "disable" {
		t.Skipf("counting round trips needs a postgres:// DSN with sslmode=disable, got %q", dsn)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pgRoundTrips{ln: ln, target: u.Host}
	go p.serve()
	t.Cleanup(p.close)
	u.Host = ln.Addr().String()
	return p, u.String()
}

// count returns the round trips so far; 0 without a counter (SQLite).
func (p *pgRoundTrips) count() int64 {
	if p == nil {
		return 0
	}
	return p.trips.Load()
}

// onBothStores runs f on SQLite and on PostgreSQL, whose SQL round trips
// are counted on the wire (wire is nil on SQLite).
func onBothStores(t *testing.T, f func(t *testing.T, st acme.Store, wire *pgRoundTrips)) {
	t.Run("sqlite", func(t *testing.T) { f(t, openSQLite(t), nil) })
	t.Run("postgres", func(t *testing.T) {
		_, dsn := pgtest.Schema(t, "weir_acme_")
		wire, dsn := countPostgres(t, dsn)
		// One connection, so that every statement is prepared on it by
		// the warm-up and each later one is a single round trip.
		f(t, openPostgresDSN(t, dsn, 1), wire)
	})
}

func (p *pgRoundTrips) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.DialTimeout("tcp", p.target, 5*time.Second)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		go func() {
			_, _ = io.Copy(c, s)
			c.Close()
		}()
		go func() {
			_ = p.relay(s, c)
			s.Close()
		}()
	}
}

func (p *pgRoundTrips) close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

// The message types of the frontend protocol that end a round trip
// (PostgreSQL's "Message Formats").
const (
	pgQuery = 'Q'
	pgSync  = 'S'
)

// relay copies the client's messages to the server, counting round trips.
// The first message is the startup message, which has no type byte.
func (p *pgRoundTrips) relay(server io.Writer, client io.Reader) error {
	r := bufio.NewReader(client)
	var hdr [8]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return err
	}
	n := binary.BigEndian.Uint32(hdr[:4])
	if code := binary.BigEndian.Uint32(hdr[4:]); code == 80877103 || code == 80877104 {
		return errors.New("pgcount: the client asked for encryption; use sslmode=disable")
	}
	if n < 8 || n > 1<<20 {
		return fmt.Errorf("pgcount: startup message of %d bytes", n)
	}
	msg := make([]byte, n)
	copy(msg, hdr[:])
	if _, err := io.ReadFull(r, msg[8:]); err != nil {
		return err
	}
	if _, err := server.Write(msg); err != nil {
		return err
	}
	for {
		var h [5]byte
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return err
		}
		n := binary.BigEndian.Uint32(h[1:])
		if n < 4 || n > 1<<30 {
			return fmt.Errorf("pgcount: message %q of %d bytes", h[0], n)
		}
		if h[0] == pgQuery || h[0] == pgSync {
			p.trips.Add(1)
		}
		if _, err := server.Write(h[:]); err != nil {
			return err
		}
		if _, err := io.CopyN(server, r, int64(n-4)); err != nil {
			return err
		}
	}
}
