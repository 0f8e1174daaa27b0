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
