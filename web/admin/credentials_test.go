// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// TestCredentialRowsRefused: rows of the store that are no usable
// credential (the token file's name, a bad name, a bad role) are left out
// with an error naming each; the good ones are installed.
func TestCredentialRowsRefused(t *testing.T) {
	st := openCredentialStore(t)
	good := acme.AdminCredential{Name: "ci", Role: "read", SHA256: strings.Repeat("ab", 32), CreatedAt: testNow, CreatedBy: RootName}
	for i, tc := range []struct{ name, role, want string }{
		{RootName, "read", `"admin": the name "admin" is the token file's credential`},
		{"a b", "read", `"a b": the name: `},
		{"ops", "root", `"ops": role "root" is not read or operate`},
	} {
		c := good
		c.Name, c.Role, c.SHA256 = tc.name, tc.role, strings.Repeat(string(rune('0'+i))+"1", 32)
		if err := st.CreateAdminCredential(t.Context(), &c); err != nil {
			t.Fatal(err)
		}
		t.Run(tc.name, func(t *testing.T) {
			err := NewCredentialSet(st, func() time.Time { return testNow }).Refresh(t.Context())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Refresh: %v, want an error with %q", err, tc.want)
			}
		})
	}
	if err := st.CreateAdminCredential(t.Context(), &good); err != nil {
		t.Fatal(err)
	}
	creds := NewCredentialSet(st, func() time.Time { return testNow })
	if err := creds.Refresh(t.Context()); err == nil {
		t.Error("Refresh of a store with bad rows: no error")
	}
	var d [sha256.Size]byte
	_, _ = hex.Decode(d[:], []byte(good.SHA256))
	if p, ok := creds.lookup(d); !ok || p != (Principal{Name: "ci", Role: RoleRead}) {
		t.Errorf("the good row: %+v, %v; want ci (read)", p, ok)
	}
	if p, ok := creds.lookup(sha256.Sum256([]byte("x"))); ok {
		t.Errorf("an unknown token: %+v", p)
	}
}

// TestCredentialAddRevoke: Add stores the name, role, token digest, time
// and author (never the token) and returns the token once; a name twice,
// a bad name or role, an unknown or the token file's name to revoke are
// refused; Revoke deletes the row.
func TestCredentialAddRevoke(t *testing.T) {
	st := openCredentialStore(t)
	creds := NewCredentialSet(st, func() time.Time { return testNow })
	if err := creds.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	v, err := creds.Add(t.Context(), "ci", RoleRead, "alice")
	if err != nil || v.Token == "" || v.Name != "ci" || v.Role != RoleRead || !v.CreatedAt.Equal(testNow) || v.CreatedBy != "alice" {
		t.Fatalf("Add: %+v, %v", v, err)
	}
	rows, err := st.ListAdminCredentials(t.Context())
	d := sha256.Sum256([]byte(v.Token))
	if err != nil || len(rows) != 1 || rows[0].SHA256 != hex.EncodeToString(d[:]) || rows[0].CreatedBy != "alice" || rows[0].Role != "read" {
		t.Fatalf("the store after Add: %+v, %v", rows, err)
	}
	if p, ok := creds.lookup(d); !ok || p.Name != "ci" {
		t.Errorf("the new token here at once: %+v, %v", p, ok)
	}
	if _, err := creds.Add(t.Context(), "ci", RoleOperate, "alice"); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("Add of a taken name: %v", err)
	}
	for _, bad := range []struct{ name, role string }{{RootName, "read"}, {"a b", "read"}, {"", "read"}, {"x", "root"}} {
		if _, err := creds.Add(t.Context(), bad.name, Role(bad.role), "alice"); err == nil {
			t.Errorf("Add(%q, %q) accepted", bad.name, bad.role)
		}
	}
	if l, err := creds.List(t.Context()); err != nil || len(l) != 2 || l[0].Name != RootName || l[1].Name != "ci" || l[1].Token != "" || l[1].CreatedBy != "alice" {
		t.Errorf("List: %+v, %v", l, err)
	}
	if err := creds.Revoke(t.Context(), "nobody"); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("Revoke of an unknown name: %v", err)
	}
	if err := creds.Revoke(t.Context(), RootName); err == nil {
		t.Error("Revoke of the token file's credential accepted")
	}
	if err := creds.Revoke(t.Context(), "ci"); err != nil {
		t.Fatal(err)
	}
	if rows, err := st.ListAdminCredentials(t.Context()); err != nil || len(rows) != 0 {
		t.Errorf("the store after Revoke: %+v, %v", rows, err)
	}
	if _, ok := creds.lookup(d); ok {
		t.Error("the revoked token still found")
	}
}

