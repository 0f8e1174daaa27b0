// SPDX-License-Identifier: Apache-2.0

package sqlrow

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/weir-pki/weir/acme"
)

// AdminCredentialCols are the columns of admin_credentials that
// ScanAdminCredential reads, in order.
const AdminCredentialCols = "name, role, sha256, created_at, created_by"

// AdminCredentialInsertCols are the columns a new credential is written
// with: AdminCredentialCols and name_lower, the name in lower case
// (NameLower), which a unique index keeps from being stored twice, so
// that no two credentials have names equal but for case.
const AdminCredentialInsertCols = AdminCredentialCols + ", name_lower"

// NameLower is the form of a credential's name that is unique in the
// store: names are compared without regard to case.
func NameLower(name string) string { return strings.ToLower(name) }

// ScanAdminCredential reads one row of AdminCredentialCols.
func ScanAdminCredential(row Scanner) (*acme.AdminCredential, error) {
	var c acme.AdminCredential
	if err := row.Scan(&c.Name, &c.Role, &c.SHA256, nanos(&c.CreatedAt), &c.CreatedBy); err != nil {
		return nil, err
	}
	return &c, nil
}

// CheckNewAdminCredential checks a credential for writing and returns the
// name of its creation for errors: a name, a role, a digest of 64
// lowercase hexadecimal digits and a storable creation time.
func CheckNewAdminCredential(d Driver, c *acme.AdminCredential) (what string, err error) {
	what = fmt.Sprintf("create admin credential %q", c.Name)
	switch b, herr := hex.DecodeString(c.SHA256); {
	case c.Name == "":
		return what, d.Errorf("create admin credential: empty name")
	case c.Role == "":
		return what, d.Errorf("%s: empty role", what)
	case c.CreatedAt.IsZero():
		return what, d.Errorf("%s: no creation time", what)
	case herr != nil || len(b) != 32 || hex.EncodeToString(b) != c.SHA256:
		return what, d.Errorf("%s: sha256 must be 64 lowercase hexadecimal digits", what)
	}
	return what, d.CheckTimes(what, c.CreatedAt)
}
