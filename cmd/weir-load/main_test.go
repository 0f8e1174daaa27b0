// SPDX-License-Identifier: Apache-2.0

package main

import (
	"io"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestParseFlagsReplicas(t *testing.T) {
	for _, tc := range []struct {
		args []string
		err  string // "" for none
	}{
		{[]string{"-replicas", "3"}, "needs a shared store"},
		{[]string{"-replicas", "3", "-storage", "postgres", "-postgres-dsn", "postgres://u@127.0.0.1/db"}, ""},
		{[]string{"-storage", "postgres", "-postgres-dsn", ""}, "needs -postgres-dsn"},
		{[]string{"-storage", "mysql"}, "not sqlite or postgres"},
		{[]string{"-replicas", "0"}, "between 1 and 16"},
		{[]string{"-redis", "127.0.0.1:6379"}, ""},
		{[]string{"-redis", "somewhere"}, "not auto, private, none or host:port"},
		{[]string{"-client-gogc", "-1"}, "-client-gogc: 0 or more"},
		{[]string{"-client-gogc", "0"}, ""},
		{[]string{"-compare", "main,HEAD"}, ""},
		{[]string{"-compare", "main"}, "two builds"},
		{[]string{"-compare", "main,"}, "two builds"},
		{[]string{"-compare", "a,b,c"}, "two builds"},
		{[]string{"-compare", "main,HEAD", "-weir", "/bin/weir"}, "does not go with -weir"},
		{[]string{"-compare", "main,HEAD", "-data", "/tmp/x"}, "does not go with"},
	} {
		_, err := parseFlags(tc.args, io.Discard)
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.err)
		}
	}
}

// TestServerConfig: the keys of a PostgreSQL replica with a Redis land in
// one block each (weir's strict parser refuses a repeated key).
func TestServerConfig(t *testing.T) {
	for _, rl := range []string{"off", "high", "default", "server"} {
		// The nonces are weir's default (no key) unless -nonces says
		// otherwise.
		nonces := map[string]string{"off": "", "high": "postgres", "server": "memory"}[rl]
		want := nonces
		o := serverOptions{
			dataDir: "/d", dnsAddr: "127.0.0.1:53", httpPort: 5002, validationWorkers: 4, rateLimits: rl,
			externalURL: "https://127.0.0.1:1", postgresDSN: "postgres://u@127.0.0.1/db?search_path=s", redisAddr: "127.0.0.1:6380",
			nonces: nonces,
		}
		var cfg struct {
			Server struct {
				Listen      string `yaml:"listen"`
				ExternalURL string `yaml:"external-url"`
			} `yaml:"server"`
			Admin struct {
				Listen string `yaml:"listen"`
			} `yaml:"admin"`
			ACME struct {
				ValidationWorkers int `yaml:"validation-workers"`
				Nonces            struct {
					Backend string `yaml:"backend"`
				} `yaml:"nonces"`
			} `yaml:"acme"`
			Storage struct {
				Driver string `yaml:"driver"`
				DSN    string `yaml:"dsn"`
			} `yaml:"storage"`
			RateLimiting struct {
				Backend string `yaml:"backend"`
				Redis   struct {
					Addrs []string `yaml:"addrs"`
				} `yaml:"redis"`
			} `yaml:"rate-limiting"`
		}
		text := serverConfig(o, "127.0.0.1:2", "127.0.0.1:3")
		if err := yaml.Unmarshal([]byte(text), &cfg); err != nil {
			t.Fatalf("%s: %v\n%s", rl, err, text)
		}
		if cfg.Server.Listen != "127.0.0.1:2" || cfg.Server.ExternalURL != o.externalURL || cfg.Admin.Listen != "127.0.0.1:3" ||
			cfg.ACME.ValidationWorkers != 4 || cfg.ACME.Nonces.Backend != want ||
			cfg.Storage.Driver != "postgres" || cfg.Storage.DSN != o.postgresDSN ||
			cfg.RateLimiting.Backend != "redis" || len(cfg.RateLimiting.Redis.Addrs) != 1 || cfg.RateLimiting.Redis.Addrs[0] != o.redisAddr {
			t.Errorf("%s: decoded %+v from\n%s", rl, cfg, text)
		}
	}
}

// TestReplicaCPU: with several replicas each one's CPU per certificate is
// the median of its own runs, and the table prints them in order.
func TestReplicaCPU(t *testing.T) {
	runs := []runResult{
		{Concurrency: 8, ServerCPUMsPerCert: 4, ReplicaCPUMsPerCert: []float64{2.5, 1.5}},
		{Concurrency: 8, ServerCPUMsPerCert: 5, ReplicaCPUMsPerCert: []float64{1.0, 4.0}},
		{Concurrency: 8, ServerCPUMsPerCert: 3, ReplicaCPUMsPerCert: []float64{2.0, 1.0}},
	}
	m := medianOf(runs)
	if len(m.ReplicaCPUMsPerCert) != 2 || m.ReplicaCPUMsPerCert[0] != 2.0 || m.ReplicaCPUMsPerCert[1] != 1.5 {
		t.Errorf("medianOf: replica CPU %v, want [2 1.5]", m.ReplicaCPUMsPerCert)
	}
	var out strings.Builder
	printTable(&out, &report{Replicas: 2, Levels: []levelResult{{Concurrency: 8, Median: m, Runs: runs}}})
	if !strings.Contains(out.String(), "c=8: server CPU ms/cert by replica 2.00 / 1.50") {
		t.Errorf("printTable:\n%s", out.String())
	}
	if m := medianOf(runs[:1:1]); len(medianOf([]runResult{{Concurrency: 8}}).ReplicaCPUMsPerCert) != 0 || len(m.ReplicaCPUMsPerCert) != 2 {
		t.Errorf("one replica: %v; one run: %v", medianOf([]runResult{{Concurrency: 8}}).ReplicaCPUMsPerCert, m.ReplicaCPUMsPerCert)
	}
}
