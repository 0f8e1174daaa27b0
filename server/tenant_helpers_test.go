// SPDX-License-Identifier: Apache-2.0

package server

import (
	"encoding/base64"
	"testing"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/web/admin"
)

// The tenant helpers of server's tests that stay in package server (the
// tenants' end-to-end tests are test/system's tenants_test.go).

// tenantClient registers a new account bound with a new EAB key of tenant
// (labelled as the tenant) and returns its client.
func (e *testEnv) tenantClient(t *testing.T, tenant string) *xacme.Client {
	t.Helper()
	return e.eabKeyClient(t, tenant, tenant)
}

// eabKeyClient registers a new account bound with a new EAB key of label
// and tenant and returns its client.
func (e *testEnv) eabKeyClient(t *testing.T, label, tenant string) *xacme.Client {
	t.Helper()
	c, _, _ := e.eabKeyAccount(t, label, tenant)
	return c
}

// eabKeyAccount is eabKeyClient, which also returns the EAB key the
// account is bound with and its HMAC key, decoded.
func (e *testEnv) eabKeyAccount(t *testing.T, label, tenant string) (*xacme.Client, admin.EABKeyView, []byte) {
	t.Helper()
	var k admin.EABKeyView
	e.cli.JSON(t, &k, "eab", "create", "--label", label, "--tenant", tenant)
	hk, err := base64.RawURLEncoding.DecodeString(k.HMACKey)
	if err != nil {
		t.Fatal(err)
	}
	key := acmeenv.NewKey(t)
	if _, err := e.eabRegister(t.Context(), key, k.KeyID, hk); err != nil {
		t.Fatalf("register with a key of tenant %s: %v", tenant, err)
	}
	return e.Client(key), k, hk
}
