// SPDX-License-Identifier: Apache-2.0

package migrations

import (
	"errors"
	"fmt"
)

// TooNewError is Plan's error for a database whose schema a newer weir
// wrote: a version the binary does not know has been applied.
type TooNewError struct {
	Database int // the highest version applied to the database
	Known    int // the highest version the binary knows
}

// Error implements error.
func (e *TooNewError) Error() string {
	return fmt.Sprintf("schema version %d is newer than %d, the newest this weir knows", e.Database, e.Known)
}

// Plan returns the migrations of ms (sorted by version, as List returns
// them) that a database whose applied versions are applied (version →
// name) lacks, in the order to apply them: every version above the
// newest applied one. Migrations are forward-only, so it fails with a
// *TooNewError when a version newer than ms knows is applied, and with
// an error when a version was applied under another name or is missing
// below one that is applied.
func Plan(ms []Migration, applied map[int]string) ([]Migration, error) {
	if len(ms) == 0 {
		return nil, errors.New("no migrations")
	}
	known := ms[len(ms)-1].Version
	top := 0
	for v := range applied {
		top = max(top, v)
	}
	if top > known {
		return nil, &TooNewError{Database: top, Known: known}
	}
	var pending []Migration
	for _, m := range ms {
		if name, ok := applied[m.Version]; ok {
			if name != m.Name {
				return nil, fmt.Errorf("schema version %d was applied as %q but this weir calls it %q", m.Version, name, m.Name)
			}
			continue
		}
		if m.Version < top {
			return nil, fmt.Errorf("schema version %d (%s) is missing but the later version %d is applied", m.Version, m.Name, top)
		}
		pending = append(pending, m)
	}
	return pending, nil
}
