// SPDX-License-Identifier: Apache-2.0

package dnstest

import (
	"slices"

	"golang.org/x/net/dns/dnsmessage"
)

// TypeCAA is the CAA record type (RFC 8659 §4.1), which dnsmessage does
// not name.
const TypeCAA dnsmessage.Type = 257

// maxCNAMEChain bounds a CNAME chain the server follows in one answer.
const maxCNAMEChain = 8

// CAA is one CAA record (RFC 8659 §4.1).
type CAA struct {
	// Critical sets the issuer critical flag (128).
	Critical bool
	// Tag is the property tag ("issue", "issuewild", "iodef", ...).
	Tag string
	// Value is the property value, such as "ca.example; accounturi=...".
	Value string
}

// data is the record's RDATA: flags, tag length, tag, value.
func (c CAA) data() []byte {
	var flags byte
	if c.Critical {
		flags = 128
	}
	b := append([]byte{flags, byte(len(c.Tag))}, c.Tag...)
	return append(b, c.Value...)
}

// rcodeKey selects the answers SetRCode overrides.
type rcodeKey struct {
	name string
	typ  dnsmessage.Type
}

// SetCAA replaces the CAA records of name with recs; with none, name has
// no CAA records again. The name is case-insensitive, with or without a
// trailing dot.
func (s *Server) SetCAA(name string, recs ...CAA) {
	key := canonicalName(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(recs) == 0 {
		delete(s.caa, key)
		return
	}
	if s.caa == nil {
		s.caa = make(map[string][]CAA)
	}
	s.caa[key] = slices.Clone(recs)
}

// SetCNAME makes name an alias of target: a query for name of any type
// but CNAME is answered with the CNAME record followed, the chain being
// followed within this server as a recursive resolver would, by the
// target's records of that type. An empty target removes the alias.
func (s *Server) SetCNAME(name, target string) {
	key := canonicalName(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if target == "" {
		delete(s.cname, key)
		return
	}
	if s.cname == nil {
		s.cname = make(map[string]string)
	}
	s.cname[key] = canonicalName(target)
}

// SetRCode makes queries of type t for name fail with rc and no records,
// for example dnsmessage.RCodeServerFailure for SERVFAIL; RCodeSuccess
// removes the override.
func (s *Server) SetRCode(name string, t dnsmessage.Type, rc dnsmessage.RCode) {
	k := rcodeKey{canonicalName(name), t}
	s.mu.Lock()
	defer s.mu.Unlock()
	if rc == dnsmessage.RCodeSuccess {
		delete(s.rcodes, k)
		return
	}
	if s.rcodes == nil {
		s.rcodes = make(map[rcodeKey]dnsmessage.RCode)
	}
	s.rcodes[k] = rc
}

// lookupCAA returns the CAA records of the canonical name key.
func (s *Server) lookupCAA(key string) []CAA {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.caa[key])
}

// lookupRCode returns the RCODE set by SetRCode for (key, t).
func (s *Server) lookupRCode(key string, t dnsmessage.Type) (dnsmessage.RCode, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rc, ok := s.rcodes[rcodeKey{key, t}]
	return rc, ok
}

// cnameChain returns the aliases a query of type t for the canonical
// name key goes through, in order (none for a CNAME query or a name
// without an alias), at most maxCNAMEChain of them.
func (s *Server) cnameChain(key string, t dnsmessage.Type) []string {
	if t == dnsmessage.TypeCNAME {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var chain []string
	for cur := key; len(chain) < maxCNAMEChain; {
		next, ok := s.cname[cur]
		if !ok || slices.Contains(chain, next) || next == key {
			break
		}
		chain = append(chain, next)
		cur = next
	}
	return chain
}

// addCNAMEs appends the CNAME records of chain, starting at the question
// name, and returns the name the final answers belong to.
func addCNAMEs(b *dnsmessage.Builder, qname dnsmessage.Name, chain []string) (dnsmessage.Name, error) {
	owner := qname
	for _, target := range chain {
		tn, err := dnsmessage.NewName(target + ".")
		if err != nil {
			return owner, err
		}
		rh := dnsmessage.ResourceHeader{Name: owner, Class: dnsmessage.ClassINET, TTL: 0}
		if err := b.CNAMEResource(rh, dnsmessage.CNAMEResource{CNAME: tn}); err != nil {
			return owner, err
		}
		owner = tn
	}
	return owner, nil
}

// addCAA appends the CAA records of the canonical name key, owned by
// owner.
func (s *Server) addCAA(b *dnsmessage.Builder, owner dnsmessage.Name, key string) error {
	for _, c := range s.lookupCAA(key) {
		rh := dnsmessage.ResourceHeader{Name: owner, Class: dnsmessage.ClassINET, TTL: 0}
		if err := b.UnknownResource(rh, dnsmessage.UnknownResource{Type: TypeCAA, Data: c.data()}); err != nil {
			return err
		}
	}
	return nil
}
