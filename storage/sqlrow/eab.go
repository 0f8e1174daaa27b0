// SPDX-License-Identifier: Apache-2.0

package sqlrow

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/weir-pki/weir/acme"
)

// EABCols are the columns of eab_keys that ScanEABKey reads, in order.
const EABCols = "id, label, hmac_key, created_at, bound_account, bound_at, revoked_at, tenant"

// ScanEABKey reads one row of EABCols.
func ScanEABKey(row Scanner) (*acme.EABKey, error) {
	var (
		k     acme.EABKey
		bound *int64
	)
	if err := row.Scan(&k.ID, &k.Label, &k.HMACKey, nanos(&k.CreatedAt), &bound, nanos(&k.BoundAt), nanos(&k.RevokedAt), &k.Tenant); err != nil {
		return nil, err
	}
	if bound != nil {
		k.BoundAccount = FormatAccountID(*bound)
	}
	return &k, nil
}

// CheckNewEABKey checks a new EAB key and returns the name of its
// creation for errors.
func CheckNewEABKey(d Driver, k *acme.EABKey) (what string, err error) {
	what = fmt.Sprintf("create EAB key %q", k.ID)
	switch {
	case k.ID == "":
		return what, d.Errorf("create EAB key: empty ID")
	case len(k.HMACKey) == 0:
		return what, d.Errorf("%s: empty HMAC key", what)
	}
	return what, d.CheckTimes(what, k.CreatedAt)
}

// BindMissed explains a binding of an EAB key (what) that changed no
// row, from existsErr, the error of asking whether the key exists (nil
// when it does): the key cannot be used (acme.ErrEABUnusable), and a
// missing key wraps acme.ErrNotFound too.
func (d Driver) BindMissed(what string, existsErr error) error {
	switch {
	case errors.Is(existsErr, sql.ErrNoRows):
		return d.NoSuchEABKey(what)
	case existsErr != nil:
		return d.Wrap(what, existsErr)
	}
	return d.Errorf("%s: bound or revoked: %w", what, acme.ErrEABUnusable)
}

// NoSuchEABKey is the error of a binding (what) of a key that does not
// exist: it wraps acme.ErrEABUnusable and acme.ErrNotFound.
func (d Driver) NoSuchEABKey(what string) error {
	return d.Errorf("%s: no such key: %w (%w)", what, acme.ErrEABUnusable, acme.ErrNotFound)
}
