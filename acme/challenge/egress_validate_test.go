// SPDX-License-Identifier: Apache-2.0

package challenge

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/internal/dnstest"
)

// secret stands for what a metadata service answers: it must never reach
// a problem detail.
const secret = "AKIAIOSFODNN7EXAMPLE-instance-secret"

// recordingDialer sends every connection to one local server, as if each
// address were reachable, and records the addresses the validator asked
// for: what the egress policy let through.
type recordingDialer struct {
	mu     sync.Mutex
	dialed []string
	to     string
}

func (d *recordingDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	d.dialed = append(d.dialed, addr)
	d.mu.Unlock()
	var nd net.Dialer
	return nd.DialContext(ctx, network, d.to)
}

// addrs returns the addresses dialed so far.
func (d *recordingDialer) addrs() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.dialed...)
}

// hostileResponder is an http-01 responder that an applicant controls:
// by Host and path it redirects (the challenge path to *redirect, when
// set), or answers as the service it stands for.
func hostileResponder(dns *dnstest.Server, redirect *atomic.Value) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		to, _ := redirect.Load().(string)
		switch {
		case r.Host == "meta.test" || strings.HasPrefix(r.URL.Path, "/latest/meta-data"):
			// Whatever answers here plays the metadata service.
			fmt.Fprint(w, secret)
		case r.Host == "internal.test":
			fmt.Fprint(w, "internal page: "+secret)
		case r.Host == "ssh.test":
			hj, _ := w.(http.Hijacker)
			c, _, err := hj.Hijack()
			if err == nil {
				fmt.Fprint(c, "SSH-2.0-"+secret+"\r\n")
				c.Close()
			}
		case r.Host == "rebind.test" && r.URL.Path == challengePath:
			// The name answered 127.0.0.1 for this connection; now it
			// answers the metadata address, for the next.
			dns.SetA("rebind.test", netip.MustParseAddr("169.254.169.254"))
			http.Redirect(w, r, "http://rebind.test/latest/meta-data/iam", http.StatusFound)
		case r.URL.Path == challengePath && to != "":
			http.Redirect(w, r, to, http.StatusFound)
		case r.URL.Path == challengePath:
			serveKeyAuth(w, r)
		default:
			http.NotFound(w, r)
		}
	}
}

