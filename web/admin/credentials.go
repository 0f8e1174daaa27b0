package admin

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/weir-pki/weir/acme"
)

// Administrators' credentials. The token file's token is the first one,
// named RootName with the operate role, so that an installation without
// any other credential behaves as it always has. Named credentials with a
// role each are added and revoked at run time (the admin API, `weir admin
// token`); only the SHA-256 of their tokens is kept.

// Role is what a credential may do on the admin listener.
type Role string

const (
	// RoleRead sees every page and listing and changes nothing.
	RoleRead Role = "read"
	// RoleOperate may also change state: revoke, reset, deactivate, EAB
	// keys, tenants, incident actions, credentials.
	RoleOperate Role = "operate"
)

// RootName is the name of the token file's credential, the actor of what
// it does (and of everything under admin.auth: none).
const RootName = "admin"

// allows reports whether r may do what needs need.
func (r Role) allows(need Role) bool {
	return r == RoleOperate || (r == RoleRead && need == RoleRead)
}

// ParseRole reads a role name.
func ParseRole(s string) (Role, error) {
	switch Role(s) {
	case RoleRead, RoleOperate:
		return Role(s), nil
	}
	return "", fmt.Errorf("role %q is not read or operate", s)
}

// Principal is who made a request: a credential's name and role.
type Principal struct {
	Name string `json:"name"`
	Role Role   `json:"role"`
}

// root is the principal of the token file's token.
var root = Principal{Name: RootName, Role: RoleOperate}

// StoredCredential is a named credential as it is kept: never its token,
// only the token's SHA-256 (hex).
type StoredCredential struct {
	Name      string    `json:"name"`
	Role      Role      `json:"role"`
	SHA256    string    `json:"sha256"`
	CreatedAt time.Time `json:"created_at"`
}

// CredentialView is a credential as the API lists it; Token is set only
// in the answer that created it.
type CredentialView struct {
	Name      string    `json:"name"`
	Role      Role      `json:"role"`
	CreatedAt time.Time `json:"created_at,omitzero"`
	Token     string    `json:"token,omitempty"`
}

// credentialTokenBytes is the entropy of a generated credential token.
const credentialTokenBytes = 32

// CredentialSet holds the named credentials. Save, when set, persists the
// set after each change made through Add or Revoke; Replace installs a
// set read from elsewhere (a file edited by hand).
type CredentialSet struct {
	save func([]StoredCredential) error
	now  func() time.Time

	mu       sync.RWMutex
	byName   map[string]StoredCredential
	byDigest map[[sha256.Size]byte]string
}

// NewCredentialSet returns the set stored; save may be nil.
func NewCredentialSet(stored []StoredCredential, save func([]StoredCredential) error, now func() time.Time) (*CredentialSet, error) {
	if now == nil {
		now = time.Now
	}
	c := &CredentialSet{save: save, now: now}
	if err := c.Replace(stored); err != nil {
		return nil, err
	}
	return c, nil
}

// ValidateCredentials reports every problem of a stored set: a bad name
// (the tenant name rules; RootName is the token file's), a name twice, a
// bad role, a digest that is not 64 hex digits, a digest twice.
func ValidateCredentials(stored []StoredCredential) error {
	var problems []string
	names := map[string]bool{}
	digests := map[string]bool{}
	for i, c := range stored {
		at := fmt.Sprintf("credentials[%d] (%q)", i, c.Name)
		if err := checkCredentialName(c.Name); err != nil {
			problems = append(problems, at+": "+err.Error())
		}
		if names[c.Name] {
			problems = append(problems, at+": the name is given twice")
		}
		names[c.Name] = true
		if _, err := ParseRole(string(c.Role)); err != nil {
			problems = append(problems, at+": "+err.Error())
		}
		if b, err := hex.DecodeString(c.SHA256); err != nil || len(b) != sha256.Size {
			problems = append(problems, at+": sha256 must be 64 hexadecimal digits")
		} else if digests[strings.ToLower(c.SHA256)] {
			problems = append(problems, at+": the same token digest is given twice")
		}
		digests[strings.ToLower(c.SHA256)] = true
	}
	if problems != nil {
		return fmt.Errorf("admin credentials: %s", strings.Join(problems, "; "))
	}
	return nil
}

// checkCredentialName is the tenant name rule, and not RootName.
func checkCredentialName(name string) error {
	if name == RootName {
		return fmt.Errorf("the name %q is the token file's credential", RootName)
	}
	if err := acme.CheckTenantName(name); err != nil {
		return fmt.Errorf("the name: %s", strings.TrimPrefix(err.Error(), "tenant name: "))
	}
	return nil
}

