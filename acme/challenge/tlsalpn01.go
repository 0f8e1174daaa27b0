// SPDX-License-Identifier: Apache-2.0

package challenge

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/weir-pki/weir/acme"
)

// ALPNProto is the ALPN protocol name of tls-alpn-01 (RFC 8737 §6.2).
const ALPNProto = "acme-tls/1"

// oidACMEIdentifier returns id-pe-acmeIdentifier, 1.3.6.1.5.5.7.1.31
// (RFC 8737 §6.1).
func oidACMEIdentifier() asn1.ObjectIdentifier {
	return asn1.ObjectIdentifier{1, 3, 6, 1, 5, 5, 7, 1, 31}
}

// validateTLSALPN01 connects to TLSALPNPort offering only acme-tls/1 and
// checks the certificate presented (RFC 8737 §3; RFC 8738 §6 for IP
// addresses). Only the leaf certificate is examined.
func (v *Validator) validateTLSALPN01(ctx context.Context, t target, req acme.ValidationRequest) *acme.Problem {
	eg, dial := v.egressDialer()
	addrs, p := v.resolve(ctx, eg, t.host())
	if p != nil {
		return p
	}
	port := v.cfg.TLSALPNPort
	what := fmt.Sprintf("Connecting to %s for tls-alpn-01", net.JoinHostPort(t.host(), strconv.Itoa(port)))
	conn, err := dialAny(ctx, dial, addrs, port)
	if err != nil {
		return connProblem(what, err, false)
	}
	defer conn.Close()
	serverName := t.name
	if t.ip.IsValid() {
		// RFC 8738 §6: the SNI of an IP address is its reverse-DNS name.
		serverName = reverseName(t.ip)
	}
	tc := tls.Client(conn, &tls.Config{
		ServerName: serverName,
		NextProtos: []string{ALPNProto},
		// The certificate is self-signed by design; it is checked below.
		InsecureSkipVerify: true,
		MinVersion:         tls.VersionTLS12,
	})
	defer tc.Close()
	if err := tc.HandshakeContext(ctx); err != nil {
		if isTimeout(err) {
			return connProblem(what, err, true)
		}
		// Anything else is a TLS failure: the peer does not speak
		// acme-tls/1 properly.
		p := acme.NewProblem(acme.ProbTLS, "%s: TLS handshake failed: %v", what, err)
		p.Cause = err
		return p
	}
	cs := tc.ConnectionState()
	if cs.NegotiatedProtocol != ALPNProto {
		got := "none"
		if cs.NegotiatedProtocol != "" {
			got = strconv.Quote(cs.NegotiatedProtocol)
		}
		return acme.NewProblem(acme.ProbTLS, "%s: the server negotiated ALPN protocol %s, want %q (RFC 8737 §3)",
			what, got, ALPNProto)
	}
	if len(cs.PeerCertificates) == 0 {
		return acme.Unauthorized("%s: no certificate presented", what)
	}
	return checkALPNCert(cs.PeerCertificates[0], t, req.KeyAuthorization)
}

// checkALPNCert checks a tls-alpn-01 certificate against the identifier
// and key authorization (RFC 8737 §3): its subjectAltName holds exactly the
// identifier, and it carries a critical acmeIdentifier extension whose value
// is the DER OCTET STRING of SHA-256(keyAuth).
func checkALPNCert(cert *x509.Certificate, t target, keyAuth string) *acme.Problem {
	const bad = "Incorrect validation certificate for tls-alpn-01 challenge"
	if !sanIsExactly(cert, t) {
		return acme.Unauthorized("%s: requested %s, the certificate's subjectAltName has %s (RFC 8737 §3 wants exactly the identifier)",
			bad, t.host(), sanList(cert))
	}
	var ext *pkix.Extension
	for i := range cert.Extensions {
		if cert.Extensions[i].Id.Equal(oidACMEIdentifier()) {
			ext = &cert.Extensions[i]
			break
		}
	}
	if ext == nil {
		return acme.Unauthorized("%s: missing the acmeIdentifier extension (%s)", bad, oidACMEIdentifier())
	}
	if !ext.Critical {
		return acme.Unauthorized("%s: the acmeIdentifier extension is not critical (RFC 8737 §3)", bad)
	}
	var got []byte
	rest, err := asn1.Unmarshal(ext.Value, &got)
	if err != nil || len(rest) != 0 {
		return acme.Unauthorized("%s: the acmeIdentifier extension is not a DER OCTET STRING", bad)
	}
	want := sha256.Sum256([]byte(keyAuth))
	if subtle.ConstantTimeCompare(got, want[:]) != 1 {
		gotHex := fmt.Sprintf("%x", got)
		if len(gotHex) > 2*sha256.Size {
			gotHex = gotHex[:2*sha256.Size] + "..."
		}
		return acme.Unauthorized("%s: the acmeIdentifier extension holds %s, want SHA-256 of the key authorization %x",
			bad, gotHex, want)
	}
	return nil
}

