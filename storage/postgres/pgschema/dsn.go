// SPDX-License-Identifier: Apache-2.0

// Package pgschema gives the tools and tests that run weir on a shared
// PostgreSQL server a schema of their own (Create): weir replicas given
// its DSN keep their tables in it and no one else's, and Drop removes it
// with them. It holds pgx for them, so that they need not import it.
package pgschema

import "net/url"

// WithParams returns dsn, a URL (postgres:// or postgresql://) or a
// keyword/value connection string, with the connection parameters params
// set: replacing the URL's query parameters of the same names, or
// appended as keyword=value pairs (libpq takes the last of a repeated
// keyword). Values are not quoted, so they must not hold spaces.
func WithParams(dsn string, params map[string]string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		q := u.Query()
		for k, v := range params {
			q.Set(k, v)
		}
		u.RawQuery = q.Encode()
		return u.String()
	}
	for k, v := range params {
		dsn += " " + k + "=" + v
	}
	return dsn
}
