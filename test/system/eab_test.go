// SPDX-License-Identifier: Apache-2.0

package system

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/server"
	"github.com/weir-pki/weir/web/admin"
)

// eabCreate makes an EAB key with weir eab create --json and returns it
// with its HMAC key decoded.
func (e *env) eabCreate(t *testing.T, label string) (admin.EABKeyView, []byte) {
	t.Helper()
	var k admin.EABKeyView
	e.cli.JSON(t, &k, "eab", "create", "--label", label)
	hk, err := base64.RawURLEncoding.DecodeString(k.HMACKey)
	if err != nil || len(hk) != 32 || k.KeyID == "" || k.Label != label || k.Status != "unbound" {
		t.Fatalf("weir eab create: %+v (HMAC key %d bytes, %v); want a 256-bit base64url key, unbound", k, len(hk), err)
	}
	return k, hk
}

// eabKeys lists the EAB keys with weir eab list --json, by key ID.
func (e *env) eabKeys(t *testing.T) map[string]admin.EABKeyView {
	t.Helper()
	var p admin.Page[admin.EABKeyView]
	e.cli.JSON(t, &p, "eab", "list")
	out := map[string]admin.EABKeyView{}
	for _, k := range p.Items {
		if k.HMACKey != "" {
			t.Errorf("weir eab list shows the HMAC key of %s", k.KeyID)
		}
		out[k.KeyID] = k
	}
	return out
}

// wantACMEError fails t unless err is an ACME problem of type typ with
// status and a detail holding detail.
func wantACMEError(t *testing.T, what string, err error, status int, typ acme.ProblemType, detail string) {
	t.Helper()
	var ae *xacme.Error
	if !errors.As(err, &ae) {
		t.Fatalf("%s: error %v; want an ACME %s problem", what, err, typ)
	}
	if ae.StatusCode != status || ae.ProblemType != string(typ) || !strings.Contains(ae.Detail, detail) {
		t.Fatalf("%s: %d %s %q; want %d %s with %q", what, ae.StatusCode, ae.ProblemType, ae.Detail, status, typ, detail)
	}
}

// eabRequired reads the directory's meta.externalAccountRequired.
func (e *env) eabRequired(t *testing.T) bool {
	t.Helper()
	res := e.Get(t, e.Base+"/directory")
	var d struct {
		Meta map[string]any `json:"meta"`
	}
	if err := json.Unmarshal(res.Body, &d); err != nil {
		t.Fatalf("directory: %v: %s", err, res.Body)
	}
	v, ok := d.Meta["externalAccountRequired"].(bool)
	if !ok {
		t.Fatalf("directory meta has no boolean externalAccountRequired: %s", res.Body)
	}
	return v
}

