// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/weir-pki/weir/acme"
)

// Administrators' credentials. The token file's token is the first one,
// named RootName with the operate role, so that an installation without
// any other credential behaves as it always has, and so that it lets the
// operator in while the store cannot be read. Named credentials with a
// role each are added and revoked at run time (the admin API, `weir admin
// token`) and kept in the store (acme.AdminCredentialStore), shared by
// every replica; only the SHA-256 of their tokens is kept. Each process
// reads them again every CredentialsRefresh (Run), and refuses them once
// its last good read is older than CredentialsMaxAge: an addition or a
// revocation on one replica holds on every other within CredentialsMaxAge,
// and a replica that cannot read the store fails closed.

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

// CredentialView is a credential as the API lists it; Token is set only
// in the answer that created it.
type CredentialView struct {
	Name      string    `json:"name"`
	Role      Role      `json:"role"`
	CreatedAt time.Time `json:"created_at,omitzero"`
	CreatedBy string    `json:"created_by,omitempty"`
	Token     string    `json:"token,omitempty"`
}

// credentialTokenBytes is the entropy of a generated credential token.
const credentialTokenBytes = 32

const (
	// CredentialsRefresh is how often Run reads the named credentials
	// from the store.
	CredentialsRefresh = time.Second
	// credentialsReadTimeout bounds one read of them.
	credentialsReadTimeout = time.Second
	// CredentialsMaxAge is how long a read stays good: past it, with no
	// newer read, named credentials are refused (and their dashboard
	// sessions end) until the store answers again. It is the bound within
	// which a revocation on one replica holds on every other.
	CredentialsMaxAge = 3 * time.Second
)

// CredentialSet holds the named credentials read from the store, with
// the time of the read.
type CredentialSet struct {
	store acme.AdminCredentialStore
	now   func() time.Time

	mu       sync.RWMutex
	byName   map[string]acme.AdminCredential
	byDigest map[[sha256.Size]byte]string
	readAt   time.Time // when the read installed began; zero before the first
	writes   uint64    // Add and Revoke done here, so that an older read does not undo one
}

// NewCredentialSet returns the set of store, empty until its first
// Refresh; now is the clock (nil for time.Now).
func NewCredentialSet(store acme.AdminCredentialStore, now func() time.Time) *CredentialSet {
	if now == nil {
		now = time.Now
	}
	return &CredentialSet{store: store, now: now, byName: map[string]acme.AdminCredential{}, byDigest: map[[sha256.Size]byte]string{}}
}

// checkCredential reports why a stored credential cannot be used: a bad
// name (the tenant name rules; RootName is the token file's), a bad role,
// a digest that is not 64 hexadecimal digits.
func checkCredential(c *acme.AdminCredential) error {
	if err := checkCredentialName(c.Name); err != nil {
		return err
	}
	if _, err := ParseRole(c.Role); err != nil {
		return err
	}
	if b, err := hex.DecodeString(c.SHA256); err != nil || len(b) != sha256.Size {
		return errors.New("sha256 must be 64 hexadecimal digits")
	}
	return nil
}

// checkCredentialName is the tenant name rule, and not RootName. Names
// are compared without regard to case, here and in the store's
// uniqueness, so that no credential reads like another in the audit
// trail: "ADMIN" is the token file's name too.
func checkCredentialName(name string) error {
	if strings.EqualFold(name, RootName) {
		return fmt.Errorf("the name %q is the token file's credential %q (names are compared without regard to case)", name, RootName)
	}
	if err := acme.CheckTenantName(name); err != nil {
		return fmt.Errorf("the name: %s", strings.TrimPrefix(err.Error(), "tenant name: "))
	}
	return nil
}

// digestOf is the SHA-256 a credential keeps in hex.
func digestOf(c acme.AdminCredential) [sha256.Size]byte {
	var d [sha256.Size]byte
	_, _ = hex.Decode(d[:], []byte(strings.ToLower(c.SHA256)))
	return d
}

// Refresh reads the credentials from the store and installs them. A row
// that cannot be used (checkCredential) is left out and named in the
// error, the others installed; a failed read changes nothing, so that the
// set ages and fails closed at CredentialsMaxAge.
func (c *CredentialSet) Refresh(ctx context.Context) error {
	c.mu.RLock()
	writes := c.writes
	c.mu.RUnlock()
	began := c.now()
	ctx, cancel := context.WithTimeout(ctx, credentialsReadTimeout)
	defer cancel()
	rows, err := c.store.ListAdminCredentials(ctx)
	if err != nil {
		return fmt.Errorf("admin credentials: reading the store: %w", err)
	}
	byName := map[string]acme.AdminCredential{}
	byDigest := map[[sha256.Size]byte]string{}
	folded := map[string]string{} // lower-case name → the name kept
	var bad []string
	for _, r := range oldestFirst(rows) {
		d := digestOf(*r)
		if err := checkCredential(r); err != nil {
			bad = append(bad, fmt.Sprintf("%q: %v", r.Name, err))
			continue
		}
		if _, dup := byDigest[d]; dup {
			bad = append(bad, fmt.Sprintf("%q: the same token digest as %q", r.Name, byDigest[d]))
			continue
		}
		if kept, dup := folded[strings.ToLower(r.Name)]; dup {
			bad = append(bad, fmt.Sprintf("%q: the name differs only in case from the older credential %q; revoke one", r.Name, kept))
			continue
		}
		byName[r.Name] = *r
		byDigest[d] = r.Name
		folded[strings.ToLower(r.Name)] = r.Name
	}
	c.mu.Lock()
	if c.writes == writes {
		c.byName, c.byDigest, c.readAt = byName, byDigest, began
	} // else an Add or Revoke here raced the read: the next read has it
	c.mu.Unlock()
	if bad != nil {
		return fmt.Errorf("admin credentials: left out of the store's: %s", strings.Join(bad, "; "))
	}
	return nil
}

