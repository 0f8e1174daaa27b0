// SPDX-License-Identifier: Apache-2.0

package server

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/weir-pki/weir/internal/audit"
)

// auditCopyTries bounds the copies of the audit trail: each one that
// sees a file rotated under it starts again.
const auditCopyTries = 3

// backupAudit copies the audit trail of cfg, whose data directory is dd,
// into out while the sink goes on writing: every replica's trail under
// audit.path ({replica} as any name), rotated files and all, each file's
// complete lines (audit.CopyComplete). A listing of the files after the
// copy that differs from the one before (a rotation meanwhile) makes it
// copy again. It returns each file copied with its events and each
// trail's total, verified in the copy, and notes for what it cannot copy:
// a trail outside the data directory or in the log.
func backupAudit(cfg Config, dd, out string) (copied, notes []string, err error) {
	if cfg.Audit.Sink == auditSinkLog {
		return nil, []string{"audit.sink is log: the audit trail is in weir's log, not in the data directory, so not in this backup: keep the log"}, nil
	}
	cfg.DataDir = dd
	path := AuditPath(cfg)
	if !inDir(dd, path) {
		return nil, []string{fmt.Sprintf("audit.path %s is outside the data directory: back it up yourself, with its rotated files", path)}, nil
	}
	glob := auditGlob(cfg)
	return copyAuditTrails(func() map[string][]string {
		files, _ := filepath.Glob(glob) // the pattern is well formed: auditGlob
		return audit.Trails(append(files, path))
	}, path, dd, out)
}

// copyAuditTrails copies the trails that list finds (path's, and the
// other replicas') until a copy ends with the files it began with.
func copyAuditTrails(list func() map[string][]string, path, dd, out string) (copied, notes []string, err error) {
	for range auditCopyTries {
		trails := list()
		if len(trails) == 0 {
			return nil, []string{fmt.Sprintf("audit.path %s: no audit file yet, nothing recorded to back up", path)}, nil
		}
		copied, notes, err = copyTrails(trails, dd, out)
		if err != nil {
			return nil, nil, err
		}
		if maps.EqualFunc(trails, list(), slices.Equal) {
			return copied, notes, nil
		}
	}
	return nil, nil, fmt.Errorf("the audit trail %s was rotated during each of %d copies; run weir backup again", path, auditCopyTries)
}

// copyTrails copies each trail's files from dd to the same places under
// out, and verifies each copied chain.
func copyTrails(trails map[string][]string, dd, out string) (copied, notes []string, err error) {
	for _, cur := range slices.Sorted(maps.Keys(trails)) {
		var dsts []string
		events := 0
		for _, f := range trails[cur] {
			rel, err := filepath.Rel(dd, f)
			if err != nil {
				return nil, nil, err
			}
			dst := filepath.Join(out, rel)
			if err := os.Remove(dst); err != nil && !errors.Is(err, fs.ErrNotExist) { // an earlier try's copy
				return nil, nil, err
			}
			n, err := audit.CopyComplete(f, dst)
			if err != nil {
				return nil, nil, fmt.Errorf("backing up the audit trail: %w", err)
			}
			copied = append(copied, fmt.Sprintf("%s (%d events)", filepath.ToSlash(rel), n))
			dsts, events = append(dsts, dst), events+n
		}
		name, _ := filepath.Rel(dd, cur)
		rep, verr := audit.Verify(dsts, audit.VerifyOptions{})
		var b *audit.Break
		switch {
		case errors.As(verr, &b):
			notes = append(notes, fmt.Sprintf("the audit trail %s is copied as it is, but its chain breaks at %s:%d (%s): check the data directory's with weir audit verify",
				filepath.ToSlash(name), filepath.ToSlash(strings.TrimPrefix(b.File, out+string(filepath.Separator))), b.Line, b.Reason))
		case verr != nil:
			return nil, nil, fmt.Errorf("verifying the copied audit trail %s: %w", name, verr)
		default:
			copied = append(copied, fmt.Sprintf("audit trail %s: %d events in %d files, chain intact", filepath.ToSlash(name), rep.Events, rep.Files))
		}
	}
	return copied, notes, nil
}

// auditGlob is the pattern of every replica's audit file under cfg's
// audit.path: {replica} matches any name, and the rest of the path
// matches only itself.
func auditGlob(cfg Config) string {
	const mark = "\x00"
	cfg.Audit.ReplicaID = mark
	lit := strings.NewReplacer("*", "[*]", "?", "[?]", "[", "[[]").Replace(AuditPath(cfg))
	return strings.ReplaceAll(lit, mark, "*")
}
