// SPDX-License-Identifier: Apache-2.0

package dnstest

import (
	"errors"
	"net/netip"

	"golang.org/x/net/dns/dnsmessage"
)

const (
	// minUDPSize is the response size limit for UDP queries without EDNS(0)
	// (RFC 1035 section 4.2.1).
	minUDPSize = 512
	// maxTCPSize is the largest message that fits the TCP length prefix.
	maxTCPSize = 65535
	// ednsUDPSize is the UDP payload size the server advertises.
	ednsUDPSize = 1232
	// maxTXTString is the longest character-string allowed in a TXT record.
	maxTXTString = 255
)

// query is the part of a request the server needs to build a response.
type query struct {
	header   dnsmessage.Header
	question dnsmessage.Question
	// hasQuestion is false for requests without a question.
	hasQuestion bool
	// edns is true when the request carried an OPT record.
	edns bool
	// udpSize is the client's advertised UDP payload size.
	udpSize int
}

// handle returns the wire-format response to the request msg, or nil if msg
// should be dropped (it is not a parsable query).
func (s *Server) handle(msg []byte, tcp bool) []byte {
	q, ok := parseQuery(msg)
	if !ok {
		return nil
	}
	limit := maxTCPSize
	if !tcp {
		limit = q.udpSize
	}
	resp, err := s.respond(q, false)
	if err == nil && len(resp) <= limit {
		return resp
	}
	// Too large (or an answer could not be packed): send a truncated
	// response without records so the client retries over TCP.
	resp, err = s.respond(q, true)
	if err != nil {
		return nil
	}
	return resp
}

// parseQuery parses the parts of msg the server uses. It reports false for
// messages that are not queries or cannot be parsed.
func parseQuery(msg []byte) (query, bool) {
	var p dnsmessage.Parser
	h, err := p.Start(msg)
	if err != nil || h.Response {
		return query{}, false
	}
	q := query{header: h, udpSize: minUDPSize}
	q.question, err = p.Question()
	switch {
	case errors.Is(err, dnsmessage.ErrSectionDone):
		return q, true
	case err != nil:
		return query{}, false
	}
	q.hasQuestion = true
	// The OPT record is optional; anything malformed after the question
	// is simply treated as "no EDNS".
	if p.SkipAllQuestions() != nil || p.SkipAllAnswers() != nil || p.SkipAllAuthorities() != nil {
		return q, true
	}
	for {
		rh, err := p.AdditionalHeader()
		if err != nil {
			return q, true
		}
		if rh.Type == dnsmessage.TypeOPT {
			q.edns = true
			if size := int(rh.Class); size > minUDPSize {
				q.udpSize = size
			}
			return q, true
		}
		if p.SkipAdditional() != nil {
			return q, true
		}
	}
}

// respond builds the response to q. If truncated is true, the response has
// the TC bit set and no answer records.
func (s *Server) respond(q query, truncated bool) ([]byte, error) {
	h := dnsmessage.Header{
		ID:               q.header.ID,
		Response:         true,
		OpCode:           q.header.OpCode,
		Authoritative:    true,
		RecursionDesired: q.header.RecursionDesired,
		Truncated:        truncated,
		RCode:            dnsmessage.RCodeSuccess,
	}
	var (
		key   string
		addrs []netip.Addr
		chain []string
	)
	switch {
	case q.header.OpCode != 0:
		h.RCode = dnsmessage.RCodeNotImplemented
	case !q.hasQuestion:
		h.RCode = dnsmessage.RCodeFormatError
	default:
		key = canonicalName(q.question.Name.String())
		rc, failed := s.lookupRCode(key, q.question.Type)
		if chain = s.cnameChain(key, q.question.Type); len(chain) > 0 {
			key = chain[len(chain)-1]
		}
		var exists bool
		addrs, exists = s.lookupAddrs(key)
		switch {
		case failed:
			h.RCode, chain = rc, nil
		case !exists:
			h.RCode = dnsmessage.RCodeNameError
		}
	}

	b := dnsmessage.NewBuilder(make([]byte, 0, minUDPSize), h)
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if q.hasQuestion {
		if err := b.Question(q.question); err != nil {
			return nil, err
		}
	}
	if err := b.StartAnswers(); err != nil {
		return nil, err
	}
	if h.RCode == dnsmessage.RCodeSuccess && !truncated && q.question.Class == dnsmessage.ClassINET {
		owner, err := addCNAMEs(&b, q.question.Name, chain)
		if err != nil {
			return nil, err
		}
		if err := s.addAnswers(&b, q.question, owner, key, addrs); err != nil {
			return nil, err
		}
	}
	if err := b.StartAdditionals(); err != nil {
		return nil, err
	}
	if q.edns {
		var rh dnsmessage.ResourceHeader
		if err := rh.SetEDNS0(ednsUDPSize, dnsmessage.RCodeSuccess, false); err != nil {
			return nil, err
		}
		if err := b.OPTResource(rh, dnsmessage.OPTResource{}); err != nil {
			return nil, err
		}
	}
	return b.Finish()
}

// addAnswers appends the records of type q.Type for the canonical name key,
// owned by owner (the question's name, or the end of its CNAME chain),
// whose addresses are addrs. Types other than A, AAAA, TXT and CAA have no
// records.
func (s *Server) addAnswers(b *dnsmessage.Builder, q dnsmessage.Question, owner dnsmessage.Name, key string, addrs []netip.Addr) error {
	rh := dnsmessage.ResourceHeader{Name: owner, Class: dnsmessage.ClassINET, TTL: 0}
	switch q.Type {
	case dnsmessage.TypeA, dnsmessage.TypeAAAA:
		for _, ip := range addrs {
			var err error
			switch {
			case q.Type == dnsmessage.TypeA && ip.Is4():
				err = b.AResource(rh, dnsmessage.AResource{A: ip.As4()})
			case q.Type == dnsmessage.TypeAAAA && ip.Is6():
				err = b.AAAAResource(rh, dnsmessage.AAAAResource{AAAA: ip.As16()})
			}
			if err != nil {
				return err
			}
		}
	case dnsmessage.TypeTXT:
		for _, v := range s.lookupTXT(key) {
			if err := b.TXTResource(rh, dnsmessage.TXTResource{TXT: splitTXT(v)}); err != nil {
				return err
			}
		}
	case TypeCAA:
		return s.addCAA(b, owner, key)
	}
	return nil
}

// splitTXT splits v into character-strings of at most 255 bytes, as one TXT
// record may hold a longer value only as several strings.
func splitTXT(v string) []string {
	if len(v) <= maxTXTString {
		return []string{v}
	}
	var parts []string
	for len(v) > maxTXTString {
		parts = append(parts, v[:maxTXTString])
		v = v[maxTXTString:]
	}
	return append(parts, v)
}
