// SPDX-License-Identifier: Apache-2.0

package system

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/weir-pki/weir/server"
	"github.com/weir-pki/weir/web/admin"
)

// lastReload is the outcome of the server's last configuration reload as
// the admin API's /api/v1/config reports it (nil before the first).
func (e *env) lastReload(t *testing.T) *admin.ReloadInfo {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.adminURL+"/api/v1/config", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.adminToken(t))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/v1/config: %d", res.StatusCode)
	}
	var info admin.ConfigInfo
	if err := json.NewDecoder(res.Body).Decode(&info); err != nil {
		t.Fatal(err)
	}
	return info.Reload
}

// writeAndReload writes cfg as the server's config file, which must
// differ from the file it replaces, and returns the outcome of the reload
// the server's watch of the file makes of it (polled, bounded): its
// error, if refused, is the one the reload returned.
func (e *env) writeAndReload(t *testing.T, cfg server.Config) admin.ReloadInfo {
	t.Helper()
	before := e.lastReload(t)
	e.writeConfig(cfg)
	for deadline := time.Now().Add(15 * time.Second); ; {
		if r := e.lastReload(t); r != nil && (before == nil || !r.At.Equal(before.At)) {
			return *r
		}
		if time.Now().After(deadline) {
			t.Fatal("the server did not reload its changed config file within 15 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
