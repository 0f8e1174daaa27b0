// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestPrintCompare: the table has each side's median, B/A and every
// round's figure, per level and metric.
func TestPrintCompare(t *testing.T) {
	a := &compareSide{Name: "main", Rev: "abc1234", Runs: map[int][]runResult{8: {
		{Concurrency: 8, CertsPerSec: 100, ServerCPUMsPerCert: 4}, {Concurrency: 8, CertsPerSec: 120, ServerCPUMsPerCert: 5}, {Concurrency: 8, CertsPerSec: 110, ServerCPUMsPerCert: 6}}}}
	b := &compareSide{Name: "HEAD", Rev: "def5678", Runs: map[int][]runResult{8: {
		{Concurrency: 8, CertsPerSec: 121, ServerCPUMsPerCert: 4.5}, {Concurrency: 8, CertsPerSec: 99, ServerCPUMsPerCert: 4}, {Concurrency: 8, CertsPerSec: 132, ServerCPUMsPerCert: 3}}}}
	rep := &compareReport{Storage: "sqlite", RateLimits: "off", Rounds: 3, Sides: [2]*compareSide{a, b}}
	for i, s := range rep.Sides {
		rep.Medians[i] = map[int]runResult{8: medianOf(s.Runs[8])}
	}
	var out bytes.Buffer
	printCompare(&out, rep, false)
	for _, want := range []string{
		"A = main abc1234, B = HEAD def5678; storage sqlite, rate limits off; medians of 3 interleaved rounds",
		"certs/s  110.00  121.00  1.100  100.00 120.00 110.00  121.00 99.00 132.00",
		"server CPU ms/cert    5.00    4.00  0.800",
	} {
		if !strings.Contains(strings.Join(strings.Fields(out.String()), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("missing %q in\n%s", want, out.String())
		}
	}
}

func TestParseSide(t *testing.T) {
	for _, tc := range []struct {
		name, build string
		want        sideSettings
		err         string
	}{
		{name: "HEAD", build: "HEAD"},
		{name: "HEAD+log", build: "HEAD", want: sideSettings{log: true}},
		{name: "abc123+nonces=postgres+ratelimits=high", build: "abc123", want: sideSettings{nonces: "postgres", rateLimits: "high"}},
		{name: "/tmp/weir+log+nonces=redis", build: "/tmp/weir", want: sideSettings{log: true, nonces: "redis"}},
		{name: "HEAD+storage=postgres+redis=private", build: "HEAD", want: sideSettings{storage: "postgres", redis: "private"}},
		{name: "HEAD+redis=127.0.0.1:6379", build: "HEAD", want: sideSettings{redis: "127.0.0.1:6379"}},
		{name: "HEAD+storage=mysql", err: `storage "mysql" is not`},
		{name: "HEAD+redis=somewhere", err: `redis "somewhere" is not`},
		{name: "+log", err: "names no build"},
		{name: "HEAD+nonces=disk", err: `nonces "disk" is not`},
		{name: "HEAD+ratelimits=some", err: `ratelimits "some" is not`},
		{name: "HEAD+log=1", err: `"log=1" is not log`},
		{name: "HEAD+", err: `"" is not log`},
	} {
		build, got, err := parseSide(tc.name)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parseSide(%q) = %v; want an error with %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || build != tc.build || got != tc.want {
			t.Errorf("parseSide(%q) = %q, %+v, %v; want %q, %+v", tc.name, build, got, err, tc.build, tc.want)
		}
	}
	o := sideSettings{nonces: "postgres", rateLimits: "high", storage: "postgres", redis: "private"}.apply(options{nonces: "redis", rateLimits: "off", log: true, storage: "sqlite", redis: "auto"})
	if o.nonces != "postgres" || o.rateLimits != "high" || !o.log || o.storage != "postgres" || o.redis != "private" {
		t.Errorf("apply: %+v", o)
	}
	for _, tc := range []struct {
		o   options
		err string
	}{
		{o: options{storage: "postgres"}, err: "needs -postgres-dsn"},
		{o: options{storage: "sqlite", replicas: 2}, err: "more than one replica"},
		{o: options{storage: "sqlite", replicas: 1, countPG: true}, err: "-count-pg"},
		{o: options{storage: "postgres", postgresDSN: "postgres://x", replicas: 2, countPG: true}},
		{o: options{storage: "sqlite", replicas: 1}},
	} {
		err := checkSide(tc.o)
		if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("checkSide(%+v) = %v; want %q", tc.o, err, tc.err)
		}
	}
}