// TestEAB: External Account Binding end to end with the CLI and
// x/crypto/acme: a key made by weir eab create binds one account, once; a
// wrong MAC, a second binding and a revoked key are refused with
// unauthorized; weir eab list shows what is bound to what; and the
// order-creation override of the key's label ("eab:team-x") applies to
// the accounts bound with it.
func TestEAB(t *testing.T) {
	e := startEnv(t, func(c *server.Config) {
		c.RateLimiting.OrderCreation = ratelimit.OrderCreationConfig{Enabled: true, OrdersPerAccountPerHour: 20, OrderBurst: 3, SANBudgetPerAccountPerHour: 100}
		c.RateLimiting.Overrides = []ratelimit.Override{{Limit: "order-creation", Key: "eab:team-x", OrderBurst: new(int64(10))}}
	})
	ctx := t.Context()
	if e.eabRequired(t) {
		t.Error("directory meta.externalAccountRequired is true; want false by default")
	}

	// weir eab create prints the key and ready-to-paste client flags.
	text := e.cli.Run(t, 0, "eab", "create", "--label", "team-y")
	var kid, hk string
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "key ID:"); ok {
			kid = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "HMAC key:"); ok {
			hk = strings.TrimSpace(v)
		}
	}
	if kid == "" || hk == "" ||
		!strings.Contains(text, "--eab-kid "+kid+" --eab-hmac-key "+hk) ||
		!strings.Contains(text, "--eab --kid "+kid+" --hmac "+hk) {
		t.Fatalf("weir eab create output lacks the key or the certbot and lego flags:\n%s", text)
	}

	// A key binds one account.
	keyX, hmacX := e.eabCreate(t, "team-x")
	acctKey := acmeenv.NewKey(t)
	acct, err := e.eabRegister(ctx, acctKey, keyX.KeyID, hmacX)
	if err != nil {
		t.Fatalf("register with EAB: %v", err)
	}
	boundID := e.accountID(acct.URI)
	// The same account key again: its account, no second binding needed.
	if _, err := e.eabRegister(ctx, acctKey, keyX.KeyID, hmacX); !errors.Is(err, xacme.ErrAccountAlreadyExists) {
		t.Errorf("registering the bound account's key again: %v; want its existing account", err)
	}
	if a, err := e.Client(acctKey).GetReg(ctx, ""); err != nil || a.URI != acct.URI {
		t.Errorf("onlyReturnExisting for the bound account: %+v, %v", a, err)
	}

	// Each key binds once.
	_, err = e.eabRegister(ctx, acmeenv.NewKey(t), keyX.KeyID, hmacX)
	wantACMEError(t, "a second account with the same EAB key", err, http.StatusForbidden, acme.ProbUnauthorized, "already bound")

	// A wrong MAC is refused and does not use the key up.
	keyW, hmacW := e.eabCreate(t, "team-w")
	wrong := append([]byte{}, hmacW...)
	wrong[0] ^= 1
	_, err = e.eabRegister(ctx, acmeenv.NewKey(t), keyW.KeyID, wrong)
	wantACMEError(t, "a wrong MAC", err, http.StatusForbidden, acme.ProbUnauthorized, "MAC does not verify")
	if k := e.eabKeys(t)[keyW.KeyID]; k.Status != "unbound" {
		t.Errorf("key %s after a wrong MAC: %+v; want unbound", keyW.KeyID, k)
	}
	if _, err := e.eabRegister(ctx, acmeenv.NewKey(t), keyW.KeyID, hmacW); err != nil {
		t.Errorf("the right MAC after a wrong one: %v", err)
	}

	// An unknown key.
	_, err = e.eabRegister(ctx, acmeenv.NewKey(t), "no-such-key", hmacW)
	wantACMEError(t, "an unknown EAB key", err, http.StatusForbidden, acme.ProbUnauthorized, "unknown")

	// A revoked key never binds.
	keyR, hmacR := e.eabCreate(t, "team-r")
	out := e.cli.Run(t, 0, "eab", "revoke", keyR.KeyID)
	if !strings.Contains(out, "revoked EAB key "+keyR.KeyID) {
		t.Errorf("weir eab revoke output: %s", out)
	}
	_, err = e.eabRegister(ctx, acmeenv.NewKey(t), keyR.KeyID, hmacR)
	wantACMEError(t, "a revoked EAB key", err, http.StatusForbidden, acme.ProbUnauthorized, "revoked")
	if out := e.cli.Run(t, 1, "eab", "revoke", keyR.KeyID); !strings.Contains(out, "already revoked") {
		t.Errorf("revoking twice: %s", out)
	}
	if out := e.cli.Run(t, 1, "eab", "revoke", "no-such-key"); !strings.Contains(out, "does not exist") {
		t.Errorf("revoking an unknown key: %s", out)
	}
	if out := e.cli.Run(t, 1, "eab", "create", "--label", "bad label"); !strings.Contains(out, "label") {
		t.Errorf("a bad label: %s", out)
	}

	// weir eab list shows every key, what it is bound to, never the HMAC.
	keys := e.eabKeys(t)
	tests := []struct {
		kid, label, status string
		bound              bool
	}{
		{keyX.KeyID, "team-x", "bound", true},
		{keyW.KeyID, "team-w", "bound", true},
		{keyR.KeyID, "team-r", "revoked", false},
		{kid, "team-y", "unbound", false},
	}
	for _, tt := range tests {
		k, ok := keys[tt.kid]
		if !ok || k.Label != tt.label || k.Status != tt.status || (k.BoundAccount != "") != tt.bound || (k.BoundAt != nil) != tt.bound {
			t.Errorf("weir eab list: key %s = %+v; want label %s, %s, bound %v", tt.kid, k, tt.label, tt.status, tt.bound)
		}
	}
	if keys[keyX.KeyID].BoundAccount != boundID {
		t.Errorf("key %s is bound to account %q; want %s", keyX.KeyID, keys[keyX.KeyID].BoundAccount, boundID)
	}
	table := e.cli.Run(t, 0, "eab", "list")
	if !strings.Contains(table, keyX.KeyID) || !strings.Contains(table, boundID) || strings.Contains(table, keyX.HMACKey) {
		t.Errorf("weir eab list table:\n%s", table)
	}
	var teamX admin.Page[admin.EABKeyView]
	e.cli.JSON(t, &teamX, "eab", "list", "--label", "team-x")
	if len(teamX.Items) != 1 || teamX.Items[0].KeyID != keyX.KeyID {
		t.Errorf("weir eab list --label team-x = %+v; want key %s alone", teamX.Items, keyX.KeyID)
	}

	// The team-x override: order-burst 10 instead of the default 3.
	plainKey := acmeenv.NewKey(t)
	_, plainKid := e.RawAccount(plainKey)
	plainID := e.accountID(plainKid)
	for i := range 10 {
		acmeenv.WantStatus(t, e.RawOrder(acctKey, acct.URI, fmt.Sprintf("x%d.weir.test", i)), http.StatusCreated)
	}
	acmeenv.Want429(t, e.RawOrder(acctKey, acct.URI, "x10.weir.test"), "order-creation", boundID)
	for i := range 3 {
		acmeenv.WantStatus(t, e.RawOrder(plainKey, plainKid, fmt.Sprintf("p%d.weir.test", i)), http.StatusCreated)
	}
	acmeenv.Want429(t, e.RawOrder(plainKey, plainKid, "p3.weir.test"), "order-creation", plainID)

	// ratelimit status and explain judge by the same limits.
	var st struct{ Buckets []admin.BucketView }
	e.cli.JSON(t, &st, "ratelimit", "status", "--account", boundID)
	if b := bucketOf(t, st.Buckets, "order-creation:"+boundID); !b.Override || b.Capacity != 10 || b.Remaining != 0 {
		t.Errorf("status of the team-x account = %+v; want the override, 0 of 10 left", b)
	}
	var plainSt struct{ Buckets []admin.BucketView } // fresh: JSON leaves omitted fields as they were
	e.cli.JSON(t, &plainSt, "ratelimit", "status", "--account", plainID)
	if b := bucketOf(t, plainSt.Buckets, "order-creation:"+plainID); b.Override || b.Capacity != 3 {
		t.Errorf("status of the plain account = %+v; want 3, no override", b)
	}
	var ex admin.ExplainView
	e.cli.JSON(t, &ex, "ratelimit", "explain", "--account", boundID, "--names", "next.weir.test")
	if ex.Allowed || ex.Limit != "order-creation" {
		t.Errorf("explain for the team-x account = %+v; want refused by order-creation", ex)
	}
}

