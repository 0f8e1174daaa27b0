package sqlrow

import "github.com/weir-pki/weir/acme"

// OrderCols are the columns of orders that ScanOrder reads, in order.
const OrderCols = `id, account_id, status, identifiers, authz_ids, not_before, not_after,
	expires, error, cert_serial, created_at, replaces, profile, csr`

// ScanOrder reads one row of OrderCols.
func ScanOrder(row Scanner) (*acme.Order, error) {
	var (
		o                acme.Order
		accountID        int64
		idents, authzIDs string
		problem          *string
	)
	if err := row.Scan(&o.ID, &accountID, &o.Status, &idents, &authzIDs, nanos(&o.NotBefore), nanos(&o.NotAfter),
		nanos(&o.Expires), &problem, &o.CertSerial, nanos(&o.CreatedAt), &o.Replaces, &o.Profile, &o.CSR); err != nil {
		return nil, err
	}
	o.AccountID = FormatAccountID(accountID)
	if err := DecodeOrderJSON(&o, idents, authzIDs, problem); err != nil {
		return nil, err
	}
	return &o, nil
}

// DecodeOrderJSON sets the fields of o stored as JSON, from their
// columns: empty lists as nil, a NULL error as none.
func DecodeOrderJSON(o *acme.Order, idents, authzIDs string, problem *string) error {
	what := "order " + o.ID
	if err := FromJSON(what+" identifiers", idents, &o.Identifiers); err != nil {
		return err
	}
	if len(o.Identifiers) == 0 {
		o.Identifiers = nil
	}
	var err error
	if o.AuthzIDs, err = StringsFromJSON(what+" authorization ids", authzIDs); err != nil {
		return err
	}
	o.Error, err = FromNullableJSON[acme.Problem](what+" error", problem)
	return err
}
