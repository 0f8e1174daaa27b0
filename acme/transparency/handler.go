// SPDX-License-Identifier: Apache-2.0

package transparency

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/tlog"
)

// The cache lifetimes of what NewHandler serves: a full tile never
// changes; a partial one is replaced by a wider one as the log grows, and
// the checkpoint at every integration.
const (
	fullTileCache    = "public, max-age=31536000, immutable"
	partialTileCache = "public, max-age=10"
	checkpointCache  = "no-store"
)

// NewHandler serves the log st keeps as C2SP tlog-tiles, read-only and to
// anyone: GET or HEAD of "/checkpoint" (the latest signed checkpoint),
// "/tile/<L>/<N>[.p/<W>]" (a hash tile) and "/tile/entries/<N>[.p/<W>]"
// (an entry bundle). Paths are relative to where it is mounted (the
// server strips its prefix). Only tiles within the tree of the latest
// checkpoint are served, so a client never sees a hash the checkpoint it
// can fetch does not commit to; a malformed path or a tile beyond it is a
// 404 saying which. A store error is a 500 with a generic text, logged
// with the details.
func NewHandler(st Store) http.Handler {
	return &tileHandler{st: st, head: st.LogHead, empty: "the log is empty: no checkpoint signed yet"}
}

// NewServedHandler is NewHandler serving the checkpoint the log's
// witnesses cosigned enough (Store.LogServed) rather than the latest: a
// checkpoint that waits for their cosignatures is not served yet, nor
// any tile beyond the served one's tree.
func NewServedHandler(st Store) http.Handler {
	return &tileHandler{st: st, head: st.LogServed, empty: "no checkpoint served yet: the first one waits for the witnesses' cosignatures"}
}

type tileHandler struct {
	st Store
	// head is the checkpoint served and its size; empty says why there
	// is none.
	head  func(context.Context) (int64, []byte, error)
	empty string
}

func (h *tileHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		plain(w, http.StatusMethodNotAllowed, "the log is read-only: GET or HEAD")
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/")
	ctx := r.Context()
	size, cp, err := h.head(ctx)
	if err != nil {
		h.internal(ctx, w, path, err)
		return
	}
	if path == CheckpointPath {
		if cp == nil {
			plain(w, http.StatusNotFound, h.empty)
			return
		}
		send(w, "text/plain; charset=utf-8", checkpointCache, cp)
		return
	}
	tile, err := ParseTilePath(path)
	if err != nil {
		plain(w, http.StatusNotFound, fmt.Sprintf("%v: want checkpoint, tile/<L>/<N>[.p/<W>] or tile/entries/<N>[.p/<W>]", err))
		return
	}
	if !TileCovered(tile, size) {
		plain(w, http.StatusNotFound, fmt.Sprintf("%s lies beyond the log's tree of size %d", path, size))
		return
	}
	var data []byte
	if tile.L == -1 {
		data, err = h.bundle(ctx, tile)
	} else {
		data, err = tlog.ReadTileData(tile, StoreHashReader(ctx, h.st))
	}
	if err != nil {
		h.internal(ctx, w, path, err)
		return
	}
	cache := partialTileCache
	if tile.W == 1<<TileHeight {
		cache = fullTileCache
	}
	send(w, "application/octet-stream", cache, data)
}

// TileCovered reports whether the tree of size holds all of tile: a hash
// tile's hashes are complete subtrees of it, an entry bundle's entries
// are among its leaves.
func TileCovered(tile tlog.Tile, size int64) bool {
	have := size // the leaves, for an entry bundle
	if tile.L >= 0 {
		shift := tile.L * TileHeight
		if shift >= 63 {
			return false
		}
		have = size >> shift // the complete subtrees at the tile's lowest level
	}
	return tile.N<<TileHeight+int64(tile.W) <= have
}

// bundle is the entry bundle tile, read from the store.
func (h *tileHandler) bundle(ctx context.Context, tile tlog.Tile) ([]byte, error) {
	es, err := h.st.LogEntries(ctx, tile.N<<TileHeight, tile.W)
	if err != nil {
		return nil, err
	}
	if len(es) != tile.W {
		return nil, fmt.Errorf("the store returned %d entries for %s, want %d", len(es), TilePath(tile), tile.W)
	}
	return EntryBundle(es)
}

// internal answers a store failure: the details go to the log, not to
// the client.
func (h *tileHandler) internal(ctx context.Context, w http.ResponseWriter, path string, err error) {
	slog.ErrorContext(ctx, "transparency: serving the log", "path", path, "err", err)
	plain(w, http.StatusInternalServerError, "internal error reading the log")
}

// send writes a 200 with data.
func send(w http.ResponseWriter, contentType, cache string, data []byte) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Cache-Control", cache)
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
}

// plain writes an error status with a one-line reason.
func plain(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = fmt.Fprintln(w, msg)
}
