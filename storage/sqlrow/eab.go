package sqlrow

import "github.com/weir-pki/weir/acme"

// EABCols are the columns of eab_keys that ScanEABKey reads, in order.
const EABCols = "id, label, hmac_key, created_at, bound_account, bound_at, revoked_at"

// ScanEABKey reads one row of EABCols.
func ScanEABKey(row Scanner) (*acme.EABKey, error) {
	var (
		k     acme.EABKey
		bound *int64
	)
	if err := row.Scan(&k.ID, &k.Label, &k.HMACKey, nanos(&k.CreatedAt), &bound, nanos(&k.BoundAt), nanos(&k.RevokedAt)); err != nil {
		return nil, err
	}
	if bound != nil {
		k.BoundAccount = FormatAccountID(*bound)
	}
	return &k, nil
}
