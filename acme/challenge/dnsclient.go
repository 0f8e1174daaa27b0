// SPDX-License-Identifier: Apache-2.0

package challenge

// The small DNS client of the CAA check and of the address lookups
// (addrs.go): one question to the resolver
// (caaServer: the configured one, else resolv.conf's first) over UDP, and
// over TCP when the answer is truncated.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"sync"

	"golang.org/x/net/dns/dnsmessage"
)

// exchange asks server one question over UDP, and over TCP when the
// answer is truncated.
func exchange(ctx context.Context, server, name string, qtype dnsmessage.Type) (*dnsmessage.Message, error) {
	q, err := newQuery(name, qtype)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	err = exchangeUDP(ctx, server, name, q)
	resp := q.resp
	if err == nil && resp.Truncated {
		resp, err = exchangeTCP(ctx, server, q.msg, q.id, name, qtype)
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
			return nil, &timeoutError{fmt.Sprintf("timeout asking %s for the %s records of %s", server, typeName(qtype), name)}
		}
		return nil, fmt.Errorf("asking %s for the %s records of %s: %w", server, typeName(qtype), name, err)
	}
	return resp, nil
}

// timeoutError is an exchange that got no answer in time.
type timeoutError struct{ msg string }

func (e *timeoutError) Error() string { return e.msg }

// Timeout makes it a net.Error that isTimeout recognises.
func (e *timeoutError) Timeout() bool { return true }

// Temporary implements net.Error.
func (e *timeoutError) Temporary() bool { return true }

// buildQuery packs a recursive query for (name, qtype) with an EDNS(0)
// OPT record.
func buildQuery(id uint16, name string, qtype dnsmessage.Type) ([]byte, error) {
	qn, err := dnsmessage.NewName(strings.TrimSuffix(name, ".") + ".")
	if err != nil {
		return nil, err
	}
	var opt dnsmessage.ResourceHeader
	if err := opt.SetEDNS0(ednsSize, dnsmessage.RCodeSuccess, false); err != nil {
		return nil, err
	}
	m := dnsmessage.Message{
		Header:      dnsmessage.Header{ID: id, RecursionDesired: true},
		Questions:   []dnsmessage.Question{{Name: qn, Type: qtype, Class: dnsmessage.ClassINET}},
		Additionals: []dnsmessage.Resource{{Header: opt, Body: &dnsmessage.OPTResource{}}},
	}
	return m.Pack()
}

// answers reports whether b is the response to our query.
func answers(b []byte, id uint16, name string, qtype dnsmessage.Type) (*dnsmessage.Message, bool) {
	var m dnsmessage.Message
	if err := m.Unpack(b); err != nil {
		return nil, false
	}
	if !m.Response || m.ID != id || len(m.Questions) != 1 {
		return nil, false
	}
	q := m.Questions[0]
	if q.Type != qtype || q.Class != dnsmessage.ClassINET || !sameName(q.Name.String(), name) {
		return nil, false
	}
	return &m, true
}

// dnsQuery is one question asked by exchangeUDP, and its answer.
type dnsQuery struct {
	qtype dnsmessage.Type
	id    uint16
	msg   []byte
	resp  *dnsmessage.Message
	err   error // set by the caller when it gives up on the question
}

// newQuery packs a question for (name, qtype) with a random ID.
func newQuery(name string, qtype dnsmessage.Type) (*dnsQuery, error) {
	q := &dnsQuery{qtype: qtype, id: uint16(rand.UintN(1 << 16))}
	var err error
	q.msg, err = buildQuery(q.id, name, qtype)
	return q, err
}

// udpBufs recycles exchangeUDP's read buffers, large enough for any
// datagram.
var udpBufs = sync.Pool{New: func() any { b := make([]byte, 65535); return &b }}

// exchangeUDP sends every question of qs, about name, over one UDP socket
// and reads datagrams until each has its answer (resp), skipping those
// that answer none (stray or spoofed ones). The error is the socket's, or
// no matching answer, for the questions still unanswered.
func exchangeUDP(ctx context.Context, server, name string, qs ...*dnsQuery) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "udp", server)
	if err != nil {
		return err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	for _, q := range qs {
		if _, err := c.Write(q.msg); err != nil {
			return err
		}
	}
	bp := udpBufs.Get().(*[]byte)
	defer udpBufs.Put(bp)
	buf := *bp
	open := len(qs)
	for range maxUDPReads * len(qs) {
		n, err := c.Read(buf)
		if err != nil {
			return err
		}
		for _, q := range qs {
			if q.resp == nil {
				if m, ok := answers(buf[:n], q.id, name, q.qtype); ok {
					q.resp = m
					open--
					break
				}
			}
		}
		if open == 0 {
			return nil
		}
	}
	return errors.New("no matching answer")
}

// exchangeTCP sends q over TCP (RFC 1035 §4.2.2 framing) and reads its
// answer.
func exchangeTCP(ctx context.Context, server string, q []byte, id uint16, name string, qtype dnsmessage.Type) (*dnsmessage.Message, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", server)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	msg := binary.BigEndian.AppendUint16(make([]byte, 0, 2+len(q)), uint16(len(q)))
	if _, err := c.Write(append(msg, q...)); err != nil {
		return nil, err
	}
	var l [2]byte
	if _, err := io.ReadFull(c, l[:]); err != nil {
		return nil, err
	}
	b := make([]byte, binary.BigEndian.Uint16(l[:]))
	if _, err := io.ReadFull(c, b); err != nil {
		return nil, err
	}
	m, ok := answers(b, id, name, qtype)
	if !ok {
		return nil, errors.New("the TCP answer does not match the query")
	}
	return m, nil
}
