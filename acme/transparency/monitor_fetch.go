// SPDX-License-Identifier: Apache-2.0

package transparency

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/tlog"
)

// FetchTimeout bounds one HTTP request of a monitor (the checkpoint, a
// tile or an entry bundle) when its client sets no timeout of its own.
const FetchTimeout = 30 * time.Second

// maxCheckpointSize bounds a served checkpoint: a few lines of text and
// a handful of signatures take well under a kilobyte.
const maxCheckpointSize = 64 << 10

// FetchError is a failure to fetch a resource of a served log: the
// network, a status other than 200, a body over its bound. It is
// transient: the monitor retries it at its next check and it only counts
// towards staleness, unlike what a served resource says once fetched.
type FetchError struct {
	URL string
	Err error
}

func (e *FetchError) Error() string { return fmt.Sprintf("fetching %s: %v", e.URL, e.Err) }

// Unwrap is the cause.
func (e *FetchError) Unwrap() error { return e.Err }

// TileFetcher reads a log served as C2SP tlog-tiles under a base URL:
// the checkpoint and the tiles at the paths TilePath names, each in one
// GET with a bounded body. It is a torchwood.TileReader, so
// torchwood.TileHashReaderWithContext can verify its hash tiles against
// a tree; it keeps no cache and retries nothing (a monitor's next check
// is its retry).
type TileFetcher struct {
	base   string
	client *http.Client
}

// NewTileFetcher is the fetcher of the log served at base (an http or
// https URL; "https://ca.example/log" fetches
// "https://ca.example/log/checkpoint"). A nil client is one with
// FetchTimeout.
func NewTileFetcher(base string, client *http.Client) (*TileFetcher, error) {
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, fmt.Errorf("log URL %q: want an http:// or https:// URL", base)
	}
	if client == nil {
		client = &http.Client{Timeout: FetchTimeout}
	}
	return &TileFetcher{base: strings.TrimSuffix(base, "/") + "/", client: client}, nil
}

var _ torchwood.TileReader = (*TileFetcher)(nil)

// ReadEndpoint fetches base/path, with a body of at most
// maxCheckpointSize bytes: the checkpoint, or anything small.
func (f *TileFetcher) ReadEndpoint(ctx context.Context, path string) ([]byte, error) {
	return f.get(ctx, path, maxCheckpointSize)
}

// ReadTiles fetches tiles one after the other: each hash tile must be
// its width's 32-byte hashes exactly, each entry bundle at most its
// width's largest entries.
func (f *TileFetcher) ReadTiles(ctx context.Context, tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		if t.H != TileHeight {
			return nil, fmt.Errorf("tile %s: height %d, the log's tiles are of height %d", TilePath(t), t.H, TileHeight)
		}
		limit := int64(t.W) * tlog.HashSize
		if t.L == -1 {
			limit = int64(t.W) * (2 + MaxEntrySize)
		}
		b, err := f.get(ctx, TilePath(t), limit)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// SaveTiles does nothing: the fetcher keeps no tiles.
func (f *TileFetcher) SaveTiles([]tlog.Tile, [][]byte) {}

// get fetches base/path, failing with a *FetchError unless it answers
// 200 with at most limit bytes.
func (f *TileFetcher) get(ctx context.Context, path string, limit int64) ([]byte, error) {
	url := f.base + path
	b, err := getBounded(ctx, f.client, url, limit)
	if err != nil {
		return nil, &FetchError{URL: url, Err: err}
	}
	return b, nil
}

// isFetchError reports whether err is (or wraps) a failure to fetch.
func isFetchError(err error) bool {
	var fe *FetchError
	return errors.As(err, &fe) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
