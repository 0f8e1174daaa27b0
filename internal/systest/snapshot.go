// SPDX-License-Identifier: Apache-2.0

package systest

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

// snapshotTables are every table of ACME state.
var snapshotTables = []string{"accounts", "orders", "authzs", "challenges", "certificates", "eab_keys"}

// Snapshot is the row count and a digest of the contents of each table of
// ACME state of a SQLite store.
type Snapshot struct {
	// Counts is the rows of each table.
	Counts  map[string]int
	digests map[string]string
}

// SnapshotDB reads every table of ACME state through db (a store's read
// pool: sqlite.Store.DB).
func SnapshotDB(t *testing.T, db *sql.DB) Snapshot {
	t.Helper()
	s := Snapshot{Counts: map[string]int{}, digests: map[string]string{}}
	for _, table := range snapshotTables {
		var n int
		if err := db.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
			t.Fatalf("count %s: %v", table, err)
		}
		s.Counts[table] = n
		rows, err := db.QueryContext(t.Context(), "SELECT * FROM "+table+" ORDER BY 1")
		if err != nil {
			t.Fatalf("read %s: %v", table, err)
		}
		cols, _ := rows.Columns()
		h := sha256.New()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatalf("scan %s: %v", table, err)
			}
			fmt.Fprintf(h, "%v\n", vals)
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("read %s: %v", table, err)
		}
		rows.Close()
		s.digests[table] = hex.EncodeToString(h.Sum(nil))
	}
	return s
}

// Diff describes how after differs from s, "" when it does not.
func (s Snapshot) Diff(after Snapshot) string {
	var out []string
	for _, table := range snapshotTables {
		switch {
		case s.Counts[table] != after.Counts[table]:
			out = append(out, fmt.Sprintf("%s: %d rows -> %d", table, s.Counts[table], after.Counts[table]))
		case s.digests[table] != after.digests[table]:
			out = append(out, fmt.Sprintf("%s: rows changed", table))
		}
	}
	return strings.Join(out, "; ")
}
