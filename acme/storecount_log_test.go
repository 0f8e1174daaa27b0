// SPDX-License-Identifier: Apache-2.0

package acme_test

import (
	"context"
	"crypto/sha256"

	"github.com/weir-pki/weir/acme/transparency"
)

// countingStore's transparency.Store (storecount_test.go).

func (c *countingStore) AppendLogEntry(ctx context.Context, entry []byte) error {
	c.write()
	return c.st.AppendLogEntry(ctx, entry)
}

func (c *countingStore) PendingLogEntries(ctx context.Context, limit int) ([]transparency.PendingEntry, error) {
	c.read()
	return c.st.PendingLogEntries(ctx, limit)
}

func (c *countingStore) IntegrateLog(ctx context.Context, b transparency.Batch) error {
	c.write()
	return c.st.IntegrateLog(ctx, b)
}

func (c *countingStore) LogHead(ctx context.Context) (int64, []byte, error) {
	c.read()
	return c.st.LogHead(ctx)
}

func (c *countingStore) LogCheckpoint(ctx context.Context, size int64) ([]byte, error) {
	c.read()
	return c.st.LogCheckpoint(ctx, size)
}

func (c *countingStore) LogHashes(ctx context.Context, indexes []int64) ([][sha256.Size]byte, error) {
	c.read()
	return c.st.LogHashes(ctx, indexes)
}

func (c *countingStore) LogEntries(ctx context.Context, from int64, n int) ([][]byte, error) {
	c.read()
	return c.st.LogEntries(ctx, from, n)
}

func (c *countingStore) LogIndexOf(ctx context.Context, serial string) (int64, error) {
	c.read()
	return c.st.LogIndexOf(ctx, serial)
}

func (c *countingStore) CosignLogCheckpoint(ctx context.Context, size int64, checkpoint []byte, serve bool) error {
	c.write()
	return c.st.CosignLogCheckpoint(ctx, size, checkpoint, serve)
}

func (c *countingStore) LogServed(ctx context.Context) (int64, []byte, error) {
	c.read()
	return c.st.LogServed(ctx)
}
