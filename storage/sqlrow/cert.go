// SPDX-License-Identifier: Apache-2.0

package sqlrow

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/weir-pki/weir/acme"
)

// CertCols are the columns of certificates that ScanCert reads, in order.
const CertCols = `serial, account_id, order_id, der, chain_pem, names, not_before, not_after,
	issued_at, revoked_at, reason, profile, renewal_start, renewal_end, renew_now, issuer, crl_shard, validations`

// ScanCert reads one row of CertCols.
func ScanCert(row Scanner) (*acme.Certificate, error) { return ScanCertAnd(row) }

// ScanCertAnd reads one row of CertCols followed by columns of the
// driver's own, into extra (SQLite's issuer chain).
func ScanCertAnd(row Scanner, extra ...any) (*acme.Certificate, error) {
	var (
		c           acme.Certificate
		accountID   int64
		names       string
		validations *string
	)
	dest := append([]any{&c.Serial, &accountID, &c.OrderID, &c.DER, &c.ChainPEM, &names,
		nanos(&c.NotBefore), nanos(&c.NotAfter), nanos(&c.IssuedAt), nanos(&c.RevokedAt), &c.RevocationReason, &c.Profile,
		nanos(&c.RenewalStart), nanos(&c.RenewalEnd), &c.RenewNow, &c.Issuer, &c.CRLShard, &validations}, extra...)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	c.AccountID = FormatAccountID(accountID)
	var err error
	if c.Names, err = StringsFromJSON(fmt.Sprintf("certificate %q names", c.Serial), names); err != nil {
		return nil, err
	}
	if c.Validations, err = ValidationsFromJSON(c.Serial, validations); err != nil {
		return nil, err
	}
	return &c, nil
}

// RevocationCols are the columns of certificates that ScanRevocation
// reads, in order: what a CRL lists, and whose CRL lists it, all in the
// index certificates_revoked.
const RevocationCols = "serial, revoked_at, reason, issuer, crl_shard"

// NextCRLNumberSQL is crl.Numberer.NextCRLNumber in one statement,
// for both drivers: parameters 1 issuer, 2 shard, 3 floor.
const NextCRLNumberSQL = `INSERT INTO crl_numbers (issuer, shard, number) VALUES ($1, $2, $3)
	ON CONFLICT (issuer, shard) DO UPDATE SET number = CASE WHEN crl_numbers.number + 1 > excluded.number
		THEN crl_numbers.number + 1 ELSE excluded.number END
	RETURNING number`

// RevokedCountsSQL counts the revoked certificates of each CRL scope,
// from the partial index certificates_revoked, whose key starts with
// the scope.
const RevokedCountsSQL = `SELECT issuer, crl_shard, count(*) FROM certificates
	WHERE revoked_at IS NOT NULL GROUP BY issuer, crl_shard`

// ScopeCount is one row of RevokedCountsSQL.
type ScopeCount struct {
	Scope acme.CRLScope
	N     int64
}

// ScanScopeCount reads one row of RevokedCountsSQL.
func ScanScopeCount(row Scanner) (ScopeCount, error) {
	var c ScopeCount
	err := row.Scan(&c.Scope.Issuer, &c.Scope.Shard, &c.N)
	return c, err
}

// ScopeCounts is the map of crl.ScopedRevocations.RevokedCounts made of
// the rows of RevokedCountsSQL.
func ScopeCounts(rows []ScopeCount) map[acme.CRLScope]int64 {
	counts := make(map[acme.CRLScope]int64, len(rows))
	for _, c := range rows {
		counts[c.Scope] = c.N
	}
	return counts
}

// ListRevokedScopeSQL is the revocations of one CRL scope not expired at
// a time: parameters 1 issuer, 2 shard, 3 the time in nanoseconds; one
// range of certificates_revoked.
const ListRevokedScopeSQL = `SELECT ` + RevocationCols + ` FROM certificates
	WHERE revoked_at IS NOT NULL AND issuer = $1 AND crl_shard = $2 AND not_after >= $3`

// CRLShardsInUseSQL is acme.CRLShardLister.CRLShardsInUse for both
// drivers: parameters 1 issuer, 2 the time in nanoseconds. It walks the
// issuer's distinct shards in the index certificates_crl_shard (issuer,
// crl_shard, not_after), one seek each (the next shard is the first entry
// past the last one's), and keeps those whose last certificate expires at
// the time or later (one more seek, the end of the shard's range): two
// seeks per shard the issuer ever used, however many certificates there
// are. Each seek is a scalar subquery with ORDER BY … LIMIT 1, which
// neither planner turns into a read of a whole range (PostgreSQL makes a
// semi-join of an EXISTS, min or max may be an aggregate of a range).
const CRLShardsInUseSQL = `WITH RECURSIVE shards(k) AS (
		SELECT (SELECT crl_shard FROM certificates WHERE issuer = $1 ORDER BY crl_shard LIMIT 1)
		UNION ALL
		SELECT (SELECT crl_shard FROM certificates WHERE issuer = $1 AND crl_shard > k ORDER BY crl_shard LIMIT 1)
		FROM shards WHERE k IS NOT NULL)
	SELECT k FROM shards WHERE k IS NOT NULL
		AND (SELECT not_after FROM certificates WHERE issuer = $1 AND crl_shard = k ORDER BY not_after DESC LIMIT 1) >= $2
	ORDER BY k`

// ScanShard reads one row of CRLShardsInUseSQL.
func ScanShard(row Scanner) (int, error) {
	var k int
	err := row.Scan(&k)
	return k, err
}

