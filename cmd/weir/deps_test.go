// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/weir-pki/weir"

// kind says who may import a package of the module.
type kind int

const (
	// product: a package of weir itself; the rows name who imports it.
	product kind = iota
	// tool: harness code that the load tool and the tests share
	// (internal/...); no product package imports it.
	tool
	// test: a test package (a suite, a helper, a system test); only
	// tests and other test packages import it.
	test
	// command: a program; nothing imports it.
	command
)

// rule is what a package of the module may import (non-test imports).
type rule struct {
	kind kind
	// ours are the packages of the module it may import, by exact path
	// below the module: allowing acme allows neither acme/jws nor
	// acme/noncetest.
	ours []string
	// every lists the kinds of which it may import every package of the
	// module, besides ours.
	every []kind
	// libs are the third-party libraries it may import; a library is an
	// import path and the packages below it.
	libs []string
	// anyLib lets a test package import any third-party library.
	anyLib bool
}

// rules is the dependency rule of docs/ARCHITECTURE.md, one row per
// package of the module: imports point down the table, toward the
// leaves, and each third-party library lives in one row (with the rows
// below it). Every package must have a row.
var rules = map[string]rule{
	"ca":                        {libs: []string{"github.com/youmark/pkcs8", "github.com/ThalesGroup/crypto11", "github.com/miekg/pkcs11"}},
	"migrations":                {},
	"ratelimit":                 {libs: []string{"golang.org/x/net/publicsuffix"}},
	"ratelimit/sourcetest":      {kind: test, ours: []string{"ratelimit"}},
	"acme/renewal":              {},
	"acme/crl":                  {ours: []string{"ca"}},
	"acme/transparency":         {ours: []string{"internal/atomicfile"}, libs: []string{"golang.org/x/mod/sumdb", "filippo.io/torchwood"}},
	"acme":                      {ours: []string{"ca", "ratelimit", "acme/renewal", "acme/crl", "acme/transparency"}, libs: []string{"golang.org/x/net/idna"}},
	"acme/jws":                  {ours: []string{"acme"}, libs: []string{"github.com/go-jose/go-jose/v4"}},
	"acme/limits":               {ours: []string{"acme", "ratelimit"}},
	"acme/challenge":            {ours: []string{"acme"}, libs: []string{"golang.org/x/net/dns/dnsmessage"}},
	"acme/noncetest":            {kind: test, ours: []string{"acme"}},
	"storage/sqlrow":            {ours: []string{"acme", "acme/renewal"}},
	"storage/transfer":          {},
	"storage/sqlite":            {ours: []string{"acme", "acme/renewal", "acme/transparency", "ratelimit", "migrations", "storage/sqlrow", "storage/transfer"}, libs: []string{"modernc.org/sqlite"}},
	"storage/postgres":          {ours: []string{"acme", "acme/renewal", "acme/transparency", "ratelimit", "migrations", "storage/sqlrow", "storage/transfer"}, libs: []string{"github.com/jackc/pgx/v5"}},
	"storage/postgres/pgschema": {libs: []string{"github.com/jackc/pgx/v5"}},
	"storage/postgres/pgtest":   {kind: test, ours: []string{"storage/postgres/pgschema"}, libs: []string{"github.com/jackc/pgx/v5"}},
	"storage/redis":             {ours: []string{"acme", "ratelimit"}, libs: []string{"github.com/redis/go-redis/v9"}},
	"storage/storagetest":       {kind: test, ours: []string{"acme", "acme/renewal", "acme/transparency", "ratelimit"}},
	"web":                       {ours: []string{"acme", "acme/jws", "acme/limits", "ratelimit"}, libs: []string{"github.com/go-chi/chi/v5"}},
	"web/admin":                 {ours: []string{"acme", "acme/limits", "acme/renewal", "ratelimit", "ca"}, libs: []string{"github.com/go-chi/chi/v5", "github.com/prometheus/client_golang"}},
	"internal/dnstest":          {kind: tool, libs: []string{"golang.org/x/net/dns/dnsmessage"}},
	"internal/weirproc":         {kind: tool},
	"internal/softhsm":          {kind: tool},
	// Round trips and statements counted on PostgreSQL's wire: the
	// store's tests and weir-load -count-pg.
	"internal/pgcount": {kind: tool},
	// A log served from memory, for the tests of the log's monitor.
	"acme/transparency/monitortest": {kind: test, ours: []string{"acme/transparency"}, libs: []string{"golang.org/x/mod/sumdb"}},
	// The ACME side of the system tests (responders, JWS, x/crypto/acme
	// flows): imports testing, so only tests import it.
	"internal/acmeenv": {kind: test, ours: []string{"internal/dnstest"}, libs: []string{"github.com/go-jose/go-jose/v4", "golang.org/x/crypto/acme"}},
	// What the system tests share but their server (a Redis process, a
	// scrape, a store snapshot, a CRL fetched): test/system and server's
	// white-box tests both import it.
	"internal/systest": {kind: test, ours: []string{"internal/acmeenv"}, libs: []string{"github.com/prometheus/client_model", "github.com/prometheus/common"}},
	// The audit trail's sink and verifier: a product package in
	// internal/ so that only weir imports it.
	"internal/audit": {},
	// Files replaced whole or not at all (a witness's state).
	"internal/atomicfile": {},
	// The assembly: every product package, none of the harness, and no
	// database or Redis client of its own (those live in storage); the
	// signed-note and tree libraries for the log key it opens and the
	// proofs it sends the log's witnesses.
	"server": {every: []kind{product}, libs: []string{"gopkg.in/yaml.v3", "golang.org/x/mod/sumdb/note", "golang.org/x/mod/sumdb/tlog"}},
	// The command line: the server it runs and the admin API's views it
	// prints; everything else through them, but the log's witness, which
	// runs apart from any server (its key through ca's signer seam).
	"cmd/weir": {kind: command, ours: []string{"server", "web/admin", "internal/audit", "acme/transparency", "ca"}},
	// The load tool runs weir as a child process: the harness and any
	// product package, never a test package.
	"cmd/weir-load":          {kind: command, every: []kind{product, tool}, libs: []string{"golang.org/x/crypto/acme"}},
	"test/ha":                {kind: test, every: []kind{product, tool, test}, anyLib: true},
	"test/system":            {kind: test, every: []kind{product, tool, test}, anyLib: true},
	"test/interop/dnsserver": {kind: test, every: []kind{product, tool, test}, anyLib: true},
}

