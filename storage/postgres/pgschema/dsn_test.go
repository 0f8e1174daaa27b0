// SPDX-License-Identifier: Apache-2.0

package pgschema

import "testing"

func TestWithParams(t *testing.T) {
	got := WithParams("postgres://u@127.0.0.1:5432/db?sslmode=disable", map[string]string{"search_path": "s1"})
	if want := "postgres://u@127.0.0.1:5432/db?search_path=s1&sslmode=disable"; got != want {
		t.Fatalf("URL DSN: %s, want %s", got, want)
	}
	got = WithParams("host=127.0.0.1 dbname=db", map[string]string{"search_path": "s1"})
	if want := "host=127.0.0.1 dbname=db search_path=s1"; got != want {
		t.Fatalf("keyword DSN: %s, want %s", got, want)
	}
}
