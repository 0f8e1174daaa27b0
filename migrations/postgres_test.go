// SPDX-License-Identifier: Apache-2.0

package migrations

import "testing"

func TestEmbeddedPostgres(t *testing.T) {
	ms, err := List(Postgres(), PostgresDir)
	if err != nil {
		t.Fatalf("List(Postgres()): %v", err)
	}
	if len(ms) == 0 {
		t.Fatal("List(Postgres()): no migrations embedded")
	}
	for i, m := range ms {
		if m.Version != i+1 {
			t.Errorf("embedded migration %d (%s): version %d, want %d (versions are consecutive from 1)", i, m.Name, m.Version, i+1)
		}
	}
	if ms[0].Name != "init" {
		t.Errorf("first embedded migration: name %q, want %q", ms[0].Name, "init")
	}
}
