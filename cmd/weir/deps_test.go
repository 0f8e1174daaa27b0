package main

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/weir-pki/weir"

// allowedDeps is the dependency rule of docs/ARCHITECTURE.md: imports
// point down the table, toward the leaves, and each third-party library
// lives in one row. Packages not listed (cmd/..., test/...) may import
// anything.
var allowedDeps = map[string][]string{
	"ratelimit":            {"golang.org/x/net/publicsuffix"},
	"ratelimit/sourcetest": {"ratelimit"},
	"ca":                   {},
	"migrations":           {},
	"acme":                 {"ca", "ratelimit", "golang.org/x/net/idna"},
	"acme/jws":             {"acme", "github.com/go-jose/go-jose/v4"},
	"acme/challenge":       {"acme", "golang.org/x/net/dns/dnsmessage"},
	"acme/noncetest":       {"acme"},
	"storage/sqlrow":       {"acme"},
	"storage/transfer":     {},
	"storage/sqlite":       {"acme", "ratelimit", "migrations", "storage/sqlrow", "storage/transfer", "modernc.org/sqlite"},
	"storage/redis":        {"acme", "ratelimit", "github.com/redis/go-redis/v9"},
	"storage/postgres":     {"acme", "ratelimit", "migrations", "storage/sqlrow", "storage/transfer", "github.com/jackc/pgx/v5"},
	"storage/storagetest":  {"acme", "ratelimit"},
	"web":                  {"acme", "acme/jws", "ratelimit", "github.com/go-chi/chi/v5"},
	"web/admin":            {"acme", "ratelimit", "ca", "github.com/go-chi/chi/v5", "github.com/prometheus/client_golang"},
}

// isStd reports whether an import path is in the standard library.
func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

func TestDependencyRule(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		allowed, ruled := allowedDeps[pkg]
		if !ruled {
			continue
		}
		seen++
		for _, imp := range fields[1:] {
			if isStd(imp) {
				continue
			}
			dep := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
			ok := false
			for _, a := range allowed {
				ok = ok || dep == a || strings.HasPrefix(dep, a+"/")
			}
			if !ok {
				t.Errorf("%s imports %s, which the dependency rule does not allow", pkg, imp)
			}
		}
	}
	if seen < 6 {
		t.Fatalf("checked only %d packages; go list output:\n%s", seen, out)
	}
}
