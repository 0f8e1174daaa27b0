// SPDX-License-Identifier: Apache-2.0

package server

import (
	"slices"
	"strings"
	"testing"
)

func TestCAAConfig(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want string // "" means valid
	}{
		{"challenges: {caa: {enabled: true}}", "challenges.caa.identities: CAA checking is on but names no identity"},
		{"challenges: {caa: {enabled: true, identities: [weir.internal]}}", ""},
		{"acme: {caa-identities: [weir.internal]}\nchallenges: {caa: {enabled: true}}", ""},
		{"challenges: {caa: {identities: [\"not a name\"]}}", `challenges.caa.identities: "not a name" is not a domain name`},
		{"challenges: {caa: {enabled: yes-please}}", `line 1: challenges.caa.enabled: "yes-please" is not true or false`},
	} {
		_, err := ParseConfig("", []byte(tc.yaml))
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.yaml, err, tc.want)
		}
	}
	cfg, err := ParseConfig("", []byte("acme: {caa-identities: [ca.example]}\nchallenges: {caa: {enabled: true, identities: [weir.internal]}}"))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.caaIdentities(); !slices.Equal(got, []string{"weir.internal"}) {
		t.Errorf("checked identities %v, want challenges.caa.identities", got)
	}
	if got := cfg.directoryCAAIdentities(); !slices.Equal(got, []string{"ca.example"}) {
		t.Errorf("directory identities %v, want acme.caa-identities", got)
	}
}
