package sqlrow

import "github.com/weir-pki/weir/acme"

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
	if a.Contact, err = StringsFromJSON("account "+a.ID+" contact", contact); err != nil {
		return nil, err
	}
	return &a, nil
}