// isStd reports whether an import path is in the standard library.
func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// checkDeps returns every breach of rules by pkgs, the packages of the
// module (paths below it) with their non-test imports (full paths):
// a package without a row, a row without a package, an import its row
// does not allow, and a library that lives in more than one row.
func checkDeps(rules map[string]rule, pkgs map[string][]string) []string {
	var errs []string
	for _, pkg := range slices.Sorted(maps.Keys(pkgs)) {
		r, ok := rules[pkg]
		if !ok {
			errs = append(errs, fmt.Sprintf("%s has no rule: give it a row in rules (and in docs/ARCHITECTURE.md's table)", pkg))
			continue
		}
		for _, imp := range pkgs[pkg] {
			if isStd(imp) {
				continue
			}
			if err := r.allows(rules, imp); err != "" {
				errs = append(errs, fmt.Sprintf("%s imports %s, %s", pkg, imp, err))
			}
		}
	}
	for _, pkg := range slices.Sorted(maps.Keys(rules)) {
		if _, ok := pkgs[pkg]; !ok {
			errs = append(errs, fmt.Sprintf("the rule of %s names no package of the module", pkg))
		}
	}
	return append(errs, checkLibHomes(rules)...)
}

// allows returns why r does not allow importing imp, or "" if it does.
func (r rule) allows(rules map[string]rule, imp string) string {
	dep, ours := strings.CutPrefix(imp, module+"/")
	if !ours {
		for _, lib := range r.libs {
			if imp == lib || strings.HasPrefix(imp, lib+"/") {
				return ""
			}
		}
		if r.anyLib {
			return ""
		}
		return "a third-party library its row does not name"
	}
	depRule, known := rules[dep]
	switch {
	case !known:
		return "which has no rule"
	case depRule.kind == test && r.kind != test:
		return "a test package, which only tests may import"
	case depRule.kind == command:
		return "a command"
	case slices.Contains(r.ours, dep), slices.Contains(r.every, depRule.kind):
		return ""
	}
	return "which its row does not name"
}

// checkLibHomes returns an error for each third-party library that the
// rows of product packages and commands name in more than one place: a
// library lives in one row and the rows below it (pgx in
// storage/postgres/...). Tools and tests may share what they need.
func checkLibHomes(rules map[string]rule) []string {
	homes := map[string][]string{}
	for pkg, r := range rules {
		if r.kind == product || r.kind == command {
			for _, lib := range r.libs {
				homes[lib] = append(homes[lib], pkg)
			}
		}
	}
	var errs []string
	for _, lib := range slices.Sorted(maps.Keys(homes)) {
		pkgs := homes[lib]
		sort.Strings(pkgs) // a row sorts before the rows below it
		for _, p := range pkgs[1:] {
			if !strings.HasPrefix(p, pkgs[0]+"/") {
				errs = append(errs, fmt.Sprintf("library %s lives in more than one row: %s", lib, strings.Join(pkgs, ", ")))
				break
			}
		}
	}
	return errs
}

// TestDependencyRule checks every package of the module against rules,
// in the build with PKCS#11 (-tags pkcs11), whose imports are a superset
// of the pure-Go build's.
func TestDependencyRule(t *testing.T) {
	out, err := exec.Command("go", "list", "-tags", "pkcs11", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkgs[strings.TrimPrefix(fields[0], module+"/")] = fields[1:]
	}
	if len(pkgs) < len(rules)/2 {
		t.Fatalf("go list gave %d packages; output:\n%s", len(pkgs), out)
	}
	for _, e := range checkDeps(rules, pkgs) {
		t.Error(e)
	}
}
