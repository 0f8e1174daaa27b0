// SPDX-License-Identifier: Apache-2.0

package system

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/server"
)

// orderJSON is the part of an order resource the tests read.
type orderJSON struct {
	Status         string        `json:"status"`
	Profile        string        `json:"profile"`
	Authorizations []string      `json:"authorizations"`
	Finalize       string        `json:"finalize"`
	Error          *acme.Problem `json:"error"`
	Certificate    string        `json:"certificate"`
}

// profileOrder sends a hand-made new-order with a profile (x/crypto/acme
// cannot send one); extra fields go into the payload too.
func (e *env) profileOrder(key crypto.Signer, kid, profile string, extra map[string]any, names ...string) acmeenv.Response {
	e.t.Helper()
	var ids []acme.Identifier
	for _, n := range names {
		if net.ParseIP(n) != nil {
			ids = append(ids, acme.Identifier{Type: acme.IdentifierIP, Value: n})
		} else {
			ids = append(ids, acme.Identifier{Type: acme.IdentifierDNS, Value: n})
		}
	}
	payload := map[string]any{"identifiers": ids}
	if profile != "" {
		payload["profile"] = profile
	}
	maps.Copy(payload, extra)
	b, err := json.Marshal(payload)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.PostJWS(key, e.Base+"/acme/new-order", b, acmeenv.SignOpts{KID: kid})
}

// readyProfileOrder creates an order under profile by hand and solves its
// authorizations with http-01 through x/crypto/acme; it returns the order
// URL and resource once ready.
func (e *env) readyProfileOrder(ctx context.Context, c *xacme.Client, kid, profile string, names ...string) (string, orderJSON) {
	e.t.Helper()
	res := e.profileOrder(c.Key, kid, profile, nil, names...)
	acmeenv.WantStatus(e.t, res, http.StatusCreated)
	var o orderJSON
	if err := json.Unmarshal(res.Body, &o); err != nil {
		e.t.Fatal(err)
	}
	for _, u := range o.Authorizations {
		e.Solve(ctx, c, u, "http-01")
	}
	url := res.Header.Get("Location")
	if _, err := c.WaitOrder(ctx, url); err != nil {
		e.t.Fatalf("wait order: %v", err)
	}
	return url, o
}

// csrWithCN is a CSR for names whose subject CN is cn ("" for none).
func csrWithCN(t *testing.T, key crypto.Signer, cn string, names ...string) []byte {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: cn}, DNSNames: names}, key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// getOrder fetches an order resource with POST-as-GET.
func (e *env) getOrder(key crypto.Signer, kid, url string) orderJSON {
	e.t.Helper()
	res := e.PostJWS(key, url, []byte{}, acmeenv.SignOpts{KID: kid})
	acmeenv.WantStatus(e.t, res, http.StatusOK)
	var o orderJSON
	if err := json.Unmarshal(res.Body, &o); err != nil {
		e.t.Fatal(err)
	}
	return o
}

// directoryProfiles reads meta.profiles from the directory.
func (e *env) directoryProfiles() map[string]string {
	e.t.Helper()
	res, err := e.HTTP.Get(e.Base + "/directory")
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	var dir struct {
		Meta struct {
			Profiles map[string]string `json:"profiles"`
		} `json:"meta"`
	}
	if err := json.NewDecoder(res.Body).Decode(&dir); err != nil {
		e.t.Fatal(err)
	}
	return dir.Meta.Profiles
}

