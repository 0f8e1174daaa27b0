// SPDX-License-Identifier: Apache-2.0

package sqlrow

import "github.com/weir-pki/weir/acme"

// ScanIssuedRecord scans account_id, order_id, names (JSON) and issued_at
// into an acme.IssuedRecord.
func ScanIssuedRecord(row Scanner) (acme.IssuedRecord, error) {
	var (
		acct, issued int64
		order, names string
	)
	if err := row.Scan(&acct, &order, &names, &issued); err != nil {
		return acme.IssuedRecord{}, err
	}
	ns, err := StringsFromJSON("certificate names", names)
	if err != nil {
		return acme.IssuedRecord{}, err
	}
	return acme.IssuedRecord{AccountID: FormatAccountID(acct), OrderID: acme.OrderID(order), Names: ns, IssuedAt: FromNanos(issued)}, nil
}

// ScanPendingRecord scans account_id, id and expires into an
// acme.PendingRecord.
func ScanPendingRecord(row Scanner) (acme.PendingRecord, error) {
	var (
		acct, expires int64
		id            string
	)
	if err := row.Scan(&acct, &id, &expires); err != nil {
		return acme.PendingRecord{}, err
	}
	return acme.PendingRecord{AccountID: FormatAccountID(acct), AuthzID: acme.AuthzID(id), Expires: FromNanos(expires)}, nil
}
