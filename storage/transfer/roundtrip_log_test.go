// SPDX-License-Identifier: Apache-2.0

package transfer_test

import (
	"crypto/sha256"
	"fmt"
	"reflect"
	"testing"

	"github.com/weir-pki/weir/acme/transparency"
)

// populateLog adds to what populate wrote (an entry per issuance and per
// revocation) an administrator's entry, and integrates the first five
// entries with a checkpoint, which witnesses cosign and the log serves:
// the moved log has integrated and pending entries and a served size.
func populateLog(t *testing.T, s store) {
	t.Helper()
	ctx := t.Context()
	if err := s.AppendLogEntry(ctx, []byte("admin action")); err != nil {
		t.Fatal(err)
	}
	ps, err := s.PendingLogEntries(ctx, 5)
	if err != nil || len(ps) != 5 {
		t.Fatalf("PendingLogEntries: %d, %v", len(ps), err)
	}
	b := transparency.Batch{OldSize: 0, Checkpoint: []byte("checkpoint of 5")}
	for i, p := range ps {
		b.IDs = append(b.IDs, p.ID)
		b.Hashes = append(b.Hashes, transparency.StoredHash{Index: int64(i), Hash: sha256.Sum256(p.Entry)})
	}
	if err := s.IntegrateLog(ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := s.CosignLogCheckpoint(ctx, 5, []byte("checkpoint of 5, cosigned"), true); err != nil {
		t.Fatal(err)
	}
}

// sameLog checks that the log reads the same on both stores: its head,
// its served size and checkpoint, its integrated and pending entries, hashes and checkpoint, the index of
// an issuance; and that the target goes on from it, its next entry after
// the moved pending ones.
func sameLog(t *testing.T, src, dst store) {
	t.Helper()
	ctx := t.Context()
	read := func(s store) []any {
		size, cp, err1 := s.LogHead(ctx)
		es, err2 := s.LogEntries(ctx, 0, 100)
		ps, err3 := s.PendingLogEntries(ctx, 100)
		var pending []string
		for _, p := range ps {
			pending = append(pending, string(p.Entry))
		}
		hs, err4 := s.LogHashes(ctx, []int64{0, 1, 2, 3, 4})
		idx, err5 := s.LogIndexOf(ctx, fmt.Sprintf("%032x", 1))
		served, servedCP, err6 := s.LogServed(ctx)
		return []any{size, string(cp), es, pending, hs, idx, served, string(servedCP), err1, err2, err3, err4, err5, err6}
	}
	a, b := read(src), read(dst)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("the log differs:\nsqlite:   %v\npostgres: %v", a, b)
	}
	if a[0] != int64(5) || len(a[3].([]string)) != 10 || a[6] != int64(5) || a[7] != "checkpoint of 5, cosigned" {
		t.Errorf("the source's log: size %v, %d pending, served %v %q; want 5, 10 and 5 with the cosigned checkpoint",
			a[0], len(a[3].([]string)), a[6], a[7])
	}
	if err := dst.AppendLogEntry(ctx, []byte("after the move")); err != nil {
		t.Fatalf("AppendLogEntry on the target: %v", err)
	}
	ps, err := dst.PendingLogEntries(ctx, 100)
	if err != nil || len(ps) != 11 || string(ps[10].Entry) != "after the move" {
		t.Fatalf("the target's pending entries after an append: %d, %v; want the new one last of 11", len(ps), err)
	}
}
