// SPDX-License-Identifier: Apache-2.0

package server

import (
	"crypto/x509"
	"slices"
	"strings"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/internal/acmeenv"
)

// TestBackdateConfig: ca.backdate defaults to a minute, may be 0, and is
// refused negative, past ca.MaxBackdate, or past half the shortest
// lifetime (a profile's or ca.certificate-lifetime), naming that key.
func TestBackdateConfig(t *testing.T) {
	if got := DefaultConfig().CA.Backdate; got != time.Minute {
		t.Errorf("the default ca.backdate is %s, want 1m", got)
	}
	noProfiles := "  default-profile: \"\"\n  profiles: {}\n"
	for _, tc := range []struct {
		name, yaml, wantErr string
	}{
		{"off", "ca:\n  backdate: 0s\n", ""},
		{"the most", "ca:\n  backdate: 1h\n", ""},
		{"negative", "ca:\n  backdate: -1s\n", "ca.backdate: must not be negative"},
		{"past the bound", "ca:\n  backdate: 61m\n", "ca.backdate: 1h1m0s is more than 1h0m0s"},
		{"past half a profile's lifetime", "ca:\n  backdate: 31m\n  default-profile: p\n  profiles:\n    p: { certificate-lifetime: 1h }\n",
			"ca.backdate: 31m0s is more than 30m0s, the most a certificate of the shortest lifetime (ca.profiles.p.certificate-lifetime, 1h0m0s)"},
		{"half a profile's lifetime", "ca:\n  backdate: 30m\n  default-profile: p\n  profiles:\n    p: { certificate-lifetime: 1h }\n", ""},
		{"past half ca.certificate-lifetime", "ca:\n  backdate: 10m\n  certificate-lifetime: 10m\n" + noProfiles,
			"(ca.certificate-lifetime, 10m0s)"},
		{"past half the lifetime a profile inherits", "ca:\n  backdate: 10m\n  certificate-lifetime: 10m\n  default-profile: p\n  profiles:\n    p: {}\n",
			"(ca.certificate-lifetime, 10m0s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig("", []byte(tc.yaml))
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("err = %v, want none", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("err = %v, want one with %q", err, tc.wantErr)
			}
		})
	}
}

// TestBackdateServe: weir issues certificates backdated by ca.backdate
// (the default, a minute) with the profile's lifetime exactly, and a
// reload of ca.backdate applies to the next certificate without a
// restart. The clock is the real one: the signing time lies between the
// readings before and after the issuance.
func TestBackdateServe(t *testing.T) {
	e := startEnv(t, nil)
	ctx, _, c, _ := e.Registered(t)
	check := func(name string, backdate time.Duration) {
		t.Helper()
		before := time.Now().Truncate(time.Second)
		chain, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.AuthzID{Type: "dns", Value: name})
		after := time.Now().Truncate(time.Second)
		leaf, err := x509.ParseCertificate(chain[0])
		if err != nil {
			t.Fatal(err)
		}
		if nb := leaf.NotBefore; nb.Before(before.Add(-backdate)) || nb.After(after.Add(-backdate)) {
			t.Errorf("%s: notBefore %v, want the signing time (%v to %v) less %s", name, nb, before, after, backdate)
		}
		if got, want := leaf.NotAfter.Sub(leaf.NotBefore), e.cfg.CA.CertificateLifetime; got != want {
			t.Errorf("%s: notAfter - notBefore = %s, want the tls-server profile's lifetime %s", name, got, want)
		}
	}
	check("backdated.weir.test", time.Minute)

	cfg := e.cfg
	cfg.CA.Backdate = 0
	e.writeConfig(cfg)
	if err := e.srv.reload("test"); err != nil {
		t.Fatalf("reload: %v", err)
	}
	if r := e.srv.reloaded.restart; slices.ContainsFunc(r, func(k string) bool { return strings.HasPrefix(k, "ca") }) {
		t.Errorf("a reload of ca.backdate needs a restart: %v", r)
	}
	check("reloaded.weir.test", 0)
}

// TestBackdateReloadRunningLifetime: ca.certificate-lifetime needs a
// restart, so a reload checks ca.backdate against the lifetime in force:
// a file that raises both is refused until weir restarts.
func TestBackdateReloadRunningLifetime(t *testing.T) {
	e := startEnv(t, func(c *Config) {
		c.CA.CertificateLifetime, c.CA.DefaultProfile, c.CA.Profiles = time.Hour, "", profileMap{}
	})
	cfg := e.cfg
	cfg.CA.CertificateLifetime, cfg.CA.Backdate = 10*time.Hour, 45*time.Minute
	e.writeConfig(cfg)
	if err := e.srv.reload("test"); err == nil || !strings.Contains(err.Error(), "(ca.certificate-lifetime, 1h0m0s)") {
		t.Errorf("reload of a backdate past half the running lifetime: %v, want a refusal naming it", err)
	}
}
