// SPDX-License-Identifier: Apache-2.0

// Package systest holds the parts of weir's system tests that need
// nothing of package server, so that test/system and the white-box tests
// still in server share one copy: a redis-server process of a test's own
// (Redis), the public artefacts fetched and checked (Fetch, FetchCRL), a
// Prometheus scrape read by series (Scrape), and a digest of a SQLite
// store's tables (Snapshot), by which a test sees that a refused request
// wrote nothing.
package systest
