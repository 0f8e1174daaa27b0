// SPDX-License-Identifier: Apache-2.0

package transparency

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// TileSource reads a log laid out as C2SP tlog-tiles: ReadFile of
// CheckpointPath or of a tile's path (TilePath) returns its bytes. A file
// the source does not have is an error wrapping fs.ErrNotExist.
type TileSource interface {
	ReadFile(ctx context.Context, path string) ([]byte, error)
}

// maxTileFile bounds what a source reads for one file: a full entry
// bundle of the largest entries.
const maxTileFile = (1 << TileHeight) * (2 + MaxEntrySize)

// HTTPSource reads a served log: Base is the URL its paths are under
// (weir's: https://HOST/log/). Client nil is a client with a one-minute
// timeout.
type HTTPSource struct {
	Base   string
	Client *http.Client
}

// defaultSourceClient is the client of an HTTPSource without one.
var defaultSourceClient = &http.Client{Timeout: time.Minute}

// ReadFile implements TileSource with a GET of Base + path.
func (s HTTPSource) ReadFile(ctx context.Context, path string) ([]byte, error) {
	c := s.Client
	if c == nil {
		c = defaultSourceClient
	}
	u := strings.TrimSuffix(s.Base, "/") + "/" + path
	b, err := getBounded(ctx, c, u, maxTileFile)
	var ue *url.Error
	if err != nil && !errors.As(err, &ue) { // a transport error names the URL already
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	return b, err
}

// getBounded GETs url and returns the body of a 200 answer, of at most
// limit bytes; a 404 is an error wrapping fs.ErrNotExist. The one HTTP
// read of a served log: the audit's (HTTPSource) and the monitor's
// (TileFetcher).
func getBounded(ctx context.Context, c *http.Client, u string, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	res, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	switch {
	case res.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("%s: %w", res.Status, fs.ErrNotExist)
	case res.StatusCode != http.StatusOK:
		return nil, errors.New(res.Status)
	}
	b, err := io.ReadAll(io.LimitReader(res.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("the body is over %d bytes", limit)
	}
	return b, nil
}

// DirSource reads a mirror of a log: the directory dir laid out as
// tlog-tiles (dir/checkpoint, dir/tile/0/000, dir/tile/entries/000.p/5 …).
type DirSource string

// ReadFile implements TileSource: the file at path under the directory.
func (d DirSource) ReadFile(_ context.Context, path string) ([]byte, error) {
	if !fs.ValidPath(path) {
		return nil, fmt.Errorf("%q is not a path within the log's directory", path)
	}
	f, err := os.Open(filepath.Join(string(d), filepath.FromSlash(path)))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxTileFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxTileFile {
		return nil, fmt.Errorf("%s: more than the %d bytes a tile may hold", f.Name(), maxTileFile)
	}
	return b, nil
}
