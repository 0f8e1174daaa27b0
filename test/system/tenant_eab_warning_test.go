// SPDX-License-Identifier: Apache-2.0

package system

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/server"
)

// eabRisk is how the tenant warnings begin (admin.TenantsEABWarning).
const eabRisk = "tenants exist but acme.external-account-binding.required is false"

// TestTenantsEABWarningAtStart: weir logs at start that its tenants do
// not keep their names to their accounts while new accounts need no EAB
// key, and is silent without tenants or with EAB required.
func TestTenantsEABWarningAtStart(t *testing.T) {
	cfg := server.DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.Server.Listen = "127.0.0.1:0"
	start := func(c server.Config) (*server.Server, string) {
		t.Helper()
		var logs bytes.Buffer
		s, err := server.New(t.Context(), c, server.Options{Log: &logs})
		if err != nil {
			t.Fatal(err)
		}
		return s, logs.String()
	}
	s, logs := start(cfg)
	if strings.Contains(logs, eabRisk) {
		t.Errorf("a start without tenants warns of them:\n%s", logs)
	}
	if _, err := s.Service().CreateTenant(t.Context(), acme.Tenant{Name: "team", AllowedNames: []string{".t.weir.test"}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, logs = start(cfg)
	s.Close()
	if !strings.Contains(logs, eabRisk) || !strings.Contains(logs, "set acme.external-account-binding.required: true") {
		t.Errorf("a start with a tenant and EAB optional does not warn of it:\n%s", logs)
	}
	cfg.ACME.ExternalAccountBinding.Required = true
	s, logs = start(cfg)
	s.Close()
	if strings.Contains(logs, eabRisk) {
		t.Errorf("a start with EAB required warns of the tenants:\n%s", logs)
	}
}

// TestTenantsEABWarningPages: the tenant list, a tenant's page and its
// report (API and weir tenant report) warn while EAB is optional, from
// the first tenant made, and not with EAB required.
func TestTenantsEABWarningPages(t *testing.T) {
	for _, required := range []bool{false, true} {
		e := startEnv(t, func(c *server.Config) { c.ACME.ExternalAccountBinding.Required = required })
		tok := e.adminToken(t)
		get := func(path string) string {
			t.Helper()
			res := (&adminFixture{e: e}).send(t, adminReq{method: http.MethodGet, path: path, header: map[string]string{"Authorization": "Bearer " + tok}})
			if res.status != http.StatusOK {
				t.Fatalf("GET %s: %d", path, res.status)
			}
			return res.body
		}
		if strings.Contains(get("/tenants"), `id="tenant-eab-warning"`) {
			t.Errorf("EAB required %v: the tenant list warns with no tenant", required)
		}
		e.cli.Run(t, 0, "tenant", "create", "team", "--allow", ".t.weir.test")
		for what, body := range map[string]string{
			"the tenant list": get("/tenants"), "the tenant's page": get("/tenants/team"),
			"its report": get("/api/v1/tenants/team/report"), "weir tenant report": e.cli.Run(t, 0, "tenant", "report", "team"),
		} {
			if got := strings.Contains(body, eabRisk); got == required {
				t.Errorf("EAB required %v: %s warns %v, want %v:\n%s", required, what, got, !required, body)
			}
		}
	}
}
