// SPDX-License-Identifier: Apache-2.0

package migrations

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

//go:embed sqlite/*.sql
var sqliteFiles embed.FS

// SQLiteDir is the directory of SQLite() that holds the SQLite migrations.
const SQLiteDir = "sqlite"

// SQLite returns the embedded file system whose SQLiteDir directory holds
// the SQLite migrations.
func SQLite() fs.FS { return sqliteFiles }

// Migration is one forward-only schema change.
type Migration struct {
	Version int    // the NNNN prefix of the file name, positive
	Name    string // the file name without the version, underscore and ".sql"
	SQL     string // the statements to execute, in one transaction
}

// List reads every file of directory dir of fsys as a migration and returns
// them sorted by version. It rejects malformed file names, duplicate
// versions and empty files. Subdirectories are ignored.
func List(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("migrations: reading %s: %w", dir, err)
	}
	var ms []Migration
	seen := make(map[int]string, len(entries))
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		version, name, err := parseName(e.Name())
		if err != nil {
			return nil, fmt.Errorf("migrations: %s: %w", path.Join(dir, e.Name()), err)
		}
		if prev, ok := seen[version]; ok {
			return nil, fmt.Errorf("migrations: %s: version %d already used by %s",
				path.Join(dir, e.Name()), version, prev)
		}
		seen[version] = e.Name()
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("migrations: reading %s: %w", path.Join(dir, e.Name()), err)
		}
		if strings.TrimSpace(string(b)) == "" {
			return nil, fmt.Errorf("migrations: %s is empty", path.Join(dir, e.Name()))
		}
		ms = append(ms, Migration{Version: version, Name: name, SQL: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	return ms, nil
}

// parseName splits a file name of the form NNNN_name.sql into its version
// and name.
func parseName(file string) (version int, name string, err error) {
	base, ok := strings.CutSuffix(file, ".sql")
	if !ok {
		return 0, "", fmt.Errorf("file name %q does not end in .sql", file)
	}
	num, name, ok := strings.Cut(base, "_")
	if !ok || num == "" || name == "" {
		return 0, "", fmt.Errorf("file name %q is not of the form NNNN_name.sql", file)
	}
	for _, r := range num {
		if r < '0' || r > '9' {
			return 0, "", fmt.Errorf("file name %q: version %q is not decimal", file, num)
		}
	}
	for _, r := range name {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '_' {
			return 0, "", fmt.Errorf("file name %q: name %q may hold only a-z, 0-9 and _", file, name)
		}
	}
	version, err = strconv.Atoi(num)
	if err != nil || version <= 0 {
		return 0, "", fmt.Errorf("file name %q: version %q is not a positive integer", file, num)
	}
	return version, name, nil
}
