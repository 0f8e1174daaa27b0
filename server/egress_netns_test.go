// SPDX-License-Identifier: Apache-2.0

package server

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/acme/challenge"
)

// inNetns is set in the environment of the test binary that
// TestEgressMetadata runs again inside a network namespace of its own.
const inNetns = "WEIR_TEST_IN_NETNS"

// metadataSecret is what the metadata stand-in answers.
const metadataSecret = "AKIA-weir-test-instance-role-secret"

// TestEgressMetadata is finding 1 of the hardening review, end to end:
// a hostile http-01 responder and DNS names point weir's validator at a
// metadata service. The test runs itself again in a network namespace of
// its own (unshare -n), where the metadata addresses 169.254.169.254 and
// fd00:ec2::254 are real addresses on lo, served by a stand-in that
// counts its connections: nothing reaches it, and nothing it says comes
// back, until the policy is reloaded to allow it — and then its answer
// is still not quoted.
func TestEgressMetadata(t *testing.T) {
	if os.Getenv(inNetns) == "1" {
		egressMetadataInNetns(t)
		return
	}
	requireNetns(t)
	script := `set -e
ip link set lo up
ip addr add 169.254.169.254/32 dev lo
ip -6 addr add fd00:ec2::254/128 dev lo nodad
exec "$@"`
	cmd := exec.CommandContext(t.Context(), "unshare", "-n", "--", "sh", "-c", script, "sh",
		os.Args[0], "-test.run=^TestEgressMetadata$", "-test.count=1", "-test.v", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), inNetns+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the test in its network namespace: %v\n%s", err, out)
	}
	t.Logf("in its network namespace:\n%s", out)
}

// standIn is the metadata service: it counts connections and answers
// every request with the secret.
type standIn struct{ conns atomic.Int64 }

// listen serves the stand-in on addr until the test ends.
func (m *standIn) listen(t *testing.T, addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the metadata stand-in on %s: %v", addr, err)
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprint(w, metadataSecret)
		}),
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				m.conns.Add(1)
			}
		},
		ReadHeaderTimeout: 5 * time.Second,
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// egressMetadataInNetns is the body of TestEgressMetadata, inside the
// namespace: ports 80 and 443 are free, so weir validates on the standard
// ports as in production.
func egressMetadataInNetns(t *testing.T) {
	// The applicant's responder on 127.0.0.1:80, bound before weir starts
	// and served by the harness's handler (tokens and redirects).
	respLn, err := net.Listen("tcp", "127.0.0.1:80")
	if err != nil {
		t.Fatal(err)
	}
	e := startEnv(t, func(c *Config) { c.Challenges.HTTP01.Port = 80 })
	resp := &http.Server{Handler: http.HandlerFunc(e.ServeHTTP01), ReadHeaderTimeout: 5 * time.Second}
	go resp.Serve(respLn)
	t.Cleanup(func() { resp.Close() })

	meta := &standIn{}
	alpn := strconv.Itoa(e.cfg.Challenges.TLSALPN01.Port)
	for _, addr := range []string{"169.254.169.254:80", "169.254.169.254:" + alpn, "[fd00:ec2::254]:80"} {
		meta.listen(t, addr)
	}
	// The stand-in is really there: anything not behind weir's policy
	// reaches it.
	if r, err := http.Get("http://169.254.169.254/latest/meta-data/"); err != nil {
		t.Fatalf("the stand-in does not answer: %v", err)
	} else {
		r.Body.Close()
	}
	meta.conns.Store(0)

	e.DNS.SetA("meta.weir.test", netip.MustParseAddr("169.254.169.254"))
	e.DNS.SetA("meta6.weir.test", netip.MustParseAddr("fd00:ec2::254"))
	ctx, _, c, _ := e.Registered(t)
	redirectTo := func(to string) func(string) {
		return func(token string) { e.Redirect.Store(token, to) }
	}
	nothing := func(string) {}
	const creds = "http://169.254.169.254/latest/meta-data/iam/security-credentials/"
	tests := []struct {
		name    string
		id      string
		typ     string
		prepare func(string)
		ptype   string
		detail  string
	}{
		{"redirect to the metadata service", "redirect.weir.test", "http-01", redirectTo(creds),
			"connection", "Fetching " + creds + ": weir's validation egress policy does not allow connecting to 169.254.169.254:80"},
		{"redirect to a name of the metadata service", "redirect2.weir.test", "http-01", redirectTo("http://meta.weir.test/latest/"),
			"dns", "no valid IP addresses found for meta.weir.test"},
		{"a name whose A record is the metadata service", "meta.weir.test", "http-01", nothing,
			"dns", "no valid IP addresses found for meta.weir.test"},
		{"a name whose AAAA record is AWS's IPv6 metadata service", "meta6.weir.test", "http-01", nothing,
			"dns", "fd00:ec2::254"},
		{"tls-alpn-01 at the metadata service", "meta.weir.test", "tls-alpn-01", nothing,
			"dns", "no valid IP addresses found for meta.weir.test"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := e.attempt(ctx, c, xacme.AuthzID{Type: "dns", Value: tt.id}, tt.typ, tt.prepare)
			wantChallengeRefused(t, p, tt.ptype, tt.detail, metadataSecret)
			if n := meta.conns.Load(); n != 0 {
				t.Errorf("the metadata stand-in saw %d connections, want 0", n)
			}
		})
	}

	// Allowed live: the validator now reaches the stand-in through the
	// redirect, and still does not quote what it said.
	cfg := e.cfg
	cfg.Challenges.Egress = challenge.EgressConfig{Default: "allow", AllowedCIDRs: []string{"169.254.169.254/32"}}
	e.writeConfig(cfg)
	if err := e.srv.reload("test"); err != nil {
		t.Fatalf("reload: %v", err)
	}
	p := e.attempt(ctx, c, xacme.AuthzID{Type: "dns", Value: "allowed.weir.test"}, "http-01", redirectTo(creds))
	wantChallengeRefused(t, p, "unauthorized",
		fmt.Sprintf("Invalid response from %s: the body (%d bytes) is not the key authorization (not shown: 169.254.169.254 is not allowed.weir.test)", creds, len(metadataSecret)),
		metadataSecret)
	if n := meta.conns.Load(); n != 1 {
		t.Errorf("after allowing it, the stand-in saw %d connections, want 1", n)
	}
}
