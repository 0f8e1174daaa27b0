// SPDX-License-Identifier: Apache-2.0

package transparency

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// monitorState is what a monitor keeps between runs, in its state file
// (JSON): the last checkpoint it verified, when, when the tree last grew,
// and an alarm raised and not cleared.
type monitorState struct {
	// Checkpoint is the signed checkpoint verified last, as served; empty
	// before the first.
	Checkpoint string `json:"checkpoint,omitempty"`
	// Verified is when a checkpoint was last verified.
	Verified time.Time `json:"verified,omitzero"`
	// Grew is when the monitor last saw the tree grow.
	Grew time.Time `json:"grew,omitzero"`
	// Alarm is an integrity alarm raised and not cleared: while it is set
	// every check reports it again.
	Alarm *Alarm `json:"alarm,omitempty"`
}

// readMonitorState reads the state file at path; a file that does not
// exist is the state of a monitor's first run.
func readMonitorState(path string) (monitorState, bool, error) {
	var st monitorState
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, false, nil
	}
	if err != nil {
		return st, false, fmt.Errorf("state file: %w", err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, false, fmt.Errorf("state file %s: not a monitor's state: %v", path, err)
	}
	return st, true, nil
}

// writeMonitorState replaces the state file at path atomically: a
// temporary file in its directory, written and synced, renamed over it,
// then the directory synced, so that a crash leaves the old state or the
// new one, never a mix, and a held checkpoint once written stays written.
func writeMonitorState(path string, st monitorState) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("state file: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after the rename, a no-op
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return fmt.Errorf("state file: %w", err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("state file: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("state file: syncing %s: %w", dir, err)
	}
	return nil
}
