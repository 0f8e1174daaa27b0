// SPDX-License-Identifier: Apache-2.0

package challenge

import (
	"crypto/tls"
	"crypto/x509/pkix"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// alpnServer is a TLS listener on 127.0.0.1 that completes handshakes with
// a fixed certificate and records the SNI it saw.
type alpnServer struct {
	ln  net.Listener
	wg  sync.WaitGroup
	mu  sync.Mutex
	sni []string
}

// startALPN serves cert on a loopback port, offering protos via ALPN.
func startALPN(t *testing.T, cert tls.Certificate, protos []string) *alpnServer {
	t.Helper()
	s := &alpnServer{}
	cfg := &tls.Config{
		NextProtos: protos,
		GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
			s.mu.Lock()
			s.sni = append(s.sni, hello.ServerName)
			s.mu.Unlock()
			return &cert, nil
		},
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatalf("tls.Listen: %v", err)
	}
	s.ln = ln
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				_ = c.(*tls.Conn).Handshake()
				// Wait for the client to hang up.
				var buf [1]byte
				_, _ = c.Read(buf[:])
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.wg.Wait()
	})
	return s
}

// port returns the listening port.
func (s *alpnServer) port(t *testing.T) int {
	return portOf(t, s.ln.Addr().String())
}

// serverNames returns the SNI values seen so far.
func (s *alpnServer) serverNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.sni...)
}

// mustCert makes a tls-alpn-01 certificate for ident carrying ext.
func mustCert(t *testing.T, ident acme.Identifier, ext *pkix.Extension) tls.Certificate {
	t.Helper()
	tg, p := parseIdentifier(ident)
	if p != nil {
		t.Fatalf("parseIdentifier(%v): %v", ident, p)
	}
	c, err := newALPNCert(tg, ext)
	if err != nil {
		t.Fatalf("newALPNCert: %v", err)
	}
	return c
}

// mustExt makes an acmeIdentifier extension for keyAuth.
func mustExt(t *testing.T, keyAuth string, critical bool) *pkix.Extension {
	t.Helper()
	ext, err := acmeIdentifierExtension(keyAuth, critical)
	if err != nil {
		t.Fatalf("acmeIdentifierExtension: %v", err)
	}
	return &ext
}

