// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"io"
)

// Run is weir serve once its configuration is loaded: it builds the
// server of cfg (New), binds its listeners (Listen), records the admin
// listener's address for the operator commands (RecordAdminURL, which
// FindAdmin reads when the configuration does not load), prints the
// banner to stdout and serves until ctx ends; then it closes the server.
func Run(ctx context.Context, cfg Config, opts Options, stdout io.Writer) error {
	srv, err := New(ctx, cfg, opts)
	if err != nil {
		return err
	}
	defer srv.Close()
	ls, err := Listen(cfg)
	if err != nil {
		return err
	}
	if ls.Admin != nil {
		if err := srv.RecordAdminURL(ls.Admin.Addr()); err != nil {
			srv.Logger().Warn("recording the admin address for the operator commands", "err", err)
		}
	}
	srv.PrintBanner(stdout, opts.Build.Version)
	return srv.Serve(ctx, ls)
}
