// SPDX-License-Identifier: Apache-2.0

package sqlrow

import "time"

// IssuanceQuery is the query of Issuance: rows of a bucket number (0 to
// n-1) and the certificates issued in it, the buckets being n steps from
// from. When from is a whole hour (Unix) and step whole hours, as on the
// overview's chart, it sums the kept counts per hour (cert_issued_hours,
// kept by the triggers of counts.go): at most n times step hours of rows.
// Otherwise it reads the certificates issued in the range.
func IssuanceQuery(from time.Time, step time.Duration, n int) (query string, args []any) {
	start, width := ToNanos(from), int64(step)
	const hour = int64(time.Hour)
	if start%hour == 0 && width%hour == 0 {
		h, w := start/hour, width/hour
		return `SELECT (hour - $1) / $2 AS b, CAST(SUM(n) AS BIGINT) FROM cert_issued_hours
			WHERE hour >= $1 AND hour < $3 GROUP BY 1`, []any{h, w, h + w*int64(n)}
	}
	return `SELECT (issued_at - $1) / $2 AS b, count(*) FROM certificates
		WHERE issued_at >= $1 AND issued_at < $3 GROUP BY 1`, []any{start, width, start + width*int64(n)}
}