// TestEABRequired: with acme.external-account-binding.required, the
// directory says so, a new account without a binding is refused with
// externalAccountRequired, one with a binding is created, and the existing
// account is found again without one (onlyReturnExisting).
func TestEABRequired(t *testing.T) {
	e := startEnv(t, func(c *server.Config) { c.ACME.ExternalAccountBinding.Required = true })
	ctx := t.Context()
	if !e.eabRequired(t) {
		t.Error("directory meta.externalAccountRequired is false; want true")
	}
	res, _ := e.RawAccount(acmeenv.NewKey(t))
	if typ, detail := res.Problem(); res.Status != http.StatusForbidden || typ != string(acme.ProbExternalAccountRequired) {
		t.Fatalf("new-account without EAB: %d %s %q; want 403 externalAccountRequired", res.Status, typ, detail)
	}
	_, err := e.Client(acmeenv.NewKey(t)).Register(ctx, &xacme.Account{}, xacme.AcceptTOS)
	wantACMEError(t, "x/crypto/acme without EAB", err, http.StatusForbidden, acme.ProbExternalAccountRequired, "External Account Binding")

	k, hk := e.eabCreate(t, "team-req")
	key := acmeenv.NewKey(t)
	acct, err := e.eabRegister(ctx, key, k.KeyID, hk)
	if err != nil {
		t.Fatalf("register with EAB: %v", err)
	}
	got, err := e.Client(key).GetReg(ctx, "")
	if err != nil || got.URI != acct.URI {
		t.Fatalf("onlyReturnExisting without EAB: %+v, %v; want account %s", got, err, acct.URI)
	}
	// A plain new-account for the existing key returns it too (200).
	res, loc := e.RawAccount(key)
	if res.Status != http.StatusOK || loc != acct.URI {
		t.Errorf("new-account without EAB for an existing key: %d %s; want 200 %s", res.Status, loc, acct.URI)
	}
	// The account works: an order.
	acmeenv.WantStatus(t, e.RawOrder(key, acct.URI, "req.weir.test"), http.StatusCreated)
}

// TestEABConcurrent: of 8 clients racing to bind one key, exactly one
// gets an account; the others get unauthorized.
func TestEABConcurrent(t *testing.T) {
	e := startEnv(t, nil)
	ctx := t.Context()
	k, hk := e.eabCreate(t, "team-race")
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		key := acmeenv.NewKey(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = e.eabRegister(ctx, key, k.KeyID, hk)
		}()
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		if err == nil {
			won++
			continue
		}
		var ae *xacme.Error
		if !errors.As(err, &ae) || ae.ProblemType != string(acme.ProbUnauthorized) {
			t.Errorf("client %d: %v; want success or unauthorized", i, err)
		}
	}
	if won != 1 {
		t.Errorf("%d clients bound the key; want exactly 1", won)
	}
	if got := e.eabKeys(t)[k.KeyID]; got.Status != "bound" {
		t.Errorf("key after the race: %+v; want bound", got)
	}
}
