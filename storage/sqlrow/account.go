// SPDX-License-Identifier: Apache-2.0

package sqlrow

import (
	"fmt"

	"github.com/weir-pki/weir/acme"
)

// AccountCols are the columns of accounts that ScanAccount reads, in
// order.
const AccountCols = "id, key_thumbprint, jwk, contact, status, created_at, created_ip, eab_key_id"

// ScanAccount reads one row of AccountCols.
func ScanAccount(row Scanner) (*acme.Account, error) {
	var (
		id      int64
		a       acme.Account
		contact string
	)
	if err := row.Scan(&id, &a.KeyThumbprint, &a.Key, &contact, &a.Status, nanos(&a.CreatedAt), &a.CreatedIP, &a.EABKeyID); err != nil {
		return nil, err
	}
	a.ID = FormatAccountID(id)
	var err error
	if a.Contact, err = StringsFromJSON(fmt.Sprintf("account %s contact", a.ID), contact); err != nil {
		return nil, err
	}
	return &a, nil
}

// AccountInsertCols are the columns of a new account's row, whose values
// AccountValues returns in order; the store assigns the ID.
const AccountInsertCols = "key_thumbprint, jwk, contact, status, created_at, created_ip, eab_key_id"

// AccountValues checks a new account and returns the values of
// AccountInsertCols for its row.
func AccountValues(d Driver, a *acme.Account) ([]any, error) {
	if a.KeyThumbprint == "" {
		return nil, d.Errorf("create account: empty key thumbprint")
	}
	if err := d.CheckTimes("create account", a.CreatedAt); err != nil {
		return nil, err
	}
	contact, err := StringsJSON("create account: contact", a.Contact)
	if err != nil {
		return nil, err
	}
	return []any{string(a.KeyThumbprint), a.Key, contact, string(a.Status), ToNanos(a.CreatedAt), a.CreatedIP, a.EABKeyID}, nil
}

// AccountUpdate is what UpdateAccount writes to an account's row.
type AccountUpdate struct {
	What    string // names the write in errors
	ID      int64
	Contact string // JSON
	Status  string
}

// NewAccountUpdate checks a and encodes what UpdateAccount writes of it.
func NewAccountUpdate(d Driver, a *acme.Account) (*AccountUpdate, error) {
	u := &AccountUpdate{What: fmt.Sprintf("update account %q", a.ID), Status: string(a.Status)}
	var err error
	if u.ID, err = d.AccountID(u.What, a.ID); err != nil {
		return nil, err
	}
	if u.Contact, err = StringsJSON(u.What+": contact", a.Contact); err != nil {
		return nil, err
	}
	return u, nil
}

// KeyChange is what ChangeAccountKey writes to an account's row.
type KeyChange struct {
	What string // names the write in errors
	ID   int64
}

// NewKeyChange checks a change of account id's key to newThumbprint.
func NewKeyChange(d Driver, id acme.AccountID, newThumbprint acme.Thumbprint) (*KeyChange, error) {
	k := &KeyChange{What: fmt.Sprintf("change key of account %q", id)}
	var err error
	if k.ID, err = d.AccountID(k.What, id); err != nil {
		return nil, err
	}
	if newThumbprint == "" {
		return nil, d.Errorf("%s: empty key thumbprint", k.What)
	}
	return k, nil
}

// InUse is the error of a key change whose new key, thumbprint, is
// another account's: it wraps acme.ErrConflict.
func (k *KeyChange) InUse(d Driver, thumbprint acme.Thumbprint) error {
	return d.Errorf("%s: key %s is in use: %w", k.What, thumbprint, acme.ErrConflict)
}
