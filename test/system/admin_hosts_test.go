// SPDX-License-Identifier: Apache-2.0

package system

import (
	"net"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/weir-pki/weir/server"
	"github.com/weir-pki/weir/web/admin"
)

// TestAdminHostCheck: the admin listener answers only for its own names
// (with or without the port, in any case): a request under any other Host
// gets 421, even with the token, so a page that rebinds its name to the
// listener cannot read /api/v1/config. The names accepted are in the log,
// not in the answer. The probes answer any Host.
func TestAdminHostCheck(t *testing.T) {
	hostname, _ := os.Hostname()
	hostname, hostErr := admin.CanonicalHost(hostname)
	for _, auth := range []string{"none", "token"} {
		t.Run("auth "+auth, func(t *testing.T) {
			logs := &metricsLogBuf{}
			e := startEnvLog(t, func(c *server.Config) {
				c.Admin.Auth = auth
				c.Admin.Hosts = []string{"Weir-Admin.corp.example"}
				c.Log.Level = "info"
			}, logs)
			f := adminFixtureOf(t, e)
			_, port, _ := net.SplitHostPort(f.host)
			header := map[string]string{}
			if f.token != "" {
				header["Authorization"] = "Bearer " + f.token
			}
			accepted := []string{"127.0.0.1:" + port, "127.0.0.1", "localhost:" + port, "LOCALHOST:" + port, "localhost.:" + port,
				"[::1]:" + port, "weir-admin.corp.example", "weir-admin.corp.example:443"}
			if hostErr == nil {
				accepted = append(accepted, hostname+":"+port)
			}
			refused := []string{"attacker.example:" + port, "attacker.example", "localhost.attacker.example:" + port,
				"127.0.0.1.nip.io:" + port, "corp.example", "x.weir-admin.corp.example", "[::2]:" + port, "10.9.8.7:" + port}
			for _, host := range accepted {
				res := f.send(t, adminReq{method: http.MethodGet, path: "/api/v1/config", host: host, header: header})
				if res.status != http.StatusOK || !strings.Contains(res.body, `"yaml"`) {
					t.Errorf("GET /api/v1/config, Host %q: %d, want 200 with the configuration:\n%s", host, res.status, clip(res.body))
				}
			}
			for _, host := range refused {
				for _, path := range []string{"/api/v1/config", "/api/v1/overview", "/metrics", "/", "/config", "/login", "/static/weir.css", "/no-such-page"} {
					res := f.send(t, adminReq{method: http.MethodGet, path: path, host: host, header: header})
					wantJSONRefusal(t, "GET "+path+" with Host "+host, res, http.StatusMisdirectedRequest)
					for _, name := range []string{"localhost", "127.0.0.1", "weir-admin", "yaml", "admin-token"} {
						if strings.Contains(res.body, name) {
							t.Errorf("GET %s with Host %s: the refusal tells %q: %s", path, host, name, clip(res.body))
						}
					}
				}
				for _, path := range []string{"/healthz", "/readyz"} {
					if res := f.send(t, adminReq{method: http.MethodGet, path: path, host: host}); res.status != http.StatusOK {
						t.Errorf("probe %s with Host %s: %d, want 200", path, host, res.status)
					}
				}
			}
			logs.mu.Lock()
			log := logs.b.String()
			logs.mu.Unlock()
			if !strings.Contains(log, "admin request refused") || !strings.Contains(log, "attacker.example") || !strings.Contains(log, "weir-admin.corp.example") {
				t.Errorf("the log does not name the refused host and the accepted ones:\n%s", log)
			}
		})
	}
}

// TestAdminHostsConfig: admin.hosts takes DNS names and IP addresses,
// nothing with a scheme, a port or a wildcard, and says which entry is
// wrong.
func TestAdminHostsConfig(t *testing.T) {
	for _, tt := range []struct {
		yaml    string
		wantErr string
	}{
		{"admin:\n  hosts: [weir-admin.corp.example, 10.1.2.3, '[2001:db8::1]', localhost]\n", ""},
		{"admin:\n  hosts: [ok.example, 'weir-admin.corp.example:14001']\n", "admin.hosts[1]"},
		{"admin:\n  hosts: ['https://weir.example']\n", "admin.hosts[0]"},
		{"admin:\n  hosts: ['*.corp.example']\n", "admin.hosts[0]"},
		{"admin:\n  hosts: ['']\n", "admin.hosts[0]"},
	} {
		_, err := server.ParseConfig("", []byte(tt.yaml))
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%q: err = %v, want %q", tt.yaml, err, tt.wantErr)
		}
	}
}
