// SPDX-License-Identifier: Apache-2.0

package migrations

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestPlan: the migrations above the newest applied one are pending, in
// order; a newer schema, a renamed version and a gap are refused.
func TestPlan(t *testing.T) {
	ms := []Migration{{Version: 1, Name: "init"}, {Version: 2, Name: "leases"}, {Version: 4, Name: "chains"}}
	for _, tc := range []struct {
		name    string
		applied map[int]string
		want    []int  // versions pending
		wantErr string // substring; "" for none
	}{
		{"empty database", nil, []int{1, 2, 4}, ""},
		{"part applied", map[int]string{1: "init"}, []int{2, 4}, ""},
		{"up to date", map[int]string{1: "init", 2: "leases", 4: "chains"}, nil, ""},
		{"newer schema", map[int]string{1: "init", 2: "leases", 4: "chains", 5: "future"}, nil, "schema version 5 is newer than 4"},
		{"renamed", map[int]string{1: "init", 2: "lease"}, nil, `schema version 2 was applied as "lease" but this weir calls it "leases"`},
		{"gap", map[int]string{1: "init", 4: "chains"}, nil, "schema version 2 (leases) is missing but the later version 4 is applied"},
	} {
		got, err := Plan(ms, tc.applied)
		var versions []int
		for _, m := range got {
			versions = append(versions, m.Version)
		}
		switch {
		case tc.wantErr == "" && (err != nil || !reflect.DeepEqual(versions, tc.want)):
			t.Errorf("%s: Plan = %v, %v; want %v", tc.name, versions, err, tc.want)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || got != nil):
			t.Errorf("%s: Plan = %v, %v; want an error containing %q", tc.name, versions, err, tc.wantErr)
		}
	}
	var tooNew *TooNewError
	if _, err := Plan(ms, map[int]string{9: "x"}); !errors.As(err, &tooNew) || tooNew.Database != 9 || tooNew.Known != 4 {
		t.Errorf("Plan of a newer schema = %v; want a *TooNewError{9, 4}", err)
	}
	if _, err := Plan(nil, nil); err == nil {
		t.Error("Plan of no migrations = nil error")
	}
}
