// SPDX-License-Identifier: Apache-2.0

package dnstest

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// typeCAA is the CAA record type (RFC 8659), which dnsmessage does not name.
const typeCAA dnsmessage.Type = 257

// startServer starts a server on an ephemeral loopback port and closes it
// when the test ends.
func startServer(t *testing.T) *Server {
	t.Helper()
	s, err := Start("127.0.0.1:0")
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// dialLog records the networks a resolver dialed.
type dialLog struct {
	mu       sync.Mutex
	networks []string
}

// add records network.
func (l *dialLog) add(network string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.networks = append(l.networks, network)
}

// has reports whether network was dialed.
func (l *dialLog) has(network string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, n := range l.networks {
		if n == network {
			return true
		}
	}
	return false
}

// resolverFor returns a pure-Go resolver that sends every query to s and
// records the networks it dials in log (which may be nil).
func resolverFor(s *Server, log *dialLog) *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			if log != nil {
				log.add(network)
			}
			var d net.Dialer
			return d.DialContext(ctx, network, s.Addr())
		},
	}
}

// testContext returns a context that expires well before the test timeout.
func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// buildQuery returns a wire-format query for name and qtype, with an OPT
// record advertising a 1232-byte UDP payload if edns is true.
func buildQuery(t *testing.T, id uint16, name string, qtype dnsmessage.Type, edns bool) []byte {
	t.Helper()
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: id, RecursionDesired: true})
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		t.Fatalf("StartQuestions: %v", err)
	}
	q := dnsmessage.Question{Name: dnsmessage.MustNewName(name), Type: qtype, Class: dnsmessage.ClassINET}
	if err := b.Question(q); err != nil {
		t.Fatalf("Question: %v", err)
	}
	if edns {
		if err := b.StartAdditionals(); err != nil {
			t.Fatalf("StartAdditionals: %v", err)
		}
		var rh dnsmessage.ResourceHeader
		if err := rh.SetEDNS0(1232, dnsmessage.RCodeSuccess, false); err != nil {
			t.Fatalf("SetEDNS0: %v", err)
		}
		if err := b.OPTResource(rh, dnsmessage.OPTResource{}); err != nil {
			t.Fatalf("OPTResource: %v", err)
		}
	}
	msg, err := b.Finish()
	if err != nil {
		t.Fatalf("Finish: %v", err)
	}
	return msg
}

// parseResponse unpacks msg and checks that it answers query id.
func parseResponse(t *testing.T, msg []byte, id uint16) *dnsmessage.Message {
	t.Helper()
	var m dnsmessage.Message
	if err := m.Unpack(msg); err != nil {
		t.Fatalf("Unpack response: %v", err)
	}
	if m.ID != id {
		t.Fatalf("response ID = %d, want %d", m.ID, id)
	}
	if !m.Response || !m.Authoritative {
		t.Errorf("response QR=%v AA=%v, want both true", m.Response, m.Authoritative)
	}
	return &m
}

// dialUDP opens a UDP socket connected to s.
func dialUDP(t *testing.T, s *Server) net.Conn {
	t.Helper()
	c, err := net.Dial("udp", s.Addr())
	if err != nil {
		t.Fatalf("dial udp: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// dialTCP opens a TCP connection to s.
func dialTCP(t *testing.T, s *Server) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatalf("dial tcp: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// exchangeUDP sends query over c and returns the parsed response.
func exchangeUDP(t *testing.T, c net.Conn, query []byte, id uint16) *dnsmessage.Message {
	t.Helper()
	if _, err := c.Write(query); err != nil {
		t.Fatalf("write udp: %v", err)
	}
	if err := c.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatalf("SetReadDeadline: %v", err)
	}
	buf := make([]byte, 65535)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatalf("read udp: %v", err)
	}
	return parseResponse(t, buf[:n], id)
}

// writeFrame writes msg to c with a two-byte length prefix.
func writeFrame(t *testing.T, c net.Conn, msg []byte) {
	t.Helper()
	frame := binary.BigEndian.AppendUint16(nil, uint16(len(msg)))
	frame = append(frame, msg...)
	if _, err := c.Write(frame); err != nil {
		t.Fatalf("write tcp: %v", err)
	}
}

// readFrame reads one length-prefixed message from c.
func readFrame(t *testing.T, c net.Conn) []byte {
	t.Helper()
	if err := c.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatalf("SetReadDeadline: %v", err)
	}
	var lenBuf [2]byte
	if _, err := io.ReadFull(c, lenBuf[:]); err != nil {
		t.Fatalf("read tcp length: %v", err)
	}
	msg := make([]byte, binary.BigEndian.Uint16(lenBuf[:]))
	if _, err := io.ReadFull(c, msg); err != nil {
		t.Fatalf("read tcp message: %v", err)
	}
	return msg
}

// exchangeTCP sends query over c and returns the parsed response.
func exchangeTCP(t *testing.T, c net.Conn, query []byte, id uint16) *dnsmessage.Message {
	t.Helper()
	writeFrame(t, c, query)
	return parseResponse(t, readFrame(t, c), id)
}

// txtValues returns the TXT values in m's answer section, each record's
// strings joined.
func txtValues(t *testing.T, m *dnsmessage.Message) []string {
	t.Helper()
	var values []string
	for _, rr := range m.Answers {
		txt, ok := rr.Body.(*dnsmessage.TXTResource)
		if !ok {
			t.Fatalf("answer body is %T, want *dnsmessage.TXTResource", rr.Body)
		}
		joined := ""
		for _, s := range txt.TXT {
			joined += s
		}
		values = append(values, joined)
	}
	return values
}
