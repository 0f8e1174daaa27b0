// SPDX-License-Identifier: Apache-2.0

package migrations

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestListSortsByVersion(t *testing.T) {
	fsys := fstest.MapFS{
		"m/0010_ten.sql":      {Data: []byte("CREATE TABLE ten (x);")},
		"m/0002_two.sql":      {Data: []byte("CREATE TABLE two (x);")},
		"m/0001_one_a.sql":    {Data: []byte("CREATE TABLE one (x);")},
		"m/sub/0003_sub.sql":  {Data: []byte("ignored: in a subdirectory")},
		"other/0004_four.sql": {Data: []byte("ignored: another directory")},
	}
	ms, err := List(fsys, "m")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	want := []Migration{
		{1, "one_a", "CREATE TABLE one (x);"},
		{2, "two", "CREATE TABLE two (x);"},
		{10, "ten", "CREATE TABLE ten (x);"},
	}
	if len(ms) != len(want) {
		t.Fatalf("List: got %d migrations, want %d: %+v", len(ms), len(want), ms)
	}
	for i := range ms {
		if ms[i] != want[i] {
			t.Errorf("List[%d]: got %+v, want %+v", i, ms[i], want[i])
		}
	}
}

func TestListRejects(t *testing.T) {
	for name, tc := range map[string]struct {
		files   []string
		wantErr string
	}{
		"no .sql suffix":     {[]string{"0001_init.txt"}, "does not end in .sql"},
		"no underscore":      {[]string{"0001init.sql"}, "not of the form"},
		"no name":            {[]string{"0001_.sql"}, "not of the form"},
		"no version":         {[]string{"_init.sql"}, "not of the form"},
		"letters in version": {[]string{"00a1_init.sql"}, "not decimal"},
		"zero version":       {[]string{"0000_init.sql"}, "not a positive integer"},
		"signed version":     {[]string{"+001_init.sql"}, "not decimal"},
		"upper-case name":    {[]string{"0001_Init.sql"}, "may hold only"},
		"dash in name":       {[]string{"0001_in-it.sql"}, "may hold only"},
		"duplicate version":  {[]string{"0001_a.sql", "001_b.sql"}, "already used"},
	} {
		fsys := fstest.MapFS{}
		for _, f := range tc.files {
			fsys["m/"+f] = &fstest.MapFile{Data: []byte("SELECT 1;")}
		}
		_, err := List(fsys, "m")
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: List(%v): got error %v, want one containing %q", name, tc.files, err, tc.wantErr)
		}
	}
}

func TestListRejectsEmptyFile(t *testing.T) {
	fsys := fstest.MapFS{"m/0001_init.sql": {Data: []byte(" \n-- \n")}}
	// A file of only a comment is not empty to List; one of only space is.
	if _, err := List(fsys, "m"); err != nil {
		t.Errorf("List(comment only): got %v, want nil", err)
	}
	fsys = fstest.MapFS{"m/0001_init.sql": {Data: []byte(" \n\t")}}
	if _, err := List(fsys, "m"); err == nil {
		t.Error("List(blank file): got nil error, want one")
	}
}

func TestListMissingDir(t *testing.T) {
	if _, err := List(fstest.MapFS{}, "nope"); err == nil {
		t.Error("List(missing directory): got nil error, want one")
	}
}

func TestEmbeddedSQLite(t *testing.T) {
	ms, err := List(SQLite(), SQLiteDir)
	if err != nil {
		t.Fatalf("List(SQLite()): %v", err)
	}
	if len(ms) == 0 {
		t.Fatal("List(SQLite()): no migrations embedded")
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