// ScanRevocation reads one row of RevocationCols.
func ScanRevocation(row Scanner) (acme.Revocation, error) {
	var (
		r  acme.Revocation
		at int64
	)
	err := row.Scan(&r.Serial, &at, &r.Reason, &r.Issuer, &r.Shard)
	r.RevokedAt = time.Unix(0, at).UTC()
	return r, err
}

// PageLimit is the LIMIT of a page of at most limit rows, all of them
// when limit ≤ 0.
func PageLimit(limit int) int64 {
	if limit <= 0 {
		return math.MaxInt64
	}
	return int64(limit)
}

// CertInsertCols are the columns of a new certificate's row, whose values
// CertRow.Values returns in order; a new certificate is not revoked
// (revoked_at NULL, reason 0), and the rest keep their defaults.
const CertInsertCols = `serial, account_id, order_id, der, chain_pem, names, name_set,
	not_before, not_after, issued_at, profile, renewal_start, renewal_end, issuer, crl_shard, validations`

// CertRow is a certificate that finalizes its order, checked and encoded
// for its row.
type CertRow struct {
	What      string // names the write in errors
	Cert      *acme.Certificate
	AccountID int64
	Names     string // JSON
	Issuer    string // cert.Issuer, or acme.DefaultIssuer for ""
	// Validations is cert.Validations as stored (ValidationsJSON).
	Validations *string
}

// NewCertRow checks cert, which finalizes order cert.OrderID, and
// encodes its row.
func NewCertRow(d Driver, cert *acme.Certificate) (*CertRow, error) {
	r := &CertRow{What: fmt.Sprintf("finalize order %q with certificate %q", cert.OrderID, cert.Serial), Cert: cert}
	if cert.Serial == "" {
		return nil, d.Errorf("%s: empty serial", r.What)
	}
	var err error
	if r.AccountID, err = d.AccountOf(r.What, cert.AccountID); err != nil {
		return nil, err
	}
	if !cert.RevokedAt.IsZero() {
		return nil, d.Errorf("%s: certificate is already revoked", r.What)
	}
	if err := d.CheckTimes(r.What, cert.NotBefore, cert.NotAfter, cert.IssuedAt, cert.RenewalStart, cert.RenewalEnd); err != nil {
		return nil, err
	}
	if r.Names, err = StringsJSON(r.What+": names", cert.Names); err != nil {
		return nil, err
	}
	r.Issuer = acme.IssuerOrDefault(cert.Issuer)
	if r.Validations, err = ValidationsJSON(r.What, cert.Validations); err != nil {
		return nil, err
	}
	return r, nil
}

// Values are the values of CertInsertCols, with chain the stored
// chain_pem (SQLite stores only the leaf's part of a chain whose issuer
// chain it keeps apart), followed by extra, the values of columns of the
// driver's own.
func (r *CertRow) Values(chain []byte, extra ...any) []any {
	c := r.Cert
	v := append(make([]any, 0, 16+len(extra)), c.Serial, r.AccountID, string(c.OrderID), c.DER, chain, r.Names, strings.Join(c.Names, ","),
		ToNanos(c.NotBefore), ToNanos(c.NotAfter), ToNanos(c.IssuedAt), c.Profile, ToNanos(c.RenewalStart), ToNanos(c.RenewalEnd), r.Issuer, c.CRLShard,
		r.Validations)
	return append(v, extra...)
}

// UnexpiredSQL counts the certificates of issuer $1, revoked or not,
// whose not_after is after $2 (Unix nanoseconds), and gives the latest
// not_after among them (0 for none): the certificates whose revocation
// that issuer must still be able to put on a CRL it signs (RFC 5280
// §3.3, §6.3.3), for both drivers.
const UnexpiredSQL = `SELECT count(*), COALESCE(max(not_after), 0) FROM certificates WHERE issuer = $1 AND not_after > $2`

// Unexpired is the row of UnexpiredSQL: how many, and the last to expire.
type Unexpired struct {
	N    int64
	Last time.Time
}

// UnexpiredArgs are the arguments of UnexpiredSQL ("" is the default
// issuer).
func UnexpiredArgs(issuer string, now time.Time) []any {
	return []any{acme.IssuerOrDefault(issuer), ToNanos(now)}
}

// ScanUnexpired reads the row of UnexpiredSQL.
func ScanUnexpired(row Scanner) (Unexpired, error) {
	var u Unexpired
	err := row.Scan(&u.N, nanos(&u.Last))
	return u, err
}

// ValidationsJSON encodes the validations of a certificate
// (acme.NameValidation) for its validations column: nil, a certificate
// whose validations are unknown, as NULL; each time in UTC.
func ValidationsJSON(what string, vs []acme.NameValidation) (*string, error) {
	if vs == nil {
		return nil, nil
	}
	utc := make([]acme.NameValidation, len(vs))
	for i, v := range vs {
		v.ValidatedAt = v.ValidatedAt.UTC()
		utc[i] = v
	}
	return NullableJSON(what+": validations", &utc)
}

// ValidationsFromJSON decodes the validations column of certificate
// serial: NULL, a certificate stored before they were recorded, as nil.
func ValidationsFromJSON(serial string, s *string) ([]acme.NameValidation, error) {
	vs, err := FromNullableJSON[[]acme.NameValidation](fmt.Sprintf("certificate %q validations", serial), s)
	if vs == nil || err != nil {
		return nil, err
	}
	if *vs == nil {
		return []acme.NameValidation{}, nil
	}
	return *vs, nil
}
