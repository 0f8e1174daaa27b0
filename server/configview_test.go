// SPDX-License-Identifier: Apache-2.0

package server

import (
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// TestEffectiveYAMLInheritedLifetime: a profile that leaves
// certificate-lifetime out shows the CA's lifetime, marked inherited,
// never null; a profile that sets it keeps its own; the text still reads
// back as the same configuration.
func TestEffectiveYAMLInheritedLifetime(t *testing.T) {
	cfg := DefaultConfig()
	cfg.CA.CertificateLifetime = 90 * 24 * time.Hour
	week := 168 * time.Hour
	for name, p := range cfg.CA.Profiles {
		p.CertificateLifetime = nil
		cfg.CA.Profiles[name] = p
	}
	if len(cfg.CA.Profiles) == 0 {
		t.Fatal("the default configuration has no profiles to test with")
	}
	var own string
	for name, p := range cfg.CA.Profiles {
		p.CertificateLifetime = &week
		cfg.CA.Profiles[name] = p
		own = name
		break
	}
	text, err := effectiveYAML(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text, "null") {
		t.Errorf("the effective configuration shows null:\n%s", text)
	}
	if len(cfg.CA.Profiles) > 1 && !strings.Contains(text, "certificate-lifetime: 2160h0m0s # inherited from ca.certificate-lifetime (90d)") {
		t.Errorf("no inherited lifetime shown:\n%s", text)
	}
	if !strings.Contains(text, "certificate-lifetime: 168h0m0s\n") {
		t.Errorf("profile %s lost its own lifetime:\n%s", own, text)
	}
	var back Config
	if err := yaml.Unmarshal([]byte(text), &back); err != nil {
		t.Fatalf("the text is not YAML of a configuration: %v\n%s", err, text)
	}
	for name, p := range back.CA.Profiles {
		if p.CertificateLifetime == nil {
			t.Errorf("profile %s reads back without a lifetime", name)
		}
	}
}
