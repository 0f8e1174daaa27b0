// SPDX-License-Identifier: Apache-2.0

package storagetest

import (
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/transparency"
)

// testLogCosign checks the witnesses' part of transparency.Store: a
// cosigned checkpoint replaces the stored one of its size (LogHead and
// LogCheckpoint read it), serving makes its size the served one, the
// served size only grows, and a size with no stored checkpoint is refused
// without changing anything.
func testLogCosign(t *testing.T, f *fixture) {
	s := f.s
	served := func(wantSize int64, wantCP string) {
		t.Helper()
		size, cp, err := s.LogServed(f.ctx)
		if err != nil || size != wantSize || string(cp) != wantCP || (wantCP == "" && cp != nil) {
			t.Fatalf("LogServed = %d, %q, %v; want %d, %q", size, cp, err, wantSize, wantCP)
		}
	}
	checkpoint := func(size int64, want string) {
		t.Helper()
		if cp, err := s.LogCheckpoint(f.ctx, size); err != nil || string(cp) != want {
			t.Fatalf("LogCheckpoint(%d) = %q, %v; want %q", size, cp, err, want)
		}
	}
	head := func(wantSize int64, wantCP string) {
		t.Helper()
		if size, cp, err := s.LogHead(f.ctx); err != nil || size != wantSize || string(cp) != wantCP {
			t.Fatalf("LogHead = %d, %q, %v; want %d, %q", size, cp, err, wantSize, wantCP)
		}
	}
	cosign := func(size int64, cp string, serve bool) {
		t.Helper()
		if err := s.CosignLogCheckpoint(f.ctx, size, []byte(cp), serve); err != nil {
			t.Fatalf("CosignLogCheckpoint(%d, %q, %v): %v", size, cp, serve, err)
		}
	}

	served(0, "")
	wantErr(t, "CosignLogCheckpoint(size 0 of the empty log)", s.CosignLogCheckpoint(f.ctx, 0, []byte("cp0"), true), acme.ErrNotFound)
	served(0, "")

	for i := range 3 {
		if err := s.AppendLogEntry(f.ctx, fmt.Appendf(nil, "e%d", i)); err != nil {
			t.Fatalf("AppendLogEntry: %v", err)
		}
	}
	ps, err := s.PendingLogEntries(f.ctx, 10)
	if err != nil || len(ps) != 3 {
		t.Fatalf("PendingLogEntries = %d entries, %v; want 3", len(ps), err)
	}
	hash := func(i int64) transparency.StoredHash {
		return transparency.StoredHash{Index: i, Hash: sha256.Sum256(fmt.Appendf(nil, "h%d", i))}
	}
	for _, b := range []transparency.Batch{
		{OldSize: 0, IDs: []int64{ps[0].ID, ps[1].ID}, Hashes: []transparency.StoredHash{hash(0), hash(1), hash(2)}, Checkpoint: []byte("cp2")},
		{OldSize: 2, IDs: []int64{ps[2].ID}, Hashes: []transparency.StoredHash{hash(3)}, Checkpoint: []byte("cp3")},
	} {
		if err := s.IntegrateLog(f.ctx, b); err != nil {
			t.Fatalf("IntegrateLog(at %d): %v", b.OldSize, err)
		}
	}
	served(0, "")

	// Cosigned, not served: the stored checkpoint is the cosigned one.
	cosign(3, "cp3 w1", false)
	head(3, "cp3 w1")
	checkpoint(3, "cp3 w1")
	checkpoint(2, "cp2")
	served(0, "")

	// Served: the size grows, from 2 to 3.
	cosign(2, "cp2 w1", true)
	checkpoint(2, "cp2 w1")
	served(2, "cp2 w1")
	cosign(3, "cp3 w1 w2", true)
	head(3, "cp3 w1 w2")
	served(3, "cp3 w1 w2")

	// A smaller size served again: its checkpoint is replaced, the served
	// size stays.
	cosign(2, "cp2 w1 w2", true)
	checkpoint(2, "cp2 w1 w2")
	served(3, "cp3 w1 w2")

	// More cosignatures on the served size, without serve: LogServed
	// reads the stored checkpoint.
	cosign(3, "cp3 w1 w2 w3", false)
	served(3, "cp3 w1 w2 w3")

	// No checkpoint of the size: refused, nothing changes.
	wantErr(t, "CosignLogCheckpoint(never signed)", s.CosignLogCheckpoint(f.ctx, 1, []byte("cp1"), true), acme.ErrNotFound)
	wantErr(t, "CosignLogCheckpoint(beyond the head)", s.CosignLogCheckpoint(f.ctx, 4, []byte("cp4"), true), acme.ErrNotFound)
	_, err = s.LogCheckpoint(f.ctx, 1)
	wantErr(t, "LogCheckpoint(1) after a refused cosigning", err, acme.ErrNotFound)
	_, err = s.LogCheckpoint(f.ctx, 4)
	wantErr(t, "LogCheckpoint(4) after a refused cosigning", err, acme.ErrNotFound)
	head(3, "cp3 w1 w2 w3")
	served(3, "cp3 w1 w2 w3")
}