// TestCredentialsTwoSets: two sets on one store, as two replicas: an
// addition through one works on the other after its next read, and so
// does a revocation.
func TestCredentialsTwoSets(t *testing.T) {
	st := openCredentialStore(t)
	a, b := NewCredentialSet(st, nil), NewCredentialSet(st, nil)
	v, err := a.Add(t.Context(), "ci", RoleRead, RootName)
	if err != nil {
		t.Fatal(err)
	}
	d := sha256.Sum256([]byte(v.Token))
	if _, ok := b.lookup(d); ok {
		t.Error("B found the token before reading the store")
	}
	if err := b.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	if p, ok := b.lookup(d); !ok || p.Role != RoleRead {
		t.Fatalf("B after its read: %+v, %v", p, ok)
	}
	if err := a.Revoke(t.Context(), "ci"); err != nil {
		t.Fatal(err)
	}
	if err := b.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.lookup(d); ok {
		t.Error("B still takes the token revoked through A after its read")
	}
}

// TestCredentialsStoreDown: with the store closed, the token file's
// credential still gets in; a named one works while the last read is
// younger than CredentialsMaxAge and is refused after (its session ends
// too); a set that never read refuses named ones; adding and listing
// fail with 503.
func TestCredentialsStoreDown(t *testing.T) {
	e := newRoleEnv(t)
	se := &sessionEnv{t: t, s: e.s, h: e.h, clock: e.clock}
	res := se.do(http.MethodPost, "/login", nil, url.Values{"token": {e.read}})
	readC := sessionCookieOf(res)
	if res.StatusCode != http.StatusSeeOther || readC == nil {
		t.Fatalf("login: %d", res.StatusCode)
	}
	bearer := func(tok string) int {
		return se.do(http.MethodGet, "/api/v1/whoami", nil, nil, "Authorization", "Bearer "+tok).StatusCode
	}
	if err := e.store.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.creds.Refresh(t.Context()); err == nil {
		t.Fatal("Refresh of a closed store: no error")
	}
	e.clock.Advance(CredentialsMaxAge - time.Millisecond)
	if c := bearer(e.read); c != http.StatusOK {
		t.Errorf("a named token within CredentialsMaxAge of the last read: %d, want 200", c)
	}
	e.clock.Advance(time.Millisecond)
	if c := bearer(e.read); c != http.StatusUnauthorized {
		t.Errorf("a named token at CredentialsMaxAge with the store down: %d, want 401", c)
	}
	se.wantSession("a named credential's session with the store down", readC, false)
	if c := bearer(testToken); c != http.StatusOK {
		t.Errorf("the token file's token with the store down: %d, want 200", c)
	}
	for _, tc := range []struct{ method, body string }{{http.MethodPost, `{"name":"late","role":"read"}`}, {http.MethodGet, ""}} {
		r := httptest.NewRequest(tc.method, "/api/v1/credentials", strings.NewReader(tc.body))
		r.Header.Set("Authorization", "Bearer "+testToken)
		r.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, r)
		if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "cannot be read or written in the store") {
			t.Errorf("%s /api/v1/credentials with the store down: %d %s, want 503", tc.method, rec.Code, rec.Body.String())
		}
	}
	fresh := NewCredentialSet(e.store, nil)
	if err := fresh.Refresh(t.Context()); err == nil {
		t.Error("the first read of a closed store: no error")
	}
	if _, ok := fresh.lookup(sha256.Sum256([]byte(e.read))); ok {
		t.Error("a set that never read the store took a named token")
	}
}

