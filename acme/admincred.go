// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"time"
)

// AdminCredential is a named credential of the administrators' listener
// as the store keeps it: never its token, only the token's SHA-256. Its
// role ("read" or "operate") means something to web/admin alone; the
// store keeps it as given. The token file's credential is not one: it
// lives in its file, so that it works while the store does not.
type AdminCredential struct {
	Name string
	Role string
	// SHA256 is the token's SHA-256, 64 lowercase hexadecimal digits.
	SHA256    string
	CreatedAt time.Time
	// CreatedBy is the name of the credential that added it.
	CreatedBy string
}

// AdminCredentialStore keeps the named admin credentials, so that every
// replica on a shared store sees an addition or a revocation. Every Store
// keeps them; storage/storagetest checks the contract.
type AdminCredentialStore interface {
	// CreateAdminCredential stores a new credential. ErrConflict if its
	// name, compared without regard to case, or its digest exists.
	CreateAdminCredential(ctx context.Context, c *AdminCredential) error
	// ListAdminCredentials returns every credential, by name.
	ListAdminCredentials(ctx context.Context) ([]*AdminCredential, error)
	// DeleteAdminCredential removes (revokes) a credential. ErrNotFound if
	// there is none.
	DeleteAdminCredential(ctx context.Context, name string) error
}
