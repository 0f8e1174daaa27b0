package main

import (
	"os"
	"testing"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/web/admin"
)

// FuzzParseConfig: parseConfig never panics on arbitrary YAML, and what it
// accepts is valid and can be wired (the policy compiles, the log level
// parses).
func FuzzParseConfig(f *testing.F) {
	if example, err := os.ReadFile("../../config.example.yaml"); err == nil {
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
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := parseConfig(data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("parseConfig returned an empty error")
			}
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
