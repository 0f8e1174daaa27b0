package admin

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestValidateCredentialsRefuses(t *testing.T) {
	good := StoredCredential{Name: "ci", Role: RoleRead, SHA256: strings.Repeat("ab", 32), CreatedAt: testNow}
	with := func(f func(*StoredCredential)) []StoredCredential {
		c := good
		f(&c)
		return []StoredCredential{c}
	}
	other := good
	other.Name = "ci2"
	for _, tc := range []struct {
		name string
		set  []StoredCredential
		want string
	}{
		{"root's name", with(func(c *StoredCredential) { c.Name = RootName }), `the name "admin" is the token file's credential`},
		{"empty name", with(func(c *StoredCredential) { c.Name = "" }), "the name: it must have 1 to 64 characters"},
		{"bad name", with(func(c *StoredCredential) { c.Name = "a b" }), `credentials[0] ("a b"): the name`},
		{"bad role", with(func(c *StoredCredential) { c.Role = "admin" }), `role "admin" is not read or operate`},
		{"short digest", with(func(c *StoredCredential) { c.SHA256 = "abcd" }), "sha256 must be 64 hexadecimal digits"},
		{"not hex", with(func(c *StoredCredential) { c.SHA256 = strings.Repeat("zz", 32) }), "sha256 must be 64 hexadecimal digits"},
		{"name twice", []StoredCredential{good, good}, `credentials[1] ("ci"): the name is given twice`},
		{"digest twice", []StoredCredential{good, other}, `credentials[1] ("ci2"): the same token digest is given twice`},
	} {
		err := ValidateCredentials(tc.set)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
		if _, err := NewCredentialSet(tc.set, nil, nil); err == nil {
			t.Errorf("%s: NewCredentialSet accepted it", tc.name)
		}
	}
	if err := ValidateCredentials([]StoredCredential{good, {Name: "ops", Role: RoleOperate, SHA256: strings.Repeat("cd", 32)}}); err != nil {
		t.Errorf("a good set: %v", err)
	}
}

func TestCredentialAddRevoke(t *testing.T) {
	var saved [][]StoredCredential
	creds, err := NewCredentialSet(nil, func(s []StoredCredential) error { saved = append(saved, s); return nil }, func() time.Time { return testNow })
	if err != nil {
		t.Fatal(err)
	}
	v, err := creds.Add("ci", RoleRead)
	if err != nil || len(v.Token) != 43 || v.Role != RoleRead {
		t.Fatalf("Add: %+v, %v", v, err)
	}
	if len(saved) != 1 || len(saved[0]) != 1 || saved[0][0].SHA256 == "" || strings.Contains(saved[0][0].SHA256, v.Token) {
		t.Fatalf("saved %+v, want the digest of one credential", saved)
	}
	if _, err := creds.Add("ci", RoleOperate); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("Add twice: %v", err)
	}
	for _, bad := range []struct{ name, role string }{{"admin", "read"}, {"x y", "read"}, {"ops", "root"}, {"", "read"}} {
		if _, err := creds.Add(bad.name, Role(bad.role)); err == nil {
			t.Errorf("Add(%q, %q) accepted", bad.name, bad.role)
		}
	}
	if l := creds.List(); len(l) != 2 || l[0].Name != RootName || l[1].Name != "ci" || l[1].Token != "" {
		t.Errorf("List: %+v", l)
	}
	if err := creds.Revoke("nobody"); err == nil {
		t.Error("Revoke of an unknown name succeeded")
	}
	if err := creds.Revoke(RootName); err == nil {
		t.Error("Revoke of the token file's credential succeeded")
	}
	if err := creds.Revoke("ci"); err != nil || len(saved) != 2 || len(saved[1]) != 0 {
		t.Errorf("Revoke: %v, saved %+v", err, saved)
	}
}

// TestCredentialSessions: a named credential logs in with its role; its
// revocation (or its removal from a set replaced whole) ends its sessions
// and its bearer token at once, and leaves the token file's alone.
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
	if err := e.creds.Revoke("viewer"); err != nil {
		t.Fatal(err)
	}
	se.wantSession("the revoked credential's session", readC, false)
	se.wantSession("the token file's session", rootC, true)
	se.wantSession("the other credential's session", opC, true)
	if res := se.do(http.MethodGet, "/api/v1/config", nil, nil, "Authorization", "Bearer "+e.read); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("the revoked bearer token: %d, want 401", res.StatusCode)
	}
	if err := e.creds.Replace(nil); err != nil {
		t.Fatal(err)
	}
	se.wantSession("a session of a credential no longer in the file", opC, false)
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
		{"taken name", http.MethodPost, "/api/v1/credentials", `{"name":"viewer","role":"operate"}`, 409, `"viewer" exists`},
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
	if l := e.creds.List(); len(l) != 3 {
		t.Errorf("after the refusals: %+v, want admin, oncall and viewer only", l)
	}
}
