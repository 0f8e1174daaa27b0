// SPDX-License-Identifier: Apache-2.0

package transparency

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/weir-pki/weir/internal/atomicfile"
)

// witnessState is a witness's memory: per origin, the latest checkpoint
// it cosigned, as its state file keeps it. Logs of origins the witness
// no longer knows are kept, so that witnessing one again goes on from
// where it stopped.
type witnessState struct {
	path string
	Logs map[string]witnessedTree `json:"logs"`
}

// witnessedTree is the latest tree of a log the witness cosigned.
type witnessedTree struct {
	Size int64     `json:"size"`
	Hash tlog.Hash `json:"hash"`
	// Cosigned is false until the first cosignature (Size 0 then is no
	// tree, not the empty one).
	Cosigned bool `json:"cosigned"`
}

// InitWitnessState writes an empty state file at path for a new
// witness, and fails if one is there: the state of a witness that
// cosigned is never replaced. A witness whose state file was lost must
// start anew with a new key, for it no longer knows what it cosigned.
func InitWitnessState(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("witness state %s exists; a witness's state is never replaced", path)
		}
		return fmt.Errorf("witness state: %w", err)
	}
	data, _ := json.Marshal(witnessState{Logs: map[string]witnessedTree{}})
	if _, err := f.Write(append(data, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("witness state %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("witness state %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("witness state %s: %w", path, err)
	}
	return atomicfile.SyncDir(filepath.Dir(path))
}

// loadWitnessState reads the state file at path.
func loadWitnessState(path string) (*witnessState, error) {
	if path == "" {
		return nil, errors.New("witness: no state file")
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("witness state %s does not exist: make it on the first start only (InitWitnessState; weir log witness -init)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("witness state: %w", err)
	}
	st := &witnessState{path: path}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(st); err != nil {
		return nil, fmt.Errorf("witness state %s: %w", path, err)
	}
	if st.Logs == nil {
		return nil, fmt.Errorf("witness state %s: no \"logs\" object", path)
	}
	for origin, t := range st.Logs {
		if t.Size < 0 || (!t.Cosigned && (t.Size != 0 || t.Hash != tlog.Hash{})) {
			return nil, fmt.Errorf("witness state %s: log %q: size %d, cosigned %v is not a state the witness writes", path, origin, t.Size, t.Cosigned)
		}
	}
	return st, nil
}

// record makes t the latest tree of origin, on disk (a new file renamed
// over the old, both synced) and then in memory; on failure neither
// changes.
func (s *witnessState) record(origin string, t witnessedTree) error {
	logs := maps.Clone(s.Logs)
	logs[origin] = t
	data, err := json.MarshalIndent(witnessState{Logs: logs}, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(s.path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("witness: recording %s at size %d: %w", origin, t.Size, err)
	}
	s.Logs = logs
	return nil
}
