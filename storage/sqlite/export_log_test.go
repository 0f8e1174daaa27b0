// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"

	"github.com/weir-pki/weir/storage/transfer"
)

// recordingSink's part of the verifiable log (export_test.go).

func (r *recordingSink) LogEntries(_ context.Context, rows []transfer.LogEntry) error {
	r.note(transfer.LogEntries, len(rows))
	r.log = append(r.log, rows...)
	return nil
}

func (r *recordingSink) LogHashes(_ context.Context, rows []transfer.LogHash) error {
	r.note(transfer.LogHashes, len(rows))
	r.hashes = append(r.hashes, rows...)
	return nil
}

func (r *recordingSink) LogCheckpoints(_ context.Context, rows []transfer.LogCheckpoint) error {
	r.note(transfer.LogCheckpoints, len(rows))
	r.cps = append(r.cps, rows...)
	return nil
}