// sanIsExactly reports whether cert's subjectAltName names t and nothing
// else.
func sanIsExactly(cert *x509.Certificate, t target) bool {
	if len(cert.EmailAddresses) != 0 || len(cert.URIs) != 0 {
		return false
	}
	if t.ip.IsValid() {
		if len(cert.DNSNames) != 0 || len(cert.IPAddresses) != 1 {
			return false
		}
		ip, ok := netip.AddrFromSlice(cert.IPAddresses[0])
		return ok && ip.Unmap() == t.ip
	}
	return len(cert.IPAddresses) == 0 && len(cert.DNSNames) == 1 && strings.EqualFold(cert.DNSNames[0], t.name)
}

// sanList describes cert's subjectAltName entries for a problem detail.
func sanList(cert *x509.Certificate) string {
	var sans []string
	for _, n := range cert.DNSNames {
		sans = append(sans, "DNS:"+n)
	}
	for _, ip := range cert.IPAddresses {
		sans = append(sans, "IP:"+ip.String())
	}
	for _, e := range cert.EmailAddresses {
		sans = append(sans, "email:"+e)
	}
	for _, u := range cert.URIs {
		sans = append(sans, "URI:"+u.String())
	}
	if len(sans) == 0 {
		return "no entries"
	}
	return excerpt([]byte(strings.Join(sans, ", ")))
}

// reverseName returns the reverse-DNS name of ip without a trailing dot:
// 4.3.2.1.in-addr.arpa for 1.2.3.4, and nibbles under ip6.arpa for IPv6
// (RFC 8738 §6).
func reverseName(ip netip.Addr) string {
	ip = ip.Unmap()
	var b strings.Builder
	if ip.Is4() {
		a := ip.As4()
		for i := len(a) - 1; i >= 0; i-- {
			b.WriteString(strconv.Itoa(int(a[i])))
			b.WriteByte('.')
		}
		b.WriteString("in-addr.arpa")
		return b.String()
	}
	const hex = "0123456789abcdef"
	a := ip.As16()
	for i := len(a) - 1; i >= 0; i-- {
		b.WriteByte(hex[a[i]&0xf])
		b.WriteByte('.')
		b.WriteByte(hex[a[i]>>4])
		b.WriteByte('.')
	}
	b.WriteString("ip6.arpa")
	return b.String()
}

// TLSALPNCertificate returns a self-signed ECDSA P-256 certificate that
// satisfies tls-alpn-01 for ident and keyAuth (RFC 8737 §3): its
// subjectAltName is exactly the identifier and it carries the critical
// acmeIdentifier extension. It is meant for tests and load tools.
func TLSALPNCertificate(ident acme.Identifier, keyAuth string) (tls.Certificate, error) {
	t, p := parseIdentifier(ident)
	if p != nil {
		return tls.Certificate{}, p
	}
	ext, err := acmeIdentifierExtension(keyAuth, true)
	if err != nil {
		return tls.Certificate{}, err
	}
	return newALPNCert(t, &ext)
}

// acmeIdentifierExtension returns the acmeIdentifier extension for keyAuth:
// the DER OCTET STRING of its SHA-256 digest (RFC 8737 §3).
func acmeIdentifierExtension(keyAuth string, critical bool) (pkix.Extension, error) {
	sum := sha256.Sum256([]byte(keyAuth))
	val, err := asn1.Marshal(sum[:])
	if err != nil {
		return pkix.Extension{}, fmt.Errorf("challenge: marshal acmeIdentifier: %w", err)
	}
	return pkix.Extension{Id: oidACMEIdentifier(), Critical: critical, Value: val}, nil
}

// newALPNCert returns a self-signed certificate for t carrying ext (none
// when ext is nil).
func newALPNCert(t target, ext *pkix.Extension) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("challenge: generate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("challenge: serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "ACME tls-alpn-01 challenge"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(7 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	if t.ip.IsValid() {
		tmpl.IPAddresses = []net.IP{t.ip.AsSlice()}
	} else {
		tmpl.DNSNames = []string{t.name}
	}
	if ext != nil {
		tmpl.ExtraExtensions = []pkix.Extension{*ext}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("challenge: create certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("challenge: parse certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}
