// SPDX-License-Identifier: Apache-2.0

package server

import (
	"errors"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/web/admin"
)

// FuzzParseConfig: the config reader never panics on arbitrary YAML; each
// problem it finds has a line in the file or a key path, and speaks in
// the operator's words; and what it accepts is valid and can be wired
// (the policy compiles, the log level parses).
func FuzzParseConfig(f *testing.F) {
	if example, err := os.ReadFile("../config.example.yaml"); err == nil {
		f.Add(example)
	}
	for _, s := range []string{
		"",
		"data-dir: /var/lib/weir\n",
		"server: {listen: \":14000\", max-body-bytes: 1024}\n",
		"server:\n  listen: localhost:1\n  tls: {cert-file: a.pem}\n",
		"acme:\n  order-lifetime: 1h\n  nonce-lifetime: -1s\n  max-identifiers: 0\n",
		"acme: {order-lifetime: 1.5h, orders-per-page: 1}\n",
		"acme: {validation-workers: 3, validation-workers-per-account: 4}\n",
		"ca:\n  certificate-lifetime: 24h\n  policy:\n    allowed-domains: [example.com, .example.org]\n    denied-domains: [\"*.x\"]\n    allowed-ip-ranges: [10.0.0.0/8, \"::1\", bogus]\n",
		"challenges:\n  http-01: {enabled: false, port: 0}\n  dns-01: {enabled: false}\n  tls-alpn-01: {enabled: false}\n  dns-resolver: 127.0.0.1:x\n",
		"storage: {driver: postgres, path: \"\"}\nlog: {level: trace, format: xml}\n",
		"unknown-key: 1\n",
		"server: [1, 2]\n",
		"a: &a [*a, *a]\n",
		"--- \n...\n--- {data-dir: x}\n",
		"acme: {order-lifetime: 9999999999999999999h}\n",
		"ca: {policy: {allowed-domains: !!binary aGVsbG8=}}\n",
		"\t: \xff\n",
		"admin:\n  hosts: [weir.example, 10.0.0.1, '[::1]', 'a:1', '*.x', '', 127.1]\n",
		"admin: {listen: '[::]:14001', tls: true, hosts: [X.Example.]}\n",
		"rate-limiting:\n  global: {requests-per-minute: 100000000}\n  duplicate-certificate: {window: 1000000h}\n",
		"rate-limiting:\n  overrides:\n    - {limit: order-creation, key: \"account:1\", burst: 0, order-burst: -1}\n    - {limit: registered-domain, key: \"domain:x\", window: 2h, max-per-window: null}\n",
		"rate-limiting: {overrides: [{limit: account-creation, key: \"ip:::1\", per-ip-per-hour: 9999999999}, {limit: pending-authorizations, key: \"eab:a\", max: 40}]}\n",
		"rate-limiting:\n  order-creation: {order-brust: 3, orders-per-account-per-hour: big}\n  overrides:\n    - {limit: order-creation, key: 'account:1', burst: 10, bogus: 1}\n",
		"server:\n\tlisten: x\n",
		"server: &s {tls: *s}\nacme: {order-lifetime: &d 10x, nonce-lifetime: *d}\n",
		"x: &b {listen: 'x:1'}\nserver:\n  <<: *b\n  listen: y\n  listen: z\n",
		"ca: {profiles: {a.b: {key-usages: [codeSigning, {x: 1}]}}, policy: [1]}\n",
		"acme: {max-identifiers: 99999999999999999999, nonce-lifetime: 10}\nadmin: {enabled: yes please, hosts: h}\n",
		"data-dir: a\n---\ndata-dir: b\n",
		"- a\n",
		"? [a]\n: b\n",
		"\r0",
		"a: 1\rserver: [x\r",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseConfig("weir.yaml", data)
		if err != nil {
			checkProblems(t, data, err)
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("parseConfig accepted a config that does not validate: %v", err)
		}
		if _, err := acme.NewPolicy(cfg.CA.Policy); err != nil {
			t.Fatalf("parseConfig accepted a policy NewPolicy refuses: %v", err)
		}
		if _, err := cfg.RateLimiting.Policy(); err != nil {
			t.Fatalf("parseConfig accepted a rate-limiting block that makes no Policy: %v", err)
		}
		if _, err := parseLevel(cfg.Log.Level); err != nil {
			t.Fatalf("parseConfig accepted log.level %q: %v", cfg.Log.Level, err)
		}
		for _, h := range adminHosts(cfg.Admin, nil) {
			if _, err := admin.CanonicalHost(h); err != nil {
				t.Fatalf("parseConfig accepted admin host %q that the admin listener refuses: %v", h, err)
			}
		}
	})
}

// quoted matches the values a problem quotes, which are the file's text.
var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// checkProblems asserts what every refusal of the reader holds to.
func checkProblems(t *testing.T, data []byte, err error) {
	t.Helper()
	var ps *ConfigProblems
	if !errors.As(err, &ps) || len(ps.list) == 0 {
		t.Fatalf("the reader refused with %T %v, not a list of problems", err, err)
	}
	lastLine := len(yamlLines(data))
	for _, p := range ps.list {
		if p.Line == 0 && p.Path == "" || p.Msg == "" {
			t.Fatalf("a problem with neither a line nor a key path, or no message: %+v", p)
		}
		if p.Line < 0 || p.Line > lastLine {
			t.Fatalf("problem %+v is on line %d of a %d-line file", p, p.Line, lastLine)
		}
		own := quoted.ReplaceAllString(p.Msg, `"…"`)
		for _, internal := range []string{"!!", "cannot unmarshal", "not found in type", "into time.", "into int", "into main."} {
			if strings.Contains(own, internal) {
				t.Fatalf("problem %q shows Go's or yaml.v3's internals (%q)", p.Msg, internal)
			}
		}
	}
	order := func(p configProblem) int { // a problem with no line sorts last
		if p.Line == 0 {
			return math.MaxInt32
		}
		return p.Line
	}
	if !slices.IsSortedFunc(ps.list, func(a, b configProblem) int { return order(a) - order(b) }) {
		t.Fatalf("problems not sorted by line: %+v", ps.list)
	}
}
