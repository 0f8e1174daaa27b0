// SPDX-License-Identifier: Apache-2.0

package server

import (
	"fmt"
	"time"

	"gopkg.in/yaml.v3"
)

// effectiveYAML is the configuration as the admin surface shows it: cfg in
// YAML, where a profile that leaves certificate-lifetime out shows the
// lifetime it inherits from ca.certificate-lifetime (with a comment saying
// so) rather than null. The text stays valid YAML that means the same.
func effectiveYAML(cfg Config) (string, error) {
	var doc yaml.Node
	if err := doc.Encode(cfg); err != nil {
		return "", err
	}
	inherited := cfg.CA.CertificateLifetime.String()
	comment := fmt.Sprintf("inherited from ca.certificate-lifetime (%s)", days(cfg.CA.CertificateLifetime))
	for _, p := range mappingValues(mappingValue(mappingValue(&doc, "ca"), "profiles")) {
		if v := mappingValue(p, "certificate-lifetime"); v != nil && v.Tag == "!!null" {
			v.Kind, v.Tag, v.Value, v.Style, v.LineComment = yaml.ScalarNode, "!!str", inherited, 0, comment
		}
	}
	out, err := yaml.Marshal(&doc)
	return string(out), err
}

// days says a lifetime in days when it is whole days ("90d"), else as Go
// writes it.
func days(d time.Duration) string {
	if d > 0 && d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	return shortDuration(d)
}

// mappingValue is the value of key in the mapping n (a document's root
// mapping when n is a document); nil when there is none.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// mappingValues are the values of the mapping n; none when n is not one.
func mappingValues(n *yaml.Node) []*yaml.Node {
	var out []*yaml.Node
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 1; i < len(n.Content); i += 2 {
		out = append(out, n.Content[i])
	}
	return out
}
