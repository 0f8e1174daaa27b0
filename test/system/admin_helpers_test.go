// SPDX-License-Identifier: Apache-2.0

package system

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/web/admin"
)

// The helpers of the admin and dashboard tests that came from other files
// of package server.

// auditLine is the part of an audit event the tests read.
type auditLine struct {
	Type    string `json:"type"`
	Replica string `json:"replica"`
	Actor   struct {
		Kind, ID, Address string
	} `json:"actor"`
	Data map[string]any `json:"data"`
}

func readAudit(t *testing.T, path string) []auditLine {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []auditLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l auditLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, l)
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

// tenantClient registers a new account bound with a new EAB key of tenant
// (labelled as the tenant) and returns its client.
func (e *env) tenantClient(t *testing.T, tenant string) *xacme.Client {
	t.Helper()
	return e.eabKeyClient(t, tenant, tenant)
}

// eabKeyClient registers a new account bound with a new EAB key of label
// and tenant and returns its client.
func (e *env) eabKeyClient(t *testing.T, label, tenant string) *xacme.Client {
	t.Helper()
	c, _, _ := e.eabKeyAccount(t, label, tenant)
	return c
}

// eabKeyAccount is eabKeyClient, which also returns the EAB key the
// account is bound with and its HMAC key, decoded.
func (e *env) eabKeyAccount(t *testing.T, label, tenant string) (*xacme.Client, admin.EABKeyView, []byte) {
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
