// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/weir-pki/weir/server"
)

// exampleConfigName is the name config.example.yaml is rendered for, as
// the generate directive of cmd_checkconfig.go renders it.
const exampleConfigName = "config.example.yaml"

// TestExampleConfig: config.example.yaml is byte for byte what
// "weir init -print-config -config config.example.yaml" prints (the one
// commented text, in server/configdoc.go), loads strictly, and equals the
// embedded defaults, so it documents exactly what runs with no file.
func TestExampleConfig(t *testing.T) {
	committed, err := os.ReadFile("../../config.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out, errw bytes.Buffer
	if code := run([]string{"init", "-print-config", "-config", exampleConfigName}, &out, &errw); code != 0 {
		t.Fatalf("init -print-config: exit %d: %s", code, errw.String())
	}
	if !bytes.Equal(committed, out.Bytes()) {
		t.Errorf("config.example.yaml differs from weir init -print-config; regenerate it with\n  go generate ./cmd/weir\n%s", firstDiff(committed, out.Bytes()))
	}
	cfg, err := server.LoadConfig("../../config.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// Compared as YAML, so that an empty list equals a missing one.
	got, _ := yaml.Marshal(cfg)
	want, _ := yaml.Marshal(server.DefaultConfig())
	if string(got) != string(want) {
		t.Errorf("config.example.yaml loads as\n%s\nwant the defaults\n%s", got, want)
	}
}

// firstDiff shows where two texts start to differ.
func firstDiff(a, b []byte) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n  file:      %q\n  generated: %q", i+1, x, y)
		}
	}
	return "(same lines)"
}
