// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-pki/weir/storage/transfer"
)

// TestImportRefusesServedBeyondSize: a summary whose served size is not
// within the log is refused with both sizes named.
func TestImportRefusesServedBeyondSize(t *testing.T) {
	for _, sum := range []transfer.Summary{{LogSize: 2, LogServedSize: 3}, {LogSize: 2, LogServedSize: -1}} {
		im, err := OpenImport(t.Context(), filepath.Join(t.TempDir(), "weir.db"), fixedNow)
		if err != nil {
			t.Fatalf("OpenImport: %v", err)
		}
		_, err = im.Finish(t.Context(), sum)
		if err == nil || !strings.Contains(err.Error(), "served size") || !strings.Contains(err.Error(), "its size 2") {
			t.Errorf("Finish(%+v) = %v; want the served size refused", sum, err)
		}
		if err := im.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
