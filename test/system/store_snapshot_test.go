// SPDX-License-Identifier: Apache-2.0

package system

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/weir-pki/weir/storage/sqlite"
)

// snapshotTables are every table of the ACME store.
var snapshotTables = []string{"accounts", "orders", "authzs", "challenges", "certificates", "eab_keys"}

// dbSnapshot is the row count and a digest of the contents of each table.
type dbSnapshot struct {
	counts  map[string]int
	digests map[string]string
}

// snapshot reads every table through the store's read pool.
func snapshotDB(t *testing.T, e *env) dbSnapshot {
	t.Helper()
	db := e.srv.Store().(*sqlite.Store).DB()
	s := dbSnapshot{counts: map[string]int{}, digests: map[string]string{}}
	for _, table := range snapshotTables {
		var n int
		if err := db.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
			t.Fatalf("count %s: %v", table, err)
		}
		s.counts[table] = n
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