// TestCredentialSessions: a named credential logs in with its role; its
// revocation ends its sessions and its bearer token at once (and, by
// another replica, its removal from the store at the next read), and
// leaves the token file's alone.
func TestCredentialSessions(t *testing.T) {
	e := newRoleEnv(t)
	se := &sessionEnv{t: t, s: e.s, h: e.h}
	loginAs := func(tok string) *http.Cookie {
		res := se.do(http.MethodPost, "/login", nil, url.Values{"token": {tok}})
		c := sessionCookieOf(res)
		if res.StatusCode != http.StatusSeeOther || c == nil {
			t.Fatalf("login: %d", res.StatusCode)
		}
		return c
	}
	rootC, readC, opC := loginAs(testToken), loginAs(e.read), loginAs(e.operate)
	page := readBody(t, se.do(http.MethodGet, "/config", readC, nil))
	if !strings.Contains(page, "viewer") || !strings.Contains(page, "read") {
		t.Errorf("the read user's page does not say who is logged in:\n%s", page)
	}
	if err := e.creds.Revoke(t.Context(), "viewer"); err != nil {
		t.Fatal(err)
	}
	se.wantSession("the revoked credential's session", readC, false)
	se.wantSession("the token file's session", rootC, true)
	se.wantSession("the other credential's session", opC, true)
	if res := se.do(http.MethodGet, "/api/v1/config", nil, nil, "Authorization", "Bearer "+e.read); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("the revoked bearer token: %d, want 401", res.StatusCode)
	}
	// Revoked by another replica: gone from the store, and here at the
	// next read.
	if err := e.store.DeleteAdminCredential(t.Context(), "oncall"); err != nil {
		t.Fatal(err)
	}
	se.wantSession("the other credential's session before the next read", opC, true)
	if err := e.creds.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	se.wantSession("a session of a credential no longer in the store", opC, false)
	se.wantSession("the token file's session after the replacement", rootC, true)
}

// TestCredentialAPIRefuses: bad requests to the credentials API get a
// precise status and message and change nothing.
func TestCredentialAPIRefuses(t *testing.T) {
	e := newRoleEnv(t)
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		want                     string
	}{
		{"root's name", http.MethodPost, "/api/v1/credentials", `{"name":"admin","role":"read"}`, 400, `the name "admin" is the token file's credential`},
		{"bad name", http.MethodPost, "/api/v1/credentials", `{"name":"a b","role":"read"}`, 400, "the name: "},
		{"no name", http.MethodPost, "/api/v1/credentials", `{"role":"read"}`, 400, "1 to 64 characters"},
		{"bad role", http.MethodPost, "/api/v1/credentials", `{"name":"x","role":"root"}`, 400, `role "root" is not read or operate`},
		{"no role", http.MethodPost, "/api/v1/credentials", `{"name":"x"}`, 400, `role "" is not read or operate`},
		{"unknown field", http.MethodPost, "/api/v1/credentials", `{"name":"x","role":"read","token":"mine"}`, 400, "unknown field"},
		{"root's name in capitals", http.MethodPost, "/api/v1/credentials", `{"name":"ADMIN","role":"read"}`, 400,
			`the name "ADMIN" is the token file's credential "admin" (names are compared without regard to case)`},
		{"root's name capitalised", http.MethodPost, "/api/v1/credentials", `{"name":"Admin","role":"operate"}`, 400, `the name "Admin" is the token file's credential "admin"`},
		{"taken name", http.MethodPost, "/api/v1/credentials", `{"name":"viewer","role":"operate"}`, 409, `"viewer" exists`},
		{"taken name in capitals", http.MethodPost, "/api/v1/credentials", `{"name":"VIEWER","role":"operate"}`, 409,
			`the credential "viewer" exists, and names are compared without regard to case: choose another name, or revoke "viewer" first`},
		{"revoke unknown", http.MethodDelete, "/api/v1/credentials/nobody", "", 404, `credential "nobody" does not exist`},
		{"revoke root", http.MethodDelete, "/api/v1/credentials/admin", "", 400, "replace the token file"},
	} {
		r := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
		r.Header.Set("Authorization", "Bearer "+testToken)
		r.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, r)
		var body struct{ Error string }
		_ = json.Unmarshal(rec.Body.Bytes(), &body)
		if rec.Code != tc.status || !strings.Contains(body.Error, tc.want) {
			t.Errorf("%s: %d %q, want %d with %q", tc.name, rec.Code, body.Error, tc.status, tc.want)
		}
	}
	if l, err := e.creds.List(t.Context()); err != nil || len(l) != 3 {
		t.Errorf("after the refusals: %+v, want admin, oncall and viewer only", l)
	}
}