// TestHTTP01Egress drives http-01 and tls-alpn-01 validations at the
// addresses and redirects an applicant chooses, against the built-in
// egress policy, with every permitted connection recorded: a refused
// address is never dialed, and nothing the metadata stand-in says comes
// back in a problem.
func TestHTTP01Egress(t *testing.T) {
	dns := startDNS(t)
	dns.SetA("meta.test", netip.MustParseAddr("169.254.169.254"))
	dns.SetA("meta6.test", netip.MustParseAddr("fd00:ec2::254"))
	dns.SetA("mixed.test", netip.MustParseAddr("169.254.169.254"), netip.MustParseAddr("127.0.0.1"))
	dns.SetA("nat64.test", netip.MustParseAddr("64:ff9b::a9fe:a9fe"))
	var redirect atomic.Value
	redirect.Store("")
	srv := httptest.NewServer(hostileResponder(dns, &redirect))
	defer srv.Close()
	// Port 80 stays port 80, so the recorded addresses are the real ones.
	rd := &recordingDialer{to: srv.Listener.Addr().String()}
	v := newValidator(t, dns, Config{DialContext: rd.dial})

	tests := []struct {
		name   string
		typ    acme.ChallengeType
		ident  acme.Identifier
		to     string // a redirect the responder answers with
		want   acme.ProblemType
		detail string
		dialed []string
	}{
		{name: "a name whose address is the metadata service", ident: dnsIdent("meta.test"),
			want: acme.ProbDNS, detail: "no valid IP addresses found for meta.test: weir's validation egress policy does not allow connecting to 169.254.169.254: 169.254.0.0/16 is link-local"},
		{name: "the AWS IPv6 metadata address", ident: dnsIdent("meta6.test"),
			want: acme.ProbDNS, detail: "fd00:ec2::254"},
		{name: "NAT64 of the metadata address", ident: dnsIdent("nat64.test"),
			want: acme.ProbDNS, detail: "embeds 169.254.169.254"},
		{name: "only the allowed address of a name is dialed", ident: dnsIdent("mixed.test"),
			dialed: []string{"127.0.0.1:80"}},
		{name: "redirect to the metadata address", ident: dnsIdent("example.test"), to: "http://169.254.169.254/latest/meta-data/",
			want: acme.ProbConnection, detail: "Fetching http://169.254.169.254/latest/meta-data/: weir's validation egress policy does not allow connecting to 169.254.169.254:80",
			dialed: []string{"127.0.0.1:80"}},
		{name: "redirect to the IPv6 metadata address over https", ident: dnsIdent("example.test"), to: "https://[fd00:ec2::254]/latest/meta-data/",
			want: acme.ProbConnection, detail: "[fd00:ec2::254]:443", dialed: []string{"127.0.0.1:80"}},
		{name: "redirect to a name of the metadata address", ident: dnsIdent("example.test"), to: "http://meta.test/",
			want: acme.ProbDNS, detail: "no valid IP addresses found for meta.test", dialed: []string{"127.0.0.1:80"}},
		{name: "redirect to 0.0.0.0", ident: dnsIdent("example.test"), to: "http://0.0.0.0/",
			want: acme.ProbConnection, detail: "this network", dialed: []string{"127.0.0.1:80"}},
		{name: "rebinding between hops", ident: dnsIdent("rebind.test"),
			want: acme.ProbDNS, detail: "no valid IP addresses found for rebind.test", dialed: []string{"127.0.0.1:80"}},
		{name: "a 200 from another host is not quoted", ident: dnsIdent("example.test"), to: "http://internal.test/status",
			want: acme.ProbUnauthorized, detail: "Invalid response from http://internal.test/status: the body (51 bytes) is not the key authorization (not shown: internal.test is not example.test)",
			dialed: []string{"127.0.0.1:80", "127.0.0.1:80"}},
		{name: "a non-HTTP reply from another host is not quoted", ident: dnsIdent("example.test"), to: "http://ssh.test/",
			want: acme.ProbConnection, detail: "not valid HTTP/1.x (what was received is not shown",
			dialed: []string{"127.0.0.1:80", "127.0.0.1:80"}},
		{name: "an IP identifier in link-local", typ: acme.ChallengeHTTP01, ident: ipIdent("169.254.169.254"),
			want: acme.ProbConnection, detail: "169.254.169.254:80: 169.254.0.0/16 is link-local"},
		{name: "tls-alpn-01 to the metadata address", typ: acme.ChallengeTLSALPN01, ident: dnsIdent("meta.test"),
			want: acme.ProbDNS, detail: "no valid IP addresses found for meta.test"},
		{name: "tls-alpn-01 to a link-local IP identifier", typ: acme.ChallengeTLSALPN01, ident: ipIdent("169.254.169.254"),
			want: acme.ProbConnection, detail: "169.254.169.254:443"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dns.SetA("rebind.test", netip.MustParseAddr("127.0.0.1"))
			rd.mu.Lock()
			rd.dialed = nil
			rd.mu.Unlock()
			typ := tt.typ
			if typ == "" {
				typ = acme.ChallengeHTTP01
			}
			redirect.Store(tt.to)
			defer redirect.Store("")
			p := validate(t, v, request(typ, tt.ident))
			checkProblem(t, p, tt.ident, tt.want, tt.detail)
			if p != nil && strings.Contains(p.Detail, secret) {
				t.Errorf("the problem quotes the stand-in's secret: %q", p.Detail)
			}
			if got := rd.addrs(); fmt.Sprint(got) != fmt.Sprint(tt.dialed) {
				t.Errorf("dialed %v, want %v", got, tt.dialed)
			}
		})
	}
}
