// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// legacyRows is a store that lists rows kept from before credential
// names were compared without regard to case.
type legacyRows struct {
	acme.AdminCredentialStore
	rows []*acme.AdminCredential
}

func (l legacyRows) ListAdminCredentials(context.Context) ([]*acme.AdminCredential, error) {
	return l.rows, nil
}

// TestCredentialLegacyCaseDuplicates: of stored names equal but for case,
// the oldest (ties by name, as the stores' migration chose) is used and
// the others are left out, each named with the one kept; so is a name
// equal to the token file's but for case.
func TestCredentialLegacyCaseDuplicates(t *testing.T) {
	row := func(name string, age int) *acme.AdminCredential {
		return &acme.AdminCredential{Name: name, Role: "operate", SHA256: fmt.Sprintf("%064x", sha256.Sum256([]byte(name))),
			CreatedAt: testNow.Add(time.Duration(age) * time.Second), CreatedBy: RootName}
	}
	st := legacyRows{rows: []*acme.AdminCredential{row("bob", 1), row("BOB", 2), row("Bob", 1), row("carol", 3), row("ADMIN", 0)}}
	creds := NewCredentialSet(st, func() time.Time { return testNow })
	err := creds.Refresh(t.Context())
	for _, want := range []string{
		`"bob": the name differs only in case from the older credential "Bob"; revoke one`,
		`"BOB": the name differs only in case from the older credential "Bob"`,
		`"ADMIN": the name "ADMIN" is the token file's credential "admin" (names are compared without regard to case)`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Refresh: %v, want it to say %q", err, want)
		}
	}
	for name, want := range map[string]bool{"Bob": true, "carol": true, "bob": false, "BOB": false, "ADMIN": false} {
		if p, ok := creds.lookup(sha256.Sum256([]byte(name))); ok != want || (ok && p.Name != name) {
			t.Errorf("the token of %q: %+v, %v; want found %v", name, p, ok, want)
		}
	}
}
