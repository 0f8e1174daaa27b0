// SPDX-License-Identifier: Apache-2.0

package system

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/server"
	"github.com/weir-pki/weir/web/admin"
)

// TestAdminDuplicateCertificateNames: the admin API's bucket status names
// the set of a duplicate-certificate key from an order that has no
// certificate yet (the order is found, not a certificate), in any order
// the names were asked in; a key of a set never asked for has no names.
func TestAdminDuplicateCertificateNames(t *testing.T) {
	e := startEnv(t, func(c *server.Config) { c.RateLimiting.DuplicateCertificate.Enabled = true })
	_, key, _, acct := e.Registered(t)
	id := strings.TrimPrefix(acct.URI, e.Base+"/acme/account/")
	names := []string{"p2.weir.test", "p1.weir.test"}
	acmeenv.WantStatus(t, e.RawOrder(key, acct.URI, names...), 201)

	token := e.adminToken(t)
	status := func(k string) admin.BucketView {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, e.adminURL+"/api/v1/ratelimit/status?key="+url.QueryEscape(k), nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out struct{ Buckets []admin.BucketView }
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != 200 || len(out.Buckets) != 1 {
			t.Fatalf("status of %s: %d, %v, %+v", k, res.StatusCode, err, out)
		}
		return out.Buckets[0]
	}
	got := status("duplicate-certificate:" + ratelimit.FQDNSetKey(id, []string{"p1.weir.test", "p2.weir.test"}))
	if !slices.Equal(got.Names, []string{"p1.weir.test", "p2.weir.test"}) {
		t.Errorf("names %q, want the order's %q (sorted)", got.Names, names)
	}
	if got := status("duplicate-certificate:" + ratelimit.FQDNSetKey(id, []string{"other.weir.test"})); got.Names != nil {
		t.Errorf("a set never asked for has names %q", got.Names)
	}
}
