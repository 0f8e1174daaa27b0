// SPDX-License-Identifier: Apache-2.0

package sqlrow

import (
	"strings"

	"github.com/weir-pki/weir/acme"
)

// IssuerCountDialect is what IssuerCountSQL needs of a driver's SQL.
type IssuerCountDialect struct {
	// SerialPart is the expression of acme.CertIDSerialPart of the serial
	// in column col: the serial in weir's form (ca.SerialHex) as it ends
	// its ARI identifier; NULL for a serial not in that form.
	SerialPart func(col string) string
	// ReplacedSerial is the expression of acme.CertIDSerial of the ARI
	// identifier in column col (an order's replaces, in CertID's form);
	// NULL for text that is not one.
	ReplacedSerial func(col string) string
	// ShardIn is the condition that c.crl_shard is a k of the CTE shards,
	// which the driver's planner makes one seek of the index per shard.
	ShardIn string
}

// IssuerCountSQL is acme.IssuerCounter.IssuerCounts of one issuer in d:
// parameters 1 the issuer, 2 now (Unix nanoseconds), 3 the prefix of its
// certificates' ARI identifiers (acme.CertIDPrefix), 4 the start of the
// recent interval. One statement, so one snapshot.
//
// The live certificates are read from the index certificates_crl_shard
// alone (issuer, crl_shard, not_after, with revoked_at, renewal_end and
// serial), one range per CRL shard the issuer's certificates name (found
// as CRLShardsInUseSQL finds them): the unexpired entries of each shard,
// never the expired ones before them. They are read twice: once for the
// counts of all of them, and once for those a valid order replaced (and
// of those the ones whose window ended, which Overdue leaves out), an
// EXISTS in WHERE that SQLite answers by one probe of the unique index
// orders_replaces_valid per certificate and PostgreSQL by a semi-join,
// hashed or probing as it finds cheaper. The recent counts read the
// certificates issued since parameter 4 (certificates_issued) and, for
// RenewedOff, the order of each and the certificate it replaced, by the
// serial of an identifier with the issuer's prefix.
func IssuerCountSQL(d IssuerCountDialect) string {
	live := `c.issuer = $1 AND ` + d.ShardIn + ` AND c.not_after > $2 AND c.revoked_at IS NULL`
	return strings.NewReplacer("SERIAL_PART", d.SerialPart("c.serial"), "REPLACED_SERIAL", d.ReplacedSerial("o.replaces"),
		"LIVE", live).Replace(`
	WITH RECURSIVE shards(k) AS (
		SELECT (SELECT crl_shard FROM certificates WHERE issuer = $1 ORDER BY crl_shard LIMIT 1)
		UNION ALL
		SELECT (SELECT crl_shard FROM certificates WHERE issuer = $1 AND crl_shard > k ORDER BY crl_shard LIMIT 1)
		FROM shards WHERE k IS NOT NULL)
	SELECT l.n, l.first_expiry, l.last_expiry, r.n, l.ended - r.ended,
		(SELECT count(CASE WHEN n.issuer = $1 THEN 1 END) FROM certificates n WHERE n.issued_at >= $4),
		(SELECT count(CASE WHEN old.issuer = $1 AND old.revoked_at IS NULL AND old.not_after > $2 THEN 1 END)
			FROM certificates n
			JOIN orders o ON o.id = n.order_id
			JOIN certificates old ON old.serial = REPLACED_SERIAL
			WHERE n.issued_at >= $4 AND n.issuer <> $1 AND o.replaces <> '' AND substr(o.replaces, 1, length($3)) = $3)
	FROM (SELECT count(*) AS n, COALESCE(min(c.not_after), 0) AS first_expiry, COALESCE(max(c.not_after), 0) AS last_expiry,
			count(CASE WHEN c.renewal_end > 0 AND c.renewal_end <= $2 THEN 1 END) AS ended
		FROM certificates c WHERE LIVE) l,
		(SELECT count(*) AS n, count(CASE WHEN c.renewal_end > 0 AND c.renewal_end <= $2 THEN 1 END) AS ended
		FROM certificates c WHERE LIVE
			AND EXISTS (SELECT 1 FROM orders o WHERE o.replaces = $3 || SERIAL_PART AND o.replaces <> '' AND o.status = 'valid')) r`)
}

// IssuerCountArgs are the arguments of IssuerCountSQL for issuer is.
func IssuerCountArgs(q acme.IssuerCountQuery, is acme.IssuerKey) []any {
	return []any{is.ID, ToNanos(q.Now), acme.CertIDPrefix(is.KeyID), ToNanos(q.Since)}
}

// ScanIssuerCount reads the row of IssuerCountSQL of issuer id.
func ScanIssuerCount(row Scanner, id string) (acme.IssuerCount, error) {
	c := acme.IssuerCount{Issuer: id}
	var first, last int64
	if err := row.Scan(&c.Live, &first, &last, &c.Replaced, &c.Overdue, &c.Issued, &c.RenewedOff); err != nil {
		return c, err
	}
	c.FirstExpiry, c.LastExpiry = FromNanos(first), FromNanos(last)
	return c, nil
}

// CheckIssuerCountQuery checks the times of q.
func CheckIssuerCountQuery(d Driver, q acme.IssuerCountQuery) error {
	if q.Now.IsZero() {
		return d.Errorf("issuer counts: no time given")
	}
	return d.CheckTimes("issuer counts", q.Now, q.Since)
}
