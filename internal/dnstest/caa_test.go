// SPDX-License-Identifier: Apache-2.0

package dnstest

import (
	"net/netip"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

func TestRawCAA(t *testing.T) {
	s := startServer(t)
	s.SetCAA("Example.test.", CAA{Tag: "issue", Value: "ca.example"}, CAA{Critical: true, Tag: "tbs", Value: "x"})
	c := dialUDP(t, s)
	m := exchangeUDP(t, c, buildQuery(t, 1, "example.TEST.", TypeCAA, true), 1)
	if m.RCode != dnsmessage.RCodeSuccess || len(m.Answers) != 2 {
		t.Fatalf("RCode %v with %d answers, want success with 2", m.RCode, len(m.Answers))
	}
	want := [][]byte{append([]byte{0, 5}, "issueca.example"...), append([]byte{128, 3}, "tbsx"...)}
	for i, rr := range m.Answers {
		u, ok := rr.Body.(*dnsmessage.UnknownResource)
		if !ok || rr.Header.Type != TypeCAA || string(u.Data) != string(want[i]) {
			t.Errorf("answer %d = %v %+v, want CAA %q", i, rr.Header.Type, rr.Body, want[i])
		}
	}
	// Removing them leaves an empty answer; other names have none.
	s.SetCAA("example.test")
	for i, name := range []string{"example.test.", "sub.example.test."} {
		id := uint16(10 + i)
		if m := exchangeUDP(t, c, buildQuery(t, id, name, TypeCAA, true), id); m.RCode != dnsmessage.RCodeSuccess || len(m.Answers) != 0 {
			t.Errorf("%s: RCode %v with %d answers, want success with 0", name, m.RCode, len(m.Answers))
		}
	}
}

func TestRawCNAME(t *testing.T) {
	s := startServer(t)
	s.SetCNAME("alias.example.test", "mid.example.test")
	s.SetCNAME("mid.example.test", "target.example.test")
	s.SetCAA("target.example.test", CAA{Tag: "issue", Value: "ca.example"})
	s.SetA("target.example.test", netip.MustParseAddr("192.0.2.9"))
	c := dialUDP(t, s)
	for i, qtype := range []dnsmessage.Type{TypeCAA, dnsmessage.TypeA} {
		id := uint16(20 + i)
		m := exchangeUDP(t, c, buildQuery(t, id, "alias.example.test.", qtype, true), id)
		if m.RCode != dnsmessage.RCodeSuccess || len(m.Answers) != 3 {
			t.Fatalf("%v: RCode %v with %d answers, want 2 CNAMEs and the record", qtype, m.RCode, len(m.Answers))
		}
		for j, want := range []string{"mid.example.test.", "target.example.test."} {
			cn, ok := m.Answers[j].Body.(*dnsmessage.CNAMEResource)
			if !ok || cn.CNAME.String() != want {
				t.Errorf("%v: answer %d = %+v, want CNAME %s", qtype, j, m.Answers[j].Body, want)
			}
		}
		if last := m.Answers[2]; last.Header.Type != qtype || last.Header.Name.String() != "target.example.test." {
			t.Errorf("%v: last answer %v for %s, want the target's record", qtype, last.Header.Type, last.Header.Name)
		}
	}
	// A loop ends.
	s.SetCNAME("target.example.test", "alias.example.test")
	if m := exchangeUDP(t, c, buildQuery(t, 30, "alias.example.test.", TypeCAA, true), 30); m.RCode != dnsmessage.RCodeSuccess {
		t.Errorf("CNAME loop: RCode %v", m.RCode)
	}
}

func TestRawRCode(t *testing.T) {
	s := startServer(t)
	s.SetCAA("fail.example.test", CAA{Tag: "issue", Value: "ca.example"})
	s.SetRCode("fail.example.test", TypeCAA, dnsmessage.RCodeServerFailure)
	c := dialUDP(t, s)
	if m := exchangeUDP(t, c, buildQuery(t, 1, "fail.example.test.", TypeCAA, true), 1); m.RCode != dnsmessage.RCodeServerFailure || len(m.Answers) != 0 {
		t.Errorf("CAA: RCode %v with %d answers, want SERVFAIL with none", m.RCode, len(m.Answers))
	}
	if m := exchangeUDP(t, c, buildQuery(t, 2, "fail.example.test.", dnsmessage.TypeA, true), 2); m.RCode != dnsmessage.RCodeSuccess {
		t.Errorf("A: RCode %v, want success (only CAA fails)", m.RCode)
	}
	s.SetRCode("fail.example.test", TypeCAA, dnsmessage.RCodeSuccess)
	if m := exchangeUDP(t, c, buildQuery(t, 3, "fail.example.test.", TypeCAA, true), 3); m.RCode != dnsmessage.RCodeSuccess || len(m.Answers) != 1 {
		t.Errorf("after clearing: RCode %v with %d answers, want the record", m.RCode, len(m.Answers))
	}
}
