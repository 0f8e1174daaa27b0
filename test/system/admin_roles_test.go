// SPDX-License-Identifier: Apache-2.0

package system

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/server"
	"github.com/weir-pki/weir/web/admin"
)

// TestAdminRoles: two credentials made with weir admin token add. The read
// one is refused (403, {"error": ...}) a revocation, a reset and a deactivation, and the
// management of credentials; the operate one does them (200). The audit
// trail and the log name each as the actor, the refused attempts too.
// Revoking a credential, or removing it from the store, ends its token.
func TestAdminRoles(t *testing.T) {
	logs := &metricsLogBuf{}
	f := startAdminFixtureLog(t, "token", logs)
	e := f.e
	var viewer, oncall admin.CredentialView
	e.cli.JSON(t, &viewer, "admin", "token", "add", "viewer", "--role", "read")
	e.cli.JSON(t, &oncall, "admin", "token", "add", "oncall", "--role", "operate")
	if viewer.Token == "" || oncall.Token == "" || viewer.Role != admin.RoleRead || oncall.Role != admin.RoleOperate {
		t.Fatalf("weir admin token add: %+v, %+v", viewer, oncall)
	}
	if out := e.cli.Run(t, 0, "admin", "token", "list"); !strings.Contains(out, "viewer") || !strings.Contains(out, "oncall") ||
		strings.Contains(out, viewer.Token) {
		t.Errorf("weir admin token list:\n%s", out)
	}
	if out := e.cli.Run(t, 1, "admin", "token", "add", "viewer", "--role", "operate"); !strings.Contains(out, "exists") {
		t.Errorf("adding a name twice: %s", out)
	}
	as := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }
	actions := []adminReq{
		{method: http.MethodPost, path: "/api/v1/certs/" + f.serial + "/revoke", json: `{"reason":"keyCompromise"}`},
		{method: http.MethodPost, path: "/api/v1/ratelimit/reset", json: `{"key":"` + f.bucket + `"}`},
		{method: http.MethodPost, path: "/api/v1/accounts/" + f.victim + "/deactivate"},
		{method: http.MethodPost, path: "/api/v1/credentials", json: `{"name":"sneaky","role":"operate"}`},
	}
	for _, a := range actions {
		a.header = as(viewer.Token)
		res := f.send(t, a)
		// The admin API's one error shape, {"error": "..."} and no other
		// member, as its 400, 401 and 404 (docs/operations.md).
		var body map[string]any
		err := json.Unmarshal([]byte(res.body), &body)
		msg, _ := body["error"].(string)
		if res.status != http.StatusForbidden || err != nil || len(body) != 1 || res.header.Get("Content-Type") != "application/json" ||
			msg != "the credential viewer has the read role; this needs operate" {
			t.Errorf("%s %s as viewer (read): %d %q %s, want 403 with {\"error\": ...} naming viewer and the roles", a.method, a.path, res.status, res.header.Get("Content-Type"), res.body)
		}
	}
	for _, path := range []string{"/api/v1/certs/" + f.serial, "/api/v1/accounts/" + f.victim, "/api/v1/whoami"} {
		if res := f.send(t, adminReq{method: http.MethodGet, path: path, header: as(viewer.Token)}); res.status != http.StatusOK {
			t.Errorf("GET %s as viewer: %d %s, want 200", path, res.status, res.body)
		}
	}
	for _, a := range actions[:3] {
		a.header = as(oncall.Token)
		if res := f.send(t, a); res.status != http.StatusOK {
			t.Errorf("%s %s as oncall (operate): %d %s, want 200", a.method, a.path, res.status, res.body)
		}
	}

	// The audit trail: each attempt with its actor and status.
	got := map[string]bool{}
	for _, l := range readAudit(t, server.AuditPath(e.cfg)) {
		switch l.Type {
		case "admin-action":
			got[l.Actor.ID+" "+l.Data["action"].(string)+" "+jsonNumber(l.Data["status"])] = true
			if l.Actor.Kind != "admin" || l.Actor.Address != "127.0.0.1" {
				t.Errorf("admin action %+v, want an admin actor from 127.0.0.1", l)
			}
		case "revocation":
			got["revocation by "+l.Actor.ID] = true
		}
	}
	for _, a := range actions {
		if !got["viewer POST "+a.path+" 403"] {
			t.Errorf("the audit trail lacks viewer's refused %s; has %v", a.path, got)
		}
	}
	for _, a := range actions[:3] {
		if !got["oncall POST "+a.path+" 200"] {
			t.Errorf("the audit trail lacks oncall's %s; has %v", a.path, got)
		}
	}
	if !got["revocation by oncall"] {
		t.Errorf("the revocation event does not name oncall; have %v", got)
	}

	// The log: the refusals name viewer, the actions oncall.
	logged := map[string]bool{}
	logs.mu.Lock()
	sc := bufio.NewScanner(strings.NewReader(logs.b.String()))
	logs.mu.Unlock()
	for sc.Scan() {
		var l map[string]any
		if json.Unmarshal(sc.Bytes(), &l) == nil && l["actor"] != nil {
			logged[l["actor"].(string)+": "+l["msg"].(string)] = true
		}
	}
	for _, want := range []string{"viewer: admin request refused: role", "oncall: admin: certificate revoked",
		"oncall: admin: rate limit bucket reset", "oncall: admin: account deactivated", "admin: admin: credential added"} {
		if !logged[want] {
			t.Errorf("the log lacks %q; has %v", want, logged)
		}
	}

	// The store holds digests, never a token, and who added each.
	stored, err := e.srv.Store().ListAdminCredentials(t.Context())
	if err != nil || len(stored) != 2 {
		t.Fatalf("the store's admin credentials: %v, %v; want oncall and viewer", stored, err)
	}
	if d := sha256.Sum256([]byte(oncall.Token)); stored[0].Name != "oncall" || stored[0].SHA256 != hex.EncodeToString(d[:]) ||
		stored[0].CreatedBy != admin.RootName || stored[0].Role != "operate" {
		t.Errorf("the store's oncall: %+v; want its token's digest, operate, added by %s", stored[0], admin.RootName)
	}
	e.cli.Run(t, 0, "admin", "token", "revoke", "viewer")
	if res := f.send(t, adminReq{method: http.MethodGet, path: "/api/v1/whoami", header: as(viewer.Token)}); res.status != http.StatusUnauthorized {
		t.Errorf("the revoked token: %d, want 401", res.status)
	}
	// A revocation by another replica (a row deleted from the store)
	// takes effect without a restart.
	if err := e.srv.Store().DeleteAdminCredential(t.Context(), "oncall"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; ; i++ {
		res := f.send(t, adminReq{method: http.MethodGet, path: "/api/v1/whoami", header: as(oncall.Token)})
		if res.status == http.StatusUnauthorized {
			break
		}
		if i == 200 || time.Now().After(deadline) {
			t.Fatalf("oncall's token still answers %d after its removal from the store", res.status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// jsonNumber prints a decoded JSON number as an integer.
func jsonNumber(v any) string {
	f, _ := v.(float64)
	return strconv.Itoa(int(f))
}
