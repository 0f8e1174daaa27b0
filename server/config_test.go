// SPDX-License-Identifier: Apache-2.0

package server

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		wantErr []string // substrings, each naming a key
		check   func(t *testing.T, c Config)
	}{
		{name: "empty file gives defaults", yaml: "", check: func(t *testing.T, c Config) {
			if c.Server.Listen != "localhost:14000" || c.CA.CertificateLifetime != 2160*time.Hour {
				t.Errorf("defaults not applied: %+v", c)
			}
		}},
		{name: "partial block keeps other defaults", yaml: "challenges:\n  http-01: { port: 5002 }\n", check: func(t *testing.T, c Config) {
			if c.Challenges.HTTP01.Port != 5002 || !enabled(c.Challenges.HTTP01.Enabled) || c.Challenges.TLSALPN01.Port != 443 {
				t.Errorf("challenges = %+v", c.Challenges)
			}
		}},
		{name: "unknown key", yaml: "server:\n  lisen: x\n", wantErr: []string{"line 2: server.lisen: unknown key; did you mean listen?"}},
		{name: "unknown top-level key", yaml: "rate-limits: {}\n", wantErr: []string{"rate-limits"}},
		{name: "bad duration", yaml: "ca:\n  certificate-lifetime: soon\n", wantErr: []string{`line 2: ca.certificate-lifetime: "soon" is not a duration`}},
		{name: "every problem at once", yaml: "server:\n  listen: nope\nca:\n  certificate-lifetime: 0s\nchallenges:\n  http-01: { port: 70000 }\nstorage:\n  driver: mysql\nlog:\n  level: loud\n",
			wantErr: []string{"server.listen", "ca.certificate-lifetime", "challenges.http-01.port", "storage.driver", "log.level"}},
		{name: "half a TLS pair", yaml: "server:\n  tls: { cert-file: a.pem }\n", wantErr: []string{"server.tls"}},
		{name: "plain-HTTP listener on the ACME one", yaml: "server:\n  http: { listen: \"localhost:14000\" }\n", wantErr: []string{"server.http.listen: \"localhost:14000\" is another listener's address"}},
		{name: "plain-HTTP URL over https", yaml: "server:\n  http: { external-url: \"https://crl.example\" }\n", wantErr: []string{"server.http.external-url: \"https://crl.example\" must be an http:// URL"}},
		{name: "plain-HTTP URL with a path", yaml: "server:\n  http: { external-url: \"http://crl.example/pki\" }\n", wantErr: []string{"server.http.external-url"}},
		{name: "plain-HTTP URL without its listener", yaml: "server:\n  http: { listen: \"\", external-url: \"http://crl.example\" }\n", wantErr: []string{"server.http.external-url: set, but server.http.listen is \"\" (off)"}},
		{name: "bad policy", yaml: "ca:\n  policy:\n    allowed-ip-ranges: [10.0.0.0/33]\n    denied-domains: ['bad domain']\n", wantErr: []string{"allowed-ip-ranges[0]", "denied-domains[0]"}},
		{name: "all challenges off", yaml: "challenges:\n  http-01: { enabled: false }\n  dns-01: { enabled: false }\n  tls-alpn-01: { enabled: false }\n", wantErr: []string{"at least one challenge"}},
		{name: "bad resolver", yaml: "challenges:\n  dns-resolver: 127.0.0.1\n", wantErr: []string{"challenges.dns-resolver"}},
		{name: "name constraints without a policy", yaml: "ca:\n  name-constraints: true\n", wantErr: []string{"ca.name-constraints: needs ca.policy.allowed-domains"}},
		{name: "name constraints on a configured intermediate", yaml: "ca:\n  name-constraints: true\n  intermediate: { cert-file: i.pem, key-file: i.key }\n  policy: { allowed-domains: [corp.example] }\n",
			wantErr: []string{"ca.name-constraints: applies to a root and intermediate weir generates"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseConfig("", []byte(tt.yaml))
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("err = %v, want none", err)
				}
				tt.check(t, cfg)
				return
			}
			if err == nil {
				t.Fatalf("err = nil, want errors naming %v", tt.wantErr)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v\nwant it to mention %q", err, w)
				}
			}
		})
	}
}

