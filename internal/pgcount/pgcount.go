// SPDX-License-Identifier: Apache-2.0

// Package pgcount is a TCP proxy on loopback between PostgreSQL clients
// and a server that counts, on the wire, what the clients ask: their round
// trips and their statements, by statement text. The store's tests count
// the round trips of a use case with it, and weir-load (-count-pg) the
// statements of an issuance.
//
// A round trip is a simple query ('Q') or the end of an extended-protocol
// exchange ('S', Sync): the client sends it and waits for the server's
// ReadyForQuery. A statement is a simple query or an Execute ('E') of a
// bound portal; its text is the one its Parse ('P') gave the prepared
// statement the portal's Bind ('B') names, tracked per connection, so a
// statement prepared once and run many times counts each run. BEGIN and
// COMMIT are statements like any other.
package pgcount

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Proxy counts the round trips and statements of the connections made
// through it. It is safe for concurrent use.
type Proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	conns []net.Conn
	trips int64
	stmts map[string]int64 // by statement text (Text)
}

// Start listens on 127.0.0.1 and relays each connection to target
// (host:port). Close stops it.
func Start(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, stmts: map[string]int64{}}
	go p.serve()
	return p, nil
}

// StartDSN starts a proxy in front of the server of dsn, a postgres:// URL
// with sslmode=disable (the proxy reads the protocol in clear), and
// returns it with the DSN that connects through it.
func StartDSN(dsn string) (*Proxy, string, error) {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme != "postgres" && u.Scheme != "postgresql" || u.Query().Get("sslmode") != "disable" {
		return nil, "", fmt.Errorf("pgcount: counting needs a postgres:// DSN with sslmode=disable, got %q", dsn)
	}
	p, err := Start(u.Host)
	if err != nil {
		return nil, "", err
	}
	u.Host = p.ln.Addr().String()
	return p, u.String(), nil
}

// Counts is what a Proxy counted.
type Counts struct {
	Trips int64
	// Statements are the statements run, by text (Text).
	Statements map[string]int64
}

// Total is the number of statements of c.
func (c Counts) Total() int64 {
	var n int64
	for _, v := range c.Statements {
		n += v
	}
	return n
}

// Sub is c less an earlier reading.
func (c Counts) Sub(before Counts) Counts {
	out := Counts{Trips: c.Trips - before.Trips, Statements: map[string]int64{}}
	for k, v := range c.Statements {
		if d := v - before.Statements[k]; d != 0 {
			out.Statements[k] = d
		}
	}
	return out
}

// Counts returns what p counted so far; a nil p counted nothing.
func (p *Proxy) Counts() Counts {
	if p == nil {
		return Counts{Statements: map[string]int64{}}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return Counts{Trips: p.trips, Statements: maps.Clone(p.stmts)}
}

// Trips returns the round trips so far; 0 for a nil p.
func (p *Proxy) Trips() int64 { return p.Counts().Trips }

// Close stops listening and closes every relayed connection.
func (p *Proxy) Close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

func (p *Proxy) serve() {
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

// Text is the form a statement is counted under: its SQL with runs of
// white space made one space.
func Text(sql string) string { return strings.Join(strings.Fields(sql), " ") }

// The message types of the frontend protocol that the proxy reads
// (PostgreSQL's "Message Formats").
const (
	msgQuery   = 'Q'
	msgSync    = 'S'
	msgParse   = 'P'
	msgBind    = 'B'
	msgExecute = 'E'
)

// unknownStatement counts an Execute of a portal whose statement the
// proxy did not see prepared.
const unknownStatement = "(a statement prepared before the proxy saw it)"

// maxMessage bounds a message the proxy reads whole (Parse, Bind, Query);
// others are copied through.
const maxMessage = 1 << 30

// relay copies the client's messages to the server and counts them. The
// first message is the startup message, which has no type byte.
func (p *Proxy) relay(server io.Writer, client io.Reader) error {
	r := bufio.NewReader(client)
	if err := relayStartup(server, r); err != nil {
		return err
	}
	c := conn{prepared: map[string]string{}, portals: map[string]string{}}
	for {
		var h [5]byte
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return err
		}
		n := binary.BigEndian.Uint32(h[1:])
		if n < 4 || n > maxMessage {
			return fmt.Errorf("pgcount: message %q of %d bytes", h[0], n)
		}
		// A message is counted before it is forwarded: once the server
		// has it, its answer may reach the client, which may read the
		// counts at once and must find the message in them.
		switch h[0] {
		case msgQuery, msgParse, msgBind, msgExecute:
			body := make([]byte, n-4)
			if _, err := io.ReadFull(r, body); err != nil {
				return err
			}
			p.note(c.read(h[0], body))
			if _, err := server.Write(append(h[:], body...)); err != nil {
				return err
			}
		default:
			if h[0] == msgSync {
				p.note("", true)
			}
			if _, err := server.Write(h[:]); err != nil {
				return err
			}
			if _, err := io.CopyN(server, r, int64(n-4)); err != nil {
				return err
			}
		}
	}
}

// relayStartup copies the startup message.
func relayStartup(server io.Writer, r *bufio.Reader) error {
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
	_, err := server.Write(msg)
	return err
}

// conn is what the proxy tracks of one connection: the text of its
// prepared statements and of its bound portals.
type conn struct {
	prepared map[string]string // statement name → text
	portals  map[string]string // portal name → text
}

// read takes a Query, Parse, Bind or Execute message's body and returns the
// statement it runs ("" for none) and whether it ends a round trip.
func (c *conn) read(typ byte, body []byte) (stmt string, trip bool) {
	first, rest := cstring(body)
	switch typ {
	case msgQuery:
		return Text(first), true
	case msgParse:
		query, _ := cstring(rest)
		c.prepared[first] = Text(query)
	case msgBind:
		name, _ := cstring(rest)
		c.portals[first] = c.prepared[name]
	case msgExecute:
		if text, ok := c.portals[first]; ok && text != "" {
			return text, false
		}
		return unknownStatement, false
	}
	return "", false
}

// cstring splits b after its first NUL-terminated string.
func cstring(b []byte) (string, []byte) {
	i := 0
	for i < len(b) && b[i] != 0 {
		i++
	}
	if i == len(b) {
		return string(b), nil
	}
	return string(b[:i]), b[i+1:]
}

// note counts a statement (stmt is not "") and a round trip (trip).
func (p *Proxy) note(stmt string, trip bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if trip {
		p.trips++
	}
	if stmt != "" {
		p.stmts[stmt]++
	}
}
