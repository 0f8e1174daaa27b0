// SPDX-License-Identifier: Apache-2.0

package system

import (
	"testing"

	"github.com/weir-pki/weir/internal/systest"
	"github.com/weir-pki/weir/server"
)

// scrapeServer reads srv.Metrics() as Prometheus would.
func scrapeServer(t *testing.T, srv *server.Server) systest.Scrape {
	t.Helper()
	return systest.ScrapeHandler(t, srv.Metrics().Handler())
}
