// SPDX-License-Identifier: Apache-2.0

package main

import (
	"strings"
	"testing"
)

// TestCheckDeps: each hole the dependency rule had is caught (a prefix
// that allowed a package's subpackages, packages without a row, a
// library outside its row, a test package imported by a command), and
// what the rows allow passes.
func TestCheckDeps(t *testing.T) {
	rules := map[string]rule{
		"ca":               {},
		"acme":             {ours: []string{"ca"}},
		"acme/challenge":   {ours: []string{"acme"}},
		"acme/noncetest":   {kind: test, ours: []string{"acme"}},
		"storage/postgres": {ours: []string{"acme"}, libs: []string{"example.com/dbclient/v5"}},
		"internal/harness": {kind: tool},
		"test/helper":      {kind: test, every: []kind{product, tool, test}},
		"cmd/weir":         {kind: command, every: []kind{product}},
		"cmd/tool":         {kind: command, every: []kind{product, tool}, ours: []string{"test/helper"}},
	}
	ours := func(p string) string { return module + "/" + p }
	clean := map[string][]string{
		"ca":               {"fmt"},
		"acme":             {ours("ca")},
		"acme/challenge":   {ours("acme")},
		"acme/noncetest":   {ours("acme")},
		"storage/postgres": {ours("acme"), "example.com/dbclient/v5", "example.com/dbclient/v5/pool"},
		"internal/harness": nil,
		"test/helper":      {ours("acme/noncetest"), ours("internal/harness")},
		"cmd/weir":         {ours("storage/postgres"), ours("acme/challenge")},
		"cmd/tool":         {ours("internal/harness"), ours("ca")},
	}
	if errs := checkDeps(rules, clean); len(errs) > 0 {
		t.Fatalf("checkDeps of what the rows allow: %q", errs)
	}
	for _, tc := range []struct {
		name string
		pkg  string
		imps []string // replacing the package's imports; nil deletes it
		want string   // a substring of one error
	}{
		{"a subpackage of an allowed package", "acme", []string{ours("ca/x")}, "acme imports " + ours("ca/x") + ", which has no rule"},
		{"a sibling row under an allowed path", "acme/challenge", []string{ours("acme/noncetest")}, "a test package, which only tests may import"},
		{"a package without a row", "cmd/other", []string{"fmt"}, "cmd/other has no rule"},
		{"a row without a package", "acme/challenge", nil, "the rule of acme/challenge names no package"},
		{"a database client in the server", "cmd/weir", []string{"example.com/dbclient/v5"}, "a third-party library its row does not name"},
		{"a library that only shares a prefix", "storage/postgres", []string{"example.com/dbclient/v50"}, "a third-party library its row does not name"},
		{"a test package in a command, even named", "cmd/tool", []string{ours("test/helper")}, "a test package"},
		{"the harness in the server", "cmd/weir", []string{ours("internal/harness")}, "which its row does not name"},
		{"a subpackage of a package the row names", "storage/postgres", []string{ours("acme/challenge")}, "storage/postgres imports " + ours("acme/challenge") + ", which its row does not name"},
	} {
		pkgs := map[string][]string{}
		for p, imps := range clean {
			pkgs[p] = imps
		}
		if tc.imps == nil {
			delete(pkgs, tc.pkg)
		} else {
			pkgs[tc.pkg] = tc.imps
		}
		errs := checkDeps(rules, pkgs)
		if !strings.Contains(strings.Join(errs, "\n"), tc.want) {
			t.Errorf("%s: checkDeps = %q; want an error containing %q", tc.name, errs, tc.want)
		}
	}

	rules["cmd/weir"] = rule{kind: command, every: []kind{product}, libs: []string{"example.com/dbclient/v5"}}
	if errs := checkDeps(rules, clean); len(errs) != 1 || !strings.Contains(errs[0], "example.com/dbclient/v5 lives in more than one row") {
		t.Errorf("a database client in the rows of cmd/weir and storage/postgres: %q; want one error that it lives in two rows", errs)
	}
}
