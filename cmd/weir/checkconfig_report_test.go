// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// overrideRuleProblem is the problem the rate-limiting config's rule
// about an override's fields reports for the file of the four-problem row.
const overrideRuleProblem = "FILE:10: rate-limiting.overrides[0].burst: "

// TestCheckConfigReport: check-config reports every problem of a file in
// one pass, sorted by line, each as FILE:LINE: key.path: message in the
// operator's words (wantCheckConfig).
func TestCheckConfigReport(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // none: the file is good
	}{
		{name: "an unknown key, a type error, a zero limit and a misplaced override field",
			yaml: "rate-limiting:\n" +
				"  order-creation:\n" +
				"    order-brust: 3\n" +
				"    orders-per-account-per-hour: big\n" +
				"  pending-authorizations:\n" +
				"    max: 0\n" +
				"  overrides:\n" +
				"    - limit: order-creation\n" +
				"      key: account:7\n" +
				"      burst: 10\n",
			want: []string{
				"FILE:3: rate-limiting.order-creation.order-brust: unknown key; did you mean order-burst?",
				`FILE:4: rate-limiting.order-creation.orders-per-account-per-hour: "big" is not a whole number`,
				"FILE:6: rate-limiting.pending-authorizations.max: must be at least 1",
				overrideRuleProblem,
			}},
		{name: "only good values", yaml: "data-dir: /var/lib/weir\n" +
			"server: {listen: \"127.0.0.1:14000\", max-body-bytes: 2048, trusted-proxies: [10.0.0.0/8]}\n" +
			"acme:\n  order-lifetime: &life 24h\n  pending-authz-lifetime: *life\n  max-identifiers: 10\n  renewal-info: {window-start: 0.5, window-end: 0.7}\n" +
			"ca:\n  allow-ed25519: true\n  default-profile: web\n  profiles:\n    web: {certificate-lifetime: 240h, key-usages: [serverAuth]}\n" +
			"  policy: {allowed-domains: [corp.example], allowed-ip-ranges: [\"10.0.0.0/8\"]}\n" +
			"challenges: {timeout: 5s, http-01: {enabled: false}, caa: {enabled: false}}\n" +
			"rate-limiting:\n  whitelist: [192.0.2.1]\n  order-creation: {order-burst: 3}\n  overrides:\n    - {limit: order-creation, key: \"account:7\", order-burst: 9}\n" +
			"admin: {enabled: false}\nlog: {level: debug}\n"},
		{name: "empty file: the defaults", yaml: ""},
		{name: "only comments: the defaults", yaml: "# nothing set\n\n# yet\n"},
		{name: "every kind of type error",
			yaml: "server:\n" +
				"  max-body-bytes: big\n" +
				"  listen: [a, b]\n" +
				"  tls: on\n" +
				"acme:\n" +
				"  order-lifetime: ten\n" +
				"  nonce-lifetime: 10\n" +
				"  max-identifiers: 99999999999999999999\n" +
				"  renewal-info: {window-start: half}\n" +
				"admin:\n" +
				"  enabled: yes please\n" +
				"  hosts: weir.example\n" +
				"ca:\n" +
				"  policy: [a]\n" +
				"  profiles: [x]\n" +
				"challenges:\n" +
				"  caa: {identities: [ok.example, {a: b}]}\n" +
				"rate-limiting:\n" +
				"  overrides: {limit: x}\n",
			want: []string{
				`FILE:2: server.max-body-bytes: "big" is not a whole number`,
				"FILE:3: server.listen: must be a single value, not a list",
				`FILE:4: server.tls: must be a mapping of keys, not the single value "on"`,
				`FILE:6: acme.order-lifetime: "ten" is not a duration (e.g. 10s, 5m, 2h)`,
				`FILE:7: acme.nonce-lifetime: "10" is not a duration: give it a unit (e.g. 10s, 5m, 2h)`,
				"FILE:8: acme.max-identifiers: 99999999999999999999 is too large",
				`FILE:9: acme.renewal-info.window-start: "half" is not a number`,
				`FILE:11: admin.enabled: "yes please" is not true or false`,
				`FILE:12: admin.hosts: must be a list, not the single value "weir.example"; write it as [weir.example], or one "- item" line per item`,
				"FILE:14: ca.policy: must be a mapping of keys, not a list",
				"FILE:15: ca.profiles: must be a mapping of names to values, not a list",
				"FILE:17: challenges.caa.identities[1]: must be a single value, not a mapping",
				"FILE:19: rate-limiting.overrides: must be a list, not a mapping",
			}},
		{name: "unknown keys at every depth",
			yaml: "bogus-key: 1\n" +
				"server:\n" +
				"  lisen: x\n" +
				"ca:\n" +
				"  profiles:\n" +
				"    x:\n" +
				"      bogus: 1\n" +
				"rate-limiting:\n" +
				"  global: {enabled: true, requests_per_minute: 5}\n" +
				"  overrides:\n" +
				"    - {limit: order-creation, key: \"account:1\"}\n" +
				"    - {limit: order-creation, key: \"account:2\", bogus: 2}\n",
			want: []string{
				"FILE:1: bogus-key: unknown key; the top level takes data-dir, server, acme, ca, challenges, storage, rate-limiting, admin, log",
				"FILE:3: server.lisen: unknown key; did you mean listen?",
				// The profiles replace the defaults, so the default profile
				// is gone; ca.default-profile is not set, so the line is ca's.
				`FILE:4: ca.default-profile: "tls-server" is not among ca.profiles (x)`,
				"FILE:7: ca.profiles.x.bogus: unknown key; ca.profiles.x takes description, certificate-lifetime, key-usages, identifier-types, common-name",
				"FILE:9: rate-limiting.global.requests_per_minute: unknown key; did you mean requests-per-minute?",
				"FILE:12: rate-limiting.overrides[1].bogus: unknown key; rate-limiting.overrides[1] takes limit, key,",
			}},
		{name: "a key set twice", yaml: "server:\n  listen: \"127.0.0.1:1\"\n  listen: nope\n",
			want: []string{"FILE:3: server.listen: is set twice (first on line 2)"}},
		{name: "a value error on a list item, in a profile with a dot in its name",
			yaml: "ca:\n  default-profile: a.b\n  profiles:\n    a.b:\n      key-usages: [serverAuth, codeSigning]\n  policy:\n    allowed-ip-ranges:\n      - 10.0.0.0/8\n      - 10.0.0.0/33\n",
			want: []string{
				`FILE:5: ca.profiles.a.b.key-usages[1]: "codeSigning" is not serverAuth or clientAuth`,
				`FILE:9: ca.policy.allowed-ip-ranges[1]: "10.0.0.0/33" is not an IP address or CIDR`,
			}},
		{name: "a default's problem is on its nearest key, or on none",
			yaml: "rate-limiting:\n  order-creation:\n    enabled: true\nacme:\n  max-identifiers: 200\n",
			want: []string{
				"FILE:1: rate-limiting.pending-authorizations.max: 30 is smaller than acme.max-identifiers (200)",
				"FILE:2: rate-limiting.order-creation.san-budget-per-account-per-hour: 100 is smaller than acme.max-identifiers (200)",
			}},
		{name: "a problem with no line comes last",
			yaml: "log: {level: loud}\nacme: {max-identifiers: 200}\nserver: {listen: nope}\n",
			want: []string{
				`FILE:1: log.level: "loud" is not one of debug, info, warn, error`,
				`FILE:3: server.listen: "nope" is not host:port`,
				"FILE: rate-limiting.order-creation.san-budget-per-account-per-hour: 100 is smaller than acme.max-identifiers (200)",
				"FILE: rate-limiting.pending-authorizations.max: 30 is smaller than acme.max-identifiers (200)",
			}},
		{name: "all challenges off: the problem of a block",
			yaml: "challenges:\n  http-01: {enabled: false}\n  dns-01: {enabled: false}\n  tls-alpn-01: {enabled: false}\n",
			want: []string{"FILE:1: challenges: at least one challenge type must be enabled"}},
		{name: "not YAML at all", yaml: "name: weir\n\x00\x01\x02 binary\n", want: []string{"FILE:2: control characters are not allowed"}},
		{name: "a text, not a mapping", yaml: "This is not a configuration\n",
			want: []string{`FILE:1: the file must be a mapping of keys (data-dir:, server:, …), not the single value "This is not a configuration"`}},
		{name: "a list, not a mapping", yaml: "- server\n- acme\n",
			want: []string{"FILE:1: the file must be a mapping of keys (data-dir:, server:, …), not a list"}},
		{name: "a tab indents a line", yaml: "server:\n\tlisten: x\n",
			want: []string{"FILE:2: a tab indents this line; YAML indents with spaces only"}},
		{name: "a tab indents a later line", yaml: "server:\n  listen: x\n\tmax-body-bytes: 3\n",
			want: []string{"FILE:3: a tab indents this line; YAML indents with spaces only"}},
		{name: "an unclosed list", yaml: "log: {level: info}\nserver:\n  trusted-proxies: [10.0.0.0/8\n",
			want: []string{"FILE:3: did not find expected ',' or ']'"}},
		{name: "a second document", yaml: "data-dir: a\n---\ndata-dir: b\n",
			want: []string{"FILE:3: a second YAML document starts here (after ---); weir reads one, so put every key in it"}},
		{name: "an alias to a bad value",
			yaml: "acme:\n  order-lifetime: &d 10x\n  nonce-lifetime: *d\n",
			want: []string{
				`FILE:2: acme.order-lifetime: "10x" is not a duration (e.g. 10s, 5m, 2h)`,
				"FILE:3: acme.nonce-lifetime: *d refers to a value with a problem (at acme.order-lifetime)",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if slices.Contains(want, overrideRuleProblem) {
				if _, _, stderr := checkConfigRun(t, tt.yaml); !strings.Contains(stderr, strings.TrimPrefix(overrideRuleProblem, "FILE:10: ")) {
					t.Errorf("no problem for the burst of an order-creation override: this row needs the override rule of the rate-limiting config; got:\n%s", stderr)
					// The other problems are checked still.
					want = slices.DeleteFunc(slices.Clone(want), func(w string) bool { return w == overrideRuleProblem })
				}
			}
			wantCheckConfig(t, tt.yaml, want)
		})
	}
}

// TestServeReportsLikeCheckConfig: weir serve -config refuses a bad file
// with exactly the lines check-config prints, and exits 1.
func TestServeReportsLikeCheckConfig(t *testing.T) {
	text := "server:\n  lisen: x\nacme:\n  order-lifetime: ten\nrate-limiting:\n  global: {burst: 0}\n"
	_, _, want := checkConfigRun(t, text)
	path := filepath.Join(t.TempDir(), "weir.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errw bytes.Buffer
	code := run([]string{"serve", "-config", path}, &out, &errw)
	got := strings.ReplaceAll(errw.String(), path, "FILE")
	if code != 1 || got != want || strings.Count(want, "\n") != 3 {
		t.Errorf("serve: exit %d, stderr\n%s\nwant exit 1 and the three lines of check-config:\n%s", code, got, want)
	}
}
