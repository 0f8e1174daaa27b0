// SPDX-License-Identifier: Apache-2.0

package transparency_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/weir-pki/weir/acme/transparency"
	"github.com/weir-pki/weir/acme/transparency/monitortest"
)

// TestTileFetcherBounds: a body over its bound, a missing tile and a bad
// URL are failures to fetch (*FetchError), naming the URL.
func TestTileFetcherBounds(t *testing.T) {
	srv := monitortest.NewServer(t)
	srv.Serve(map[string][]byte{
		transparency.CheckpointPath: bytes.Repeat([]byte("x"), 64<<10+1),
		"tile/0/000.p/2":            make([]byte, 3*tlog.HashSize),
		"tile/0/000.p/3":            make([]byte, 3*tlog.HashSize),
	})
	f, err := transparency.NewTileFetcher(srv.URL+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tile := func(w int) []tlog.Tile { return []tlog.Tile{{H: transparency.TileHeight, L: 0, N: 0, W: w}} }
	for _, tc := range []struct {
		name string
		read func() error
		says string
	}{
		{"checkpoint over 64 KiB", func() error { _, err := f.ReadEndpoint(ctx, transparency.CheckpointPath); return err }, "over 65536 bytes"},
		{"hash tile longer than its width", func() error { _, err := f.ReadTiles(ctx, tile(2)); return err }, "over 64 bytes"},
		{"missing tile", func() error { _, err := f.ReadTiles(ctx, tile(4)); return err }, "404"},
	} {
		err := tc.read()
		var fe *transparency.FetchError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.says) || !strings.Contains(fe.URL, srv.URL+"/") {
			t.Errorf("%s: %v, want a fetch error of %s/... saying %q", tc.name, err, srv.URL, tc.says)
		}
	}
	if data, err := f.ReadTiles(ctx, tile(3)); err != nil || len(data) != 1 || len(data[0]) != 3*tlog.HashSize {
		t.Errorf("a good tile: %d tiles, %v", len(data), err)
	}
	if _, err := transparency.NewTileFetcher("ca.example/log", nil); err == nil {
		t.Error("NewTileFetcher took a URL without a scheme")
	}
}