func TestTLSALPN01(t *testing.T) {
	dns := startDNS(t)
	dns.SetA("nx.test")
	const name = "example.test"
	good, err := TLSALPNCertificate(dnsIdent(name), testKeyAuth)
	if err != nil {
		t.Fatalf("TLSALPNCertificate: %v", err)
	}
	goodIP, err := TLSALPNCertificate(ipIdent("127.0.0.1"), testKeyAuth)
	if err != nil {
		t.Fatalf("TLSALPNCertificate: %v", err)
	}
	notOctets := &pkix.Extension{Id: oidACMEIdentifier(), Critical: true, Value: []byte{0x05, 0x00}} // NULL
	tests := []struct {
		name    string
		cert    tls.Certificate
		protos  []string
		ident   acme.Identifier
		refused bool
		wantSNI string
		want    acme.ProblemType
		detail  string
	}{
		{name: "ok", cert: good, wantSNI: name},
		{name: "ok ip identifier", cert: goodIP, ident: ipIdent("127.0.0.1"), wantSNI: "1.0.0.127.in-addr.arpa"},
		{name: "missing extension", cert: mustCert(t, dnsIdent(name), nil),
			want: acme.ProbUnauthorized, detail: "missing the acmeIdentifier extension (1.3.6.1.5.5.7.1.31)"},
		{name: "wrong digest", cert: mustCert(t, dnsIdent(name), mustExt(t, "other.keyauth", true)),
			want: acme.ProbUnauthorized, detail: "the acmeIdentifier extension holds"},
		{name: "non-critical extension", cert: mustCert(t, dnsIdent(name), mustExt(t, testKeyAuth, false)),
			want: acme.ProbUnauthorized, detail: "the acmeIdentifier extension is not critical"},
		{name: "extension not an octet string", cert: mustCert(t, dnsIdent(name), notOctets),
			want: acme.ProbUnauthorized, detail: "not a DER OCTET STRING"},
		{name: "wrong SAN", cert: mustCert(t, dnsIdent("other.test"), mustExt(t, testKeyAuth, true)),
			want: acme.ProbUnauthorized, detail: `requested example.test, the certificate's subjectAltName has "DNS:other.test"`},
		{name: "ip SAN for dns identifier", cert: goodIP,
			want: acme.ProbUnauthorized, detail: `subjectAltName has "IP:127.0.0.1"`},
		{name: "dns SAN for ip identifier", cert: good, ident: ipIdent("127.0.0.1"),
			want: acme.ProbUnauthorized, detail: `requested 127.0.0.1`},
		{name: "server does not offer acme-tls/1", cert: good, protos: []string{"h2", "http/1.1"},
			want: acme.ProbTLS, detail: "for tls-alpn-01: TLS handshake failed: remote error: tls: no application protocol"},
		{name: "server without ALPN", cert: good, protos: []string{},
			want: acme.ProbTLS, detail: `the server negotiated ALPN protocol none, want "acme-tls/1"`},
		{name: "connection refused", cert: good, refused: true,
			want: acme.ProbConnection, detail: "Connection refused"},
		{name: "NXDOMAIN", cert: good, ident: dnsIdent("nx.test"),
			want: acme.ProbDNS, detail: "no A/AAAA records for nx.test"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			protos := tc.protos
			if protos == nil {
				protos = []string{ALPNProto}
			}
			srv := startALPN(t, tc.cert, protos)
			port := srv.port(t)
			if tc.refused {
				port = closedPort(t)
			}
			v := newValidator(t, dns, Config{TLSALPNPort: port})
			ident := tc.ident
			if ident == (acme.Identifier{}) {
				ident = dnsIdent(name)
			}
			p := validate(t, v, request(acme.ChallengeTLSALPN01, ident))
			checkProblem(t, p, ident, tc.want, tc.detail)
			if tc.wantSNI != "" {
				if got := srv.serverNames(); len(got) != 1 || got[0] != tc.wantSNI {
					t.Errorf("SNI: got %q, want [%q]", got, tc.wantSNI)
				}
			}
		})
	}
}

// TestTLSALPN01Timeout connects to a server that never answers the
// ClientHello.
func TestTLSALPN01Timeout(t *testing.T) {
	dns := startDNS(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	defer ln.Close()
	v := newValidator(t, dns, Config{TLSALPNPort: portOf(t, ln.Addr().String()), Timeout: 300 * time.Millisecond})
	ident := dnsIdent("example.test")
	p := validate(t, v, request(acme.ChallengeTLSALPN01, ident))
	checkProblem(t, p, ident, acme.ProbConnection, "Timeout after connect")
}

func TestTLSALPNCertificate(t *testing.T) {
	for _, ident := range []acme.Identifier{dnsIdent("example.test"), ipIdent("192.0.2.7"), ipIdent("2001:db8::1")} {
		c, err := TLSALPNCertificate(ident, testKeyAuth)
		if err != nil {
			t.Fatalf("TLSALPNCertificate(%v): %v", ident, err)
		}
		tg, _ := parseIdentifier(ident)
		if p := checkALPNCert(c.Leaf, tg, testKeyAuth); p != nil {
			t.Errorf("checkALPNCert(%v): got %v, want nil", ident, p)
		}
	}
	if _, err := TLSALPNCertificate(acme.Identifier{Type: "email", Value: "a@b"}, testKeyAuth); err == nil {
		t.Errorf("TLSALPNCertificate(email): got nil error, want one")
	}
}

func TestReverseName(t *testing.T) {
	tests := []struct{ ip, want string }{
		{"1.2.3.4", "4.3.2.1.in-addr.arpa"},
		{"::ffff:10.0.0.1", "1.0.0.10.in-addr.arpa"},
		// RFC 8738 §6 example.
		{"2001:db8::567:89ab", "b.a.9.8.7.6.5.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa"},
	}
	for _, tc := range tests {
		if got := reverseName(netip.MustParseAddr(tc.ip)); got != tc.want {
			t.Errorf("reverseName(%s): got %q, want %q", tc.ip, got, tc.want)
		}
	}
}
