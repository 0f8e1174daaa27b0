// SPDX-License-Identifier: Apache-2.0

package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// The audit trail's reader of server's tests (the audit trail's
// end-to-end test is test/system's audit_records_test.go).

// auditLine is the part of an audit event the tests read.
type auditLine struct {
	Type    string `json:"type"`
	Replica string `json:"replica"`
	Actor   struct {
		Kind, ID, Address string
	} `json:"actor"`
	Data map[string]any `json:"data"`
}

func readAudit(t *testing.T, path string) []auditLine {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []auditLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l auditLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, l)
	}
	return out
}
