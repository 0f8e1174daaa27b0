// SPDX-License-Identifier: Apache-2.0

package server

import (
	"net/http"
	"os"
	"testing"
	"time"
)

// TestAdminTokenRotation: a new token in admin.token-file (read on SIGHUP
// or when the file changes) ends every dashboard session and the old
// token; an unchanged or invalid file ends nothing.
func TestAdminTokenRotation(t *testing.T) {
	e := startEnv(t, nil)
	f := adminFixtureOf(t, e)
	other, _ := f.login(t)
	bearer := func(tok string) int {
		return f.send(t, adminReq{method: http.MethodGet, path: "/api/v1/config", header: map[string]string{"Authorization": "Bearer " + tok}}).status
	}
	live := func(c *http.Cookie) bool {
		return f.send(t, adminReq{method: http.MethodGet, path: "/api/v1/config", cookie: c}).status == http.StatusOK
	}
	path := adminTokenPath(e.cfg)

	// SIGHUP with the same token, then with a file that is no token.
	if err := e.srv.rotateAdminToken("test"); err != nil {
		t.Fatalf("unchanged token: %v", err)
	}
	if err := os.WriteFile(path, []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := e.srv.rotateAdminToken("test"); err == nil {
		t.Error("a token file holding no valid token was taken")
	}
	if !live(f.session) || !live(other) || bearer(f.token) != http.StatusOK {
		t.Fatal("an unchanged or invalid token file ended sessions or the token")
	}

	// A rotation, as SIGHUP does it.
	const next = "rotated-admin-token-0123456789abcdef"
	if err := os.WriteFile(path, []byte(next+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := e.srv.rotateAdminToken("test"); err != nil {
		t.Fatal(err)
	}
	if live(f.session) || live(other) {
		t.Error("a session of the old token outlived the rotation")
	}
	if got := bearer(f.token); got != http.StatusUnauthorized {
		t.Errorf("old token after the rotation: %d, want 401", got)
	}
	if got := bearer(next); got != http.StatusOK {
		t.Errorf("new token: %d, want 200", got)
	}

	// A rotation the running server finds by itself (it polls the file).
	f.token = next
	f.session, f.csrf = f.login(t)
	const third = "third-admin-token-0123456789abcdef"
	if err := os.WriteFile(path, []byte(third+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The poll is every second; the bound is for a loaded machine.
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; live(f.session) && i < 400; i++ {
		if time.Now().After(deadline) {
			t.Fatal("the server did not take the changed token file within 20 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := bearer(third); got != http.StatusOK {
		t.Errorf("the polled token: %d, want 200", got)
	}
}