// oldestFirst orders credentials by creation, ties by name: of names
// equal but for case (kept from before names were compared so), the
// first is the one used, as the store's migration chose it.
func oldestFirst(rows []*acme.AdminCredential) []*acme.AdminCredential {
	return slices.SortedStableFunc(slices.Values(rows), func(a, b *acme.AdminCredential) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.Name, b.Name))
	})
}

// Run reads the credentials every CredentialsRefresh until ctx ends,
// logging a failed read once until a read succeeds again.
func (c *CredentialSet) Run(ctx context.Context, log *slog.Logger) {
	tick := time.NewTicker(CredentialsRefresh)
	defer tick.Stop()
	failing := false
	for {
		err := c.Refresh(ctx)
		switch {
		case err != nil && !failing && ctx.Err() == nil:
			log.Error("admin credentials cannot be read; named credentials are refused once the last read is older than "+CredentialsMaxAge.String()+
				" (the token file's still works)", "err", err)
		case err == nil && failing:
			log.Info("admin credentials read again")
		}
		failing = err != nil
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// freshLocked reports whether the last read is recent enough to trust; c.mu is
// held.
func (c *CredentialSet) freshLocked() bool {
	return !c.readAt.IsZero() && c.now().Before(c.readAt.Add(CredentialsMaxAge))
}

// lookup returns the principal of the token whose SHA-256 is d. The map
// is keyed by the digest, so that the lookup's timing says nothing about
// the tokens held; the digest found is compared again in constant time.
// Nothing is found while the set is stale.
func (c *CredentialSet) lookup(d [sha256.Size]byte) (Principal, bool) {
	if c == nil {
		return Principal{}, false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.freshLocked() {
		return Principal{}, false
	}
	name, ok := c.byDigest[d]
	if !ok {
		return Principal{}, false
	}
	s := c.byName[name]
	want := digestOf(s)
	if subtle.ConstantTimeCompare(want[:], d[:]) != 1 {
		return Principal{}, false
	}
	return Principal{Name: s.Name, Role: Role(s.Role)}, true
}

// List is every credential, the token file's first, as the store has them
// now: it reads them first, and fails when the store cannot be read.
func (c *CredentialSet) List(ctx context.Context) ([]CredentialView, error) {
	out := []CredentialView{{Name: root.Name, Role: root.Role}}
	if c == nil {
		return out, nil
	}
	rows, err := c.store.ListAdminCredentials(ctx)
	if err != nil {
		return nil, unavailable(err)
	}
	for _, s := range rows {
		out = append(out, CredentialView{Name: s.Name, Role: Role(s.Role), CreatedAt: s.CreatedAt, CreatedBy: s.CreatedBy})
	}
	return out, nil
}

// unavailable is the 503 of a credentials change or listing whose store
// failed.
func unavailable(err error) error {
	return &apiError{status: http.StatusServiceUnavailable, msg: "the admin credentials cannot be read or written in the store: " + err.Error()}
}

// Add makes a credential, added by by: its token is returned here and
// kept nowhere. It is stored first, so that every replica sees it.
func (c *CredentialSet) Add(ctx context.Context, name string, role Role, by string) (CredentialView, error) {
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
	s := acme.AdminCredential{Name: name, Role: string(role), SHA256: hex.EncodeToString(d[:]),
		CreatedAt: c.now().UTC().Truncate(time.Second), CreatedBy: by}
	switch err := c.store.CreateAdminCredential(ctx, &s); {
	case errors.Is(err, acme.ErrConflict):
		return CredentialView{}, c.conflict(ctx, name)
	case err != nil:
		return CredentialView{}, unavailable(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes++
	c.byName[name] = s
	c.byDigest[d] = name
	return CredentialView{Name: name, Role: role, CreatedAt: s.CreatedAt, CreatedBy: by, Token: token}, nil
}

// conflict is the 409 of a name the store holds already, naming the
// credential it conflicts with: names are compared without regard to
// case.
func (c *CredentialSet) conflict(ctx context.Context, name string) error {
	msg := fmt.Sprintf("a credential named %q exists; revoke it first", name)
	if rows, err := c.store.ListAdminCredentials(ctx); err == nil {
		for _, r := range rows {
			if r.Name != name && strings.EqualFold(r.Name, name) {
				msg = fmt.Sprintf("the credential %q exists, and names are compared without regard to case: choose another name, or revoke %q first", r.Name, r.Name)
			}
		}
	}
	return &apiError{status: http.StatusConflict, msg: msg}
}

// Revoke removes the credential name from the store; its token stops
// working and its dashboard sessions end here at once, and on every other
// replica within CredentialsMaxAge.
func (c *CredentialSet) Revoke(ctx context.Context, name string) error {
	if name == RootName {
		return &apiError{status: http.StatusBadRequest, msg: fmt.Sprintf("%q is the token file's credential: replace the token file to rotate it", RootName)}
	}
	switch err := c.store.DeleteAdminCredential(ctx, name); {
	case errors.Is(err, acme.ErrNotFound):
		return &apiError{status: http.StatusNotFound, msg: fmt.Sprintf("credential %q does not exist", name)}
	case err != nil:
		return unavailable(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes++
	if s, ok := c.byName[name]; ok {
		delete(c.byDigest, digestOf(s))
		delete(c.byName, name)
	}
	return nil
}