// TestFreshStartAndRestart: serve with defaults creates the CA with 0600
// keys, root.pem and the database, and a second start reuses them.
func TestFreshStartAndRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := DefaultConfig()
	cfg.DataDir = dir + "/weir-data"
	cfg.Server.Listen = "127.0.0.1:0"
	cfg.Log.Level = "error"
	first, err := New(t.Context(), cfg, Options{Log: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	fp := first.rootFP
	first.Close()
	for _, f := range []string{fileCARootKey, fileCAIntKey, fileTLSKey} {
		st, err := os.Stat(dataPath(cfg.DataDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s mode = %04o, want 0600", f, st.Mode().Perm())
		}
	}
	for _, f := range []string{fileRootPEM, "weir.db"} {
		if _, err := os.Stat(dataPath(cfg.DataDir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	h := first.svc.CA().Hierarchy()
	if got := h.Root.NotAfter.Sub(h.Root.NotBefore); got < 10*365*24*time.Hour {
		t.Errorf("root validity %s, want 10 years", got)
	}
	if got := h.Intermediate.NotAfter.Sub(h.Intermediate.NotBefore); got < 5*365*24*time.Hour || got > 6*365*24*time.Hour {
		t.Errorf("intermediate validity %s, want 5 years", got)
	}
	second, err := New(t.Context(), cfg, Options{Log: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if second.rootFP != fp {
		t.Errorf("restart made a new root: %s, was %s", second.rootFP, fp)
	}
	if !second.serving.leaf().Equal(first.serving.leaf()) {
		t.Error("restart issued a new server certificate instead of reusing it")
	}
	// A key readable by others is refused.
	if err := os.Chmod(dataPath(cfg.DataDir, fileCAIntKey), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New(t.Context(), cfg, Options{Log: os.Stderr}); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("start with a 0644 key: err = %v, want a refusal", err)
	}
}

// TestDockerfile: the configuration baked into the image
// (deploy/image/weir.yaml, which deploy/image.sh puts at /etc/weir/weir.yaml)
// parses, keeps the data in the /data volume and the admin listener on
// loopback, publishes the plain-HTTP listener, and the HEALTHCHECK and CMD
// use it; the image is the release's static binary FROM scratch, as user
// 65532.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	y, err := os.ReadFile("../deploy/image/weir.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseConfig("", y)
	if err != nil {
		t.Fatalf("the image's configuration: %v", err)
	}
	if cfg.DataDir != "/data" || !strings.Contains(df, "VOLUME /data") {
		t.Errorf("data-dir %q, want the /data volume", cfg.DataDir)
	}
	if host, _, _ := strings.Cut(cfg.Admin.Listen, ":"); !isLoopbackHost(host) || !enabled(cfg.Admin.Enabled) {
		t.Errorf("admin listener %q, want enabled on loopback", cfg.Admin.Listen)
	}
	if got := ArtefactURL(cfg); got != "http://localhost:14080" {
		t.Errorf("the image's certificates would name %s for their CRLs, want the published http://localhost:14080", got)
	}
	if got := readyURL(cfg); got != "http://127.0.0.1:14001/readyz" {
		t.Errorf("the HEALTHCHECK would ask %s", got)
	}
	script, err := os.ReadFile("../deploy/image.sh")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(script), `"$REPO/deploy/image/weir.yaml" "$ctx/rootfs/etc/weir/weir.yaml"`) {
		t.Error("deploy/image.sh does not put deploy/image/weir.yaml at /etc/weir/weir.yaml")
	}
	for _, w := range []string{
		"\nFROM scratch\n",
		`CMD ["/weir", "healthcheck", "-config", "/etc/weir/weir.yaml"`,
		`CMD ["serve", "-config", "/etc/weir/weir.yaml"]`,
		`ENTRYPOINT ["/weir"]`,
		"COPY rootfs/ /\n",
		"COPY --chown=65532:65532 data /data\n",
		"USER 65532:65532",
		"EXPOSE 14000 14001 14080",
	} {
		if !strings.Contains(df, w) {
			t.Errorf("the Dockerfile lacks %s", w)
		}
	}
	if strings.Contains(df, "<<") || strings.Contains(df, "--mount") {
		t.Error("the Dockerfile uses BuildKit's heredocs or RUN --mount, which buildah 1.28 does not build")
	}
}
