package sqlrow

import (
	"fmt"
	"time"

	"github.com/weir-pki/weir/acme"
)

// CertCols are the columns of certificates that ScanCert reads, in order.
const CertCols = `serial, account_id, order_id, der, chain_pem, names, not_before, not_after,
	issued_at, revoked_at, reason, profile, renewal_start, renewal_end, renew_now`

// ScanCert reads one row of CertCols.
func ScanCert(row Scanner) (*acme.Certificate, error) { return ScanCertAnd(row) }

// ScanCertAnd reads one row of CertCols followed by columns of the
// driver's own, into extra (SQLite's issuer chain).
func ScanCertAnd(row Scanner, extra ...any) (*acme.Certificate, error) {
	var (
		c         acme.Certificate
		accountID int64
		names     string
	)
	dest := append([]any{&c.Serial, &accountID, &c.OrderID, &c.DER, &c.ChainPEM, &names,
		nanos(&c.NotBefore), nanos(&c.NotAfter), nanos(&c.IssuedAt), nanos(&c.RevokedAt), &c.RevocationReason, &c.Profile,
		nanos(&c.RenewalStart), nanos(&c.RenewalEnd), &c.RenewNow}, extra...)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	c.AccountID = FormatAccountID(accountID)
	var err error
	if c.Names, err = StringsFromJSON(fmt.Sprintf("certificate %q names", c.Serial), names); err != nil {
		return nil, err
	}
	return &c, nil
}

// RenewalWindowCols are the columns of certificates that
// ScanRenewalWindow reads, in order.
const RenewalWindowCols = "serial, account_id, renewal_start, renewal_end"

// ScanRenewalWindow reads one row of RenewalWindowCols.
func ScanRenewalWindow(row Scanner) (acme.RenewalWindow, error) {
	var (
		w          acme.RenewalWindow
		acct       int64
		start, end int64
	)
	err := row.Scan(&w.Serial, &acct, &start, &end)
	w.AccountID = FormatAccountID(acct)
	w.Start, w.End = time.Unix(0, start).UTC(), time.Unix(0, end).UTC()
	return w, err
}
