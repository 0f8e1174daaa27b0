// SPDX-License-Identifier: Apache-2.0

package system

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"testing"
	"time"
)

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

// nameValidation is one name's validation as the audit record and the
// admin API write it.
type nameValidation struct {
	Name        string    `json:"name"`
	Method      string    `json:"method"`
	Authz       string    `json:"authorization"`
	ValidatedAt time.Time `json:"validated_at"`
	Reused      bool      `json:"reused"`
}

// auditValidations decodes the validations of an issuance's audit record.
func auditValidations(t *testing.T, rec *auditLine) []nameValidation {
	t.Helper()
	b, err := json.Marshal(rec.Data["validations"])
	if err != nil {
		t.Fatal(err)
	}
	var v []nameValidation
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("the audit record's validations %s: %v", b, err)
	}
	return v
}
