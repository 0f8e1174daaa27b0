// SPDX-License-Identifier: Apache-2.0

package server

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ca"
)

// TestProfileConfig: the ca.default-profile and ca.profiles keys, their
// defaults, how they fold in ca.certificate-lifetime, and every problem
// named by its key.
func TestProfileConfig(t *testing.T) {
	day := 24 * time.Hour
	type want struct {
		lifetime time.Duration
		eku      []acme.KeyUsage
		types    []acme.IdentifierType
		cn       ca.CommonNamePolicy
	}
	tests := []struct {
		name        string
		yaml        string
		wantDefault string
		want        map[string]want // the compiled profiles, exactly
		wantErr     []string        // substrings of check-config's lines, each naming a key
	}{
		{
			name: "no file: the three defaults", yaml: "", wantDefault: "tls-server",
			want: map[string]want{
				"tls-server":        {90 * day, []acme.KeyUsage{"serverAuth"}, []acme.IdentifierType{"dns", "ip"}, "none"},
				"tls-client-server": {90 * day, []acme.KeyUsage{"serverAuth", "clientAuth"}, []acme.IdentifierType{"dns", "ip"}, "first-name"},
				"shortlived":        {7 * day, []acme.KeyUsage{"serverAuth"}, []acme.IdentifierType{"dns", "ip"}, "none"},
			},
		},
		{
			name: "an older file with only ca.certificate-lifetime keeps its lifetime", yaml: "ca:\n  certificate-lifetime: 720h\n",
			wantDefault: "tls-server",
			want: map[string]want{
				"tls-server":        {30 * day, []acme.KeyUsage{"serverAuth"}, []acme.IdentifierType{"dns", "ip"}, "none"},
				"tls-client-server": {30 * day, []acme.KeyUsage{"serverAuth", "clientAuth"}, []acme.IdentifierType{"dns", "ip"}, "first-name"},
				"shortlived":        {7 * day, []acme.KeyUsage{"serverAuth"}, []acme.IdentifierType{"dns", "ip"}, "none"},
			},
		},
		{
			name: "a profiles block replaces the defaults; left-out keys get theirs",
			yaml: "ca:\n  certificate-lifetime: 240h\n  default-profile: web\n  profiles:\n    web: {}\n" +
				"    client: { certificate-lifetime: 24h, key-usages: [clientAuth], identifier-types: [dns], common-name: first-name }\n",
			wantDefault: "web",
			want: map[string]want{
				"web":    {10 * day, []acme.KeyUsage{"serverAuth"}, []acme.IdentifierType{"dns", "ip"}, "none"},
				"client": {day, []acme.KeyUsage{"clientAuth"}, []acme.IdentifierType{"dns"}, "first-name"},
			},
		},
		{
			name: "profiles off", yaml: "ca:\n  default-profile: \"\"\n  profiles: {}\n", wantDefault: "", want: map[string]want{},
		},
		{
			name: "default-profile not among the profiles", yaml: "ca:\n  default-profile: nope\n",
			wantErr: []string{`ca.default-profile: "nope" is not among ca.profiles (shortlived, tls-client-server, tls-server)`},
		},
		{
			name: "empty profiles with a default", yaml: "ca:\n  profiles: {}\n",
			wantErr: []string{`ca.profiles: is empty, but ca.default-profile names "tls-server"`},
		},
		{
			name: "profiles without a default", yaml: "ca:\n  default-profile: \"\"\n",
			wantErr: []string{"ca.default-profile: must name one of ca.profiles"},
		},
		{
			name: "every problem of a profile at once",
			yaml: "ca:\n  default-profile: p\n  profiles:\n    p:\n      certificate-lifetime: 0s\n      key-usages: [serverAuth, codeSigning, serverAuth]\n" +
				"      identifier-types: [dns, email]\n      common-name: last-name\n    q: { certificate-lifetime: -1h, key-usages: [], identifier-types: [] }\n",
			wantErr: []string{
				"ca.profiles.p.certificate-lifetime: must be a positive duration, got 0s",
				`ca.profiles.p.key-usages[1]: "codeSigning" is not serverAuth or clientAuth`,
				`ca.profiles.p.key-usages[2]: "serverAuth" is listed twice`,
				`ca.profiles.p.identifier-types[1]: "email" is not dns or ip`,
				`ca.profiles.p.common-name: "last-name" is not none or first-name`,
				"ca.profiles.q.certificate-lifetime: must be a positive duration, got -1h0m0s",
				"ca.profiles.q.key-usages: must list serverAuth, clientAuth or both",
				"ca.profiles.q.identifier-types: must list dns, ip or both",
			},
		},
		{
			name: "a bad profile name", yaml: "ca:\n  default-profile: ok\n  profiles:\n    ok: {}\n    \"has space\": {}\n",
			wantErr: []string{"ca.profiles.has space: the name"},
		},
		{
			name: "an unknown key in a profile", yaml: "ca:\n  profiles:\n    tls-server:\n      lifetime: 24h\n",
			wantErr: []string{"ca.profiles.tls-server.lifetime: unknown key; ca.profiles.tls-server takes description, certificate-lifetime,"},
		},
		{
			name: "a bad duration in a profile", yaml: "ca:\n  profiles:\n    tls-server:\n      certificate-lifetime: soon\n",
			wantErr: []string{`ca.profiles.tls-server.certificate-lifetime: "soon" is not a duration (e.g. 10s, 5m, 2h)`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseConfig("", []byte(tt.yaml))
			problems := problemLines(err)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("parseConfig: got nil error, want errors naming %q", tt.wantErr)
				}
				for _, w := range tt.wantErr {
					if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, w) }) {
						t.Errorf("check-config problems %q: want one containing %q", problems, w)
					}
				}
				if len(problems) != len(tt.wantErr) {
					t.Errorf("check-config: got %d problems %q, want %d", len(problems), problems, len(tt.wantErr))
				}
				return
			}
			if err != nil || len(problems) > 0 {
				t.Fatalf("parseConfig: %v; check-config: %q; want neither", err, problems)
			}
			ps, err := newProfiles(cfg.CA)
			if err != nil {
				t.Fatalf("newProfiles: %v", err)
			}
			if got := ps.Default(); got != tt.wantDefault {
				t.Errorf("Default: got %q, want %q", got, tt.wantDefault)
			}
			if got, want := ps.Names(), slices.Sorted(maps.Keys(tt.want)); !slices.Equal(got, want) {
				t.Errorf("Names: got %q, want %q", got, want)
			}
			for name, w := range tt.want {
				p, ok := ps.Get(name)
				if !ok {
					continue
				}
				got := want{p.Lifetime, p.KeyUsages, p.IdentifierTypes, p.CommonName}
				if got.lifetime != w.lifetime || !slices.Equal(got.eku, w.eku) || !slices.Equal(got.types, w.types) || got.cn != w.cn {
					t.Errorf("profile %s: got %+v, want %+v", name, got, w)
				}
			}
		})
	}
}