// TestProfiles: certificate profiles end to end (draft-aaron-acme-profiles):
// meta.profiles, new-order's profile, the issued certificate's lifetime,
// EKUs and CN, the default profile, invalidProfile, identifier types, the
// lifetime as the ceiling of notAfter, and a live reload.
func TestProfiles(t *testing.T) {
	day := 24 * time.Hour
	e := startEnv(t, func(c *server.Config) {
		c.CA.Profiles["client-dns"] = acme.ProfileConfig{
			Description: "client certificates for DNS names", CertificateLifetime: &day,
			KeyUsages:       []acme.KeyUsage{acme.KeyUsageClientAuth},
			IdentifierTypes: []acme.IdentifierType{acme.IdentifierDNS}, CommonName: ca.CommonNameFirstName,
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	c := e.Client(acmeenv.NewKey(t))
	acct, err := c.Register(ctx, &xacme.Account{}, xacme.AcceptTOS)
	if err != nil {
		t.Fatal(err)
	}
	kid := acct.URI
	serverEKU := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}

	// issue finalizes a ready order with a CSR whose CN is cn and checks
	// the certificate: lifetime, EKUs, CN, and the profile stored with it
	// and shown on the order.
	issue := func(t *testing.T, url string, o orderJSON, cn string, names []string,
		wantProfile string, wantLife time.Duration, wantEKU []x509.ExtKeyUsage, wantCN string) {
		t.Helper()
		chain, _, err := c.CreateOrderCert(ctx, o.Finalize, csrWithCN(t, acmeenv.NewKey(t), cn, names...), true)
		if err != nil {
			t.Fatalf("finalize: %v", err)
		}
		leaf, err := x509.ParseCertificate(chain[0])
		if err != nil {
			t.Fatal(err)
		}
		if got := leaf.NotAfter.Sub(leaf.NotBefore); got != wantLife {
			t.Errorf("lifetime: got %s, want %s", got, wantLife)
		}
		if !slices.Equal(leaf.ExtKeyUsage, wantEKU) {
			t.Errorf("ExtKeyUsage: got %v, want %v", leaf.ExtKeyUsage, wantEKU)
		}
		if leaf.Subject.CommonName != wantCN {
			t.Errorf("subject CN: got %q, want %q", leaf.Subject.CommonName, wantCN)
		}
		stored, err := e.srv.Store().GetCertificate(ctx, ca.SerialHex(leaf.SerialNumber))
		if err != nil {
			t.Fatal(err)
		}
		if stored.Profile != wantProfile {
			t.Errorf("stored certificate's profile: got %q, want %q", stored.Profile, wantProfile)
		}
		if got := e.getOrder(c.Key, kid, url); got.Status != "valid" || got.Profile != wantProfile {
			t.Errorf("valid order: status %q profile %q, want valid under %q", got.Status, got.Profile, wantProfile)
		}
	}

	t.Run("directory lists the profiles", func(t *testing.T) {
		got := e.directoryProfiles()
		want := map[string]string{"client-dns": "client certificates for DNS names"}
		for name, p := range server.DefaultConfig().CA.Profiles {
			want[name] = p.Description
		}
		if !maps.Equal(got, want) {
			t.Errorf("meta.profiles: got %v, want %v", got, want)
		}
	})
	t.Run("shortlived", func(t *testing.T) {
		url, o := e.readyProfileOrder(ctx, c, kid, "shortlived", "short.weir.test")
		if o.Profile != "shortlived" {
			t.Errorf("new order's profile: got %q, want shortlived", o.Profile)
		}
		issue(t, url, o, "", []string{"short.weir.test"}, "shortlived", 7*day, serverEKU, "")
	})
	t.Run("no profile gets the default, tls-server", func(t *testing.T) {
		url, o := e.readyProfileOrder(ctx, c, kid, "", "plain.weir.test")
		if o.Profile != "tls-server" {
			t.Errorf("new order's profile: got %q, want tls-server", o.Profile)
		}
		issue(t, url, o, "", []string{"plain.weir.test"}, "tls-server", e.cfg.CA.CertificateLifetime, serverEKU, "")
	})
	t.Run("tls-client-server: both EKUs, CN from the CSR", func(t *testing.T) {
		names := []string{"b.mtls.weir.test", "a.mtls.weir.test"}
		url, o := e.readyProfileOrder(ctx, c, kid, "tls-client-server", names...)
		issue(t, url, o, "b.mtls.weir.test", names, "tls-client-server", e.cfg.CA.CertificateLifetime,
			[]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, "b.mtls.weir.test")
	})
	t.Run("client-dns: clientAuth only, CN the first name", func(t *testing.T) {
		names := []string{"y.client.weir.test", "x.client.weir.test"}
		url, o := e.readyProfileOrder(ctx, c, kid, "client-dns", names...)
		issue(t, url, o, "", names, "client-dns", day, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, "x.client.weir.test")
	})

	t.Run("unknown profile is invalidProfile", func(t *testing.T) {
		res := e.profileOrder(c.Key, kid, "classic", nil, "u.weir.test")
		typ, detail := res.Problem()
		if res.Status != http.StatusBadRequest || typ != string(acme.ProbInvalidProfile) {
			t.Fatalf("got %d %s, want 400 %s: %s", res.Status, typ, acme.ProbInvalidProfile, res.Body)
		}
		for _, name := range []string{`"classic"`, "client-dns", "shortlived", "tls-client-server", "tls-server"} {
			if !strings.Contains(detail, name) {
				t.Errorf("detail %q does not name %s", detail, name)
			}
		}
	})
	t.Run("a type the profile does not allow is rejectedIdentifier", func(t *testing.T) {
		res := e.profileOrder(c.Key, kid, "client-dns", nil, "ok.client.weir.test", "127.0.0.1")
		var p acme.Problem
		_ = json.Unmarshal(res.Body, &p)
		if res.Status != http.StatusBadRequest || p.Type != acme.ProbRejectedIdentifier {
			t.Fatalf("got %d %s, want 400 rejectedIdentifier: %s", res.Status, p.Type, res.Body)
		}
		if p.Identifier == nil || *p.Identifier != (acme.Identifier{Type: acme.IdentifierIP, Value: "127.0.0.1"}) {
			t.Errorf("identifier: got %v, want ip 127.0.0.1", p.Identifier)
		}
		// The same IP under a profile that allows it is fine.
		acmeenv.WantStatus(t, e.profileOrder(c.Key, kid, "tls-server", nil, "127.0.0.1"), http.StatusCreated)
	})
	t.Run("notAfter within the profile's lifetime", func(t *testing.T) {
		na := func(d time.Duration) map[string]any {
			return map[string]any{"notAfter": time.Now().Add(d).UTC().Format(time.RFC3339)}
		}
		res := e.profileOrder(c.Key, kid, "shortlived", na(8*day), "na.weir.test")
		if typ, detail := res.Problem(); res.Status != http.StatusBadRequest || typ != string(acme.ProbMalformed) ||
			!strings.Contains(detail, "exceeds the maximum certificate lifetime of 168h0m0s") {
			t.Errorf("notAfter in 8 days under shortlived: got %d %s", res.Status, res.Body)
		}
		acmeenv.WantStatus(t, e.profileOrder(c.Key, kid, "shortlived", na(6*day), "na.weir.test"), http.StatusCreated)
		acmeenv.WantStatus(t, e.profileOrder(c.Key, kid, "tls-server", na(8*day), "na.weir.test"), http.StatusCreated)
	})

	t.Run("reload", func(t *testing.T) {
		// An order made ready under shortlived before the profile goes.
		url, o := e.readyProfileOrder(ctx, c, kid, "shortlived", "gone.weir.test")

		cfg := e.cfg
		cfg.CA.DefaultProfile = "tls-client-server"
		cfg.CA.Profiles = server.DefaultConfig().CA.Profiles
		delete(cfg.CA.Profiles, "shortlived")
		e.writeConfig(cfg)
		if err := e.srv.Reload("test"); err != nil {
			t.Fatalf("reload: %v", err)
		}
		if got, want := slices.Sorted(maps.Keys(e.directoryProfiles())), []string{"tls-client-server", "tls-server"}; !slices.Equal(got, want) {
			t.Errorf("meta.profiles after reload: got %q, want %q", got, want)
		}
		res := e.profileOrder(c.Key, kid, "", nil, "after.weir.test")
		acmeenv.WantStatus(t, res, http.StatusCreated)
		var after orderJSON
		_ = json.Unmarshal(res.Body, &after)
		if after.Profile != "tls-client-server" {
			t.Errorf("order without a profile after reload: got %q, want the new default tls-client-server", after.Profile)
		}
		if typ, _ := e.profileOrder(c.Key, kid, "shortlived", nil, "after.weir.test").Problem(); typ != string(acme.ProbInvalidProfile) {
			t.Errorf("shortlived after reload: got %s, want invalidProfile", typ)
		}
		_, _, err := c.CreateOrderCert(ctx, o.Finalize, csrWithCN(t, acmeenv.NewKey(t), "", "gone.weir.test"), true)
		var ae *xacme.Error
		if !errors.As(err, &ae) || ae.ProblemType != string(acme.ProbInvalidProfile) || !strings.Contains(ae.Detail, "create a new order") {
			t.Errorf("finalize under a withdrawn profile: got %v, want invalidProfile", err)
		}
		// It can never be finalized now (acme.Service.Finalize).
		if got := e.getOrder(c.Key, kid, url); got.Status != "invalid" {
			t.Errorf("order after the refused finalize: status %q, want invalid", got.Status)
		}

		// An invalid edit is refused and the profiles in force stay.
		cfg.CA.DefaultProfile = "nope"
		e.writeConfig(cfg)
		if err := e.srv.Reload("test"); err == nil || !strings.Contains(err.Error(), "ca.default-profile") {
			t.Errorf("reload with a bad default-profile: got %v, want an error naming ca.default-profile", err)
		}
		if got := e.srv.Service().Profiles().Default(); got != "tls-client-server" {
			t.Errorf("default profile after a refused reload: got %q, want tls-client-server", got)
		}
	})
}
