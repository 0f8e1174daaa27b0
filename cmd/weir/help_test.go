// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// singles are the commands with a flag set of their own; groups the
// commands made of verbs, each verb with its flag set.
var (
	singles = []string{"init", "serve", "check-config", "migrate", "migrate-storage", "healthcheck", "backup", "crl", "version"}
	groups  = map[string][]string{
		"ratelimit":   {"status", "explain", "reset"},
		"accounts":    {"list", "show", "deactivate"},
		"certs":       {"list", "show", "revoke", "renew-now"},
		"eab":         {"create", "list", "revoke"},
		"tenant":      {"create", "list", "show", "report", "update", "delete"},
		"admin":       {"token"},
		"admin token": {"add", "list", "revoke"},
		"ca":          {"take-root-offline", "new-intermediate-key", "sign-intermediate", "sign-root-crl", "import", "add-issuer", "migration-status"},
		"audit":       {"verify"},
		"log":         {"verify", "prove", "check-proof", "monitor", "witness", "witness-keygen"},
	}
)

// leaves are every command line that ends in a command's own flag set.
func leaves() [][]string {
	var out [][]string
	for _, c := range singles {
		out = append(out, []string{c})
	}
	for group, verbs := range groups {
		for _, v := range verbs {
			if groups[group+" "+v] == nil { // a verb that is a group of its own is not a leaf
				out = append(out, append(strings.Fields(group), v))
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return strings.Join(out[i], " ") < strings.Join(out[j], " ") })
	return out
}

// TestEveryCommandCovered: the help tests below know every command and
// every verb of each group (a new one must be added to singles or groups).
func TestEveryCommandCovered(t *testing.T) {
	for name := range commands {
		if !slices.Contains(singles, name) && groups[name] == nil {
			t.Errorf("command %q is in neither singles nor groups of help_test.go", name)
		}
	}
	for g, verbs := range groups {
		verbLine := regexp.MustCompile(`(?m)^  weir ` + regexp.QuoteMeta(g) + ` ([a-z-]+)`)
		code, out, _ := runCLI(append(strings.Fields(g), "-h")...)
		var listed []string
		for _, m := range verbLine.FindAllStringSubmatch(out, -1) {
			listed = append(listed, m[1])
		}
		if code != 0 || !slices.Equal(listed, verbs) {
			t.Errorf("weir %s -h: exit %d, verbs %v; help_test.go has %v", g, code, listed, verbs)
		}
	}
}

// wantCLI runs weir with args and checks that it exits with code, with
// want in its stdout (code 0) or stderr; it returns the stderr.
func wantCLI(t *testing.T, args []string, code int, want string) string {
	t.Helper()
	got, out, errOut := runCLI(args...)
	where := errOut
	if code == 0 {
		where = out
	}
	if got != code || !strings.Contains(where, want) {
		t.Errorf("weir %s: exit %d, want %d with %q\nstdout: %s\nstderr: %s", strings.Join(args, " "), got, code, want, out, errOut)
	}
	return errOut
}

func runCLI(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

// TestHelpOnce: every command's -h, --help and "weir help CMD" print its
// help once, to stdout, and exit 0; the help has a description and the
// flags.
func TestHelpOnce(t *testing.T) {
	for _, l := range leaves() {
		name := strings.Join(l, " ")
		for _, args := range [][]string{
			append(append([]string{}, l...), "-h"),
			append(append([]string{}, l...), "--help"),
			append([]string{"help"}, l...),
		} {
			code, out, errOut := runCLI(args...)
			if code != 0 || errOut != "" {
				t.Errorf("weir %s: exit %d, stderr %q", strings.Join(args, " "), code, errOut)
			}
			if n := strings.Count(out, "Usage: weir "+l[0]); n != 1 {
				t.Errorf("weir %s: the usage line %d times:\n%s", strings.Join(args, " "), n, out)
			}
			if paras := strings.Split(out, "\n\n"); len(paras) < 2 || len(strings.TrimSpace(paras[1])) < 20 {
				t.Errorf("weir %s: no description:\n%s", name, out)
			}
			if l[0] != "check-config" && !strings.Contains(out, "\nFlags:\n") {
				t.Errorf("weir %s -h lists no flags:\n%s", name, out)
			}
		}
	}
}

// flagName matches a flag in the flag package's defaults listing.
var flagName = regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`)

// TestTopLevelHelpListsEverything: weir help names every command, verb and
// flag that the commands' own help shows.
func TestTopLevelHelpListsEverything(t *testing.T) {
	code, top, _ := runCLI("help")
	if code != 0 {
		t.Fatalf("weir help: exit %d", code)
	}
	for _, l := range leaves() {
		if !strings.Contains(top, "weir "+strings.Join(l, " ")) && !strings.Contains(top, "| "+l[len(l)-1]) {
			t.Errorf("weir help does not list %q", strings.Join(l, " "))
		}
		_, out, _ := runCLI(append(append([]string{}, l...), "-h")...)
		for _, m := range flagName.FindAllStringSubmatch(out, -1) {
			if !regexp.MustCompile(`-{1,2}` + regexp.QuoteMeta(m[1]) + `\b`).MatchString(top) {
				t.Errorf("weir help does not list %s's flag -%s", strings.Join(l, " "), m[1])
			}
		}
	}
}

// TestExitCodes: 0 for help and success, 2 for usage errors only, 1 for
// other failures.
func TestExitCodes(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("abcdefghijklmnopq\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		out  string // in stdout (code 0) or stderr
	}{
		{nil, 2, "Usage: weir COMMAND"},
		{[]string{"-h"}, 0, "Usage: weir COMMAND"},
		{[]string{"--help"}, 0, "Usage: weir COMMAND"},
		{[]string{"help"}, 0, "Usage: weir COMMAND"},
		{[]string{"--version"}, 0, "weir "},
		{[]string{"-version"}, 0, "weir "},
		{[]string{"version", "-json"}, 0, `"goVersion"`},
		{[]string{"version", "extra"}, 2, "unexpected argument"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"help", "frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"certs"}, 2, "which verb"},
		{[]string{"certs", "-h"}, 0, "renew-now"},
		{[]string{"certs", "help", "revoke"}, 0, "--all-from-account"},
		{[]string{"certs", "frob"}, 2, `unknown verb "frob"`},
		{[]string{"certs", "revoke"}, 2, "give one SERIAL or --all-from-account"},
		{[]string{"certs", "revoke", "-bogus"}, 2, "flag provided but not defined: -bogus"},
		{[]string{"certs", "renew-now", "--all", "--account", "1"}, 2, "give SERIALs, --account or --all"},
		{[]string{"certs", "list", "-limit", "x"}, 2, "invalid value"},
		{[]string{"ratelimit", "status"}, 2, "give one of KEY"},
		{[]string{"eab", "create"}, 2, "give --label"},
		{[]string{"accounts", "show"}, 2, "takes one argument"},
		{[]string{"serve", "extra"}, 2, "unexpected argument"},
		{[]string{"serve", "-bogus"}, 2, "Usage: weir serve"},
		{[]string{"backup"}, 2, "-out is required"},
		{[]string{"check-config"}, 2, "takes one configuration file"},
		{[]string{"check-config", "/nonexistent/weir.yaml"}, 1, "no such file"},
		// A command that fails at run time (nothing listens on port 1).
		{[]string{"certs", "list", "-admin", "http://127.0.0.1:1", "-token-file", "TOKEN"}, 1, "is weir serve running?"},
	} {
		for i, a := range tc.args {
			if a == "TOKEN" {
				tc.args[i] = tokenFile
			}
		}
		errOut := wantCLI(t, tc.args, tc.code, tc.out)
		if tc.code == 2 && strings.Count(errOut, "Usage:") > 1 {
			t.Errorf("weir %s: the help %d times:\n%s", strings.Join(tc.args, " "), strings.Count(errOut, "Usage:"), errOut)
		}
	}
}