// Replace installs stored as the whole set, when it is valid. The
// dashboard sessions of a credential no longer in it end at their next
// request (auth.use looks the credential up again).
func (c *CredentialSet) Replace(stored []StoredCredential) error {
	if err := ValidateCredentials(stored); err != nil {
		return err
	}
	byName := map[string]StoredCredential{}
	byDigest := map[[sha256.Size]byte]string{}
	for _, s := range stored {
		s.SHA256 = strings.ToLower(s.SHA256)
		byName[s.Name] = s
		var d [sha256.Size]byte
		_, _ = hex.Decode(d[:], []byte(s.SHA256))
		byDigest[d] = s.Name
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.byName, c.byDigest = byName, byDigest
	return nil
}

// lookup returns the principal of the token whose SHA-256 is d. The map
// is keyed by the digest, so that the lookup's timing says nothing about
// the tokens held; the digest found is compared again in constant time.
func (c *CredentialSet) lookup(d [sha256.Size]byte) (Principal, bool) {
	if c == nil {
		return Principal{}, false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	name, ok := c.byDigest[d]
	if !ok {
		return Principal{}, false
	}
	s := c.byName[name]
	var want [sha256.Size]byte
	_, _ = hex.Decode(want[:], []byte(s.SHA256))
	if subtle.ConstantTimeCompare(want[:], d[:]) != 1 {
		return Principal{}, false
	}
	return Principal{Name: s.Name, Role: s.Role}, true
}

// Stored is the set in its stored form, by name.
func (c *CredentialSet) Stored() []StoredCredential {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.storedLocked()
}

func (c *CredentialSet) storedLocked() []StoredCredential {
	out := make([]StoredCredential, 0, len(c.byName))
	for _, s := range c.byName {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b StoredCredential) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// List is every credential, the token file's first.
func (c *CredentialSet) List() []CredentialView {
	out := []CredentialView{{Name: root.Name, Role: root.Role}}
	if c == nil {
		return out
	}
	for _, s := range c.Stored() {
		out = append(out, CredentialView{Name: s.Name, Role: s.Role, CreatedAt: s.CreatedAt})
	}
	return out
}

// Add makes a credential: its token is returned here and kept nowhere.
func (c *CredentialSet) Add(name string, role Role) (CredentialView, error) {
	if err := checkCredentialName(name); err != nil {
		return CredentialView{}, acme.Malformed("%v", err)
	}
	if _, err := ParseRole(string(role)); err != nil {
		return CredentialView{}, acme.Malformed("%v", err)
	}
	b := make([]byte, credentialTokenBytes)
	_, _ = rand.Read(b) // it never fails (crypto/rand, Go 1.24)
	token := base64.RawURLEncoding.EncodeToString(b)
	d := sha256.Sum256([]byte(token))
	s := StoredCredential{Name: name, Role: role, SHA256: hex.EncodeToString(d[:]), CreatedAt: c.now().UTC().Truncate(time.Second)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.byName[name]; dup {
		return CredentialView{}, &apiError{status: http.StatusConflict, msg: fmt.Sprintf("a credential named %q exists; revoke it first", name)}
	}
	next := append(c.storedLocked(), s)
	if c.save != nil {
		if err := c.save(next); err != nil {
			return CredentialView{}, fmt.Errorf("saving the admin credentials: %w", err)
		}
	}
	c.byName[name] = s
	c.byDigest[d] = name
	return CredentialView{Name: name, Role: role, CreatedAt: s.CreatedAt, Token: token}, nil
}

// Revoke removes the credential name; its token stops working at once and
// its dashboard sessions end.
func (c *CredentialSet) Revoke(name string) error {
	if name == RootName {
		return &apiError{status: http.StatusBadRequest, msg: fmt.Sprintf("%q is the token file's credential: replace the token file to rotate it", RootName)}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.byName[name]
	if !ok {
		return &apiError{status: http.StatusNotFound, msg: fmt.Sprintf("credential %q does not exist", name)}
	}
	next := slices.DeleteFunc(c.storedLocked(), func(x StoredCredential) bool { return x.Name == name })
	if c.save != nil {
		if err := c.save(next); err != nil {
			return fmt.Errorf("saving the admin credentials: %w", err)
		}
	}
	delete(c.byName, name)
	var d [sha256.Size]byte
	_, _ = hex.Decode(d[:], []byte(s.SHA256))
	delete(c.byDigest, d)
	return nil
}
