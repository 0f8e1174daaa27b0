// SPDX-License-Identifier: Apache-2.0

// Package ha holds the acceptance tests of weir's high availability
// (docs/high-availability.md): three weir processes sharing one PostgreSQL
// schema and one Redis, reached by x/crypto/acme clients through a
// round-robin dialer that sends every request to the next replica.
//
//	WEIR_TEST_POSTGRES_DSN=postgres://postgres@127.0.0.1:5432/test?sslmode=disable go test -count=1 -v ./test/ha/
//
// The tests need WEIR_TEST_POSTGRES_DSN (a fresh schema per test) and
// redis-server (private servers on free loopback ports);
// TestRestartPostgresUnderLoad runs only when WEIR_TEST_POSTGRES_DSN is
// set too, but stores in a private cluster it makes with the PostgreSQL
// server binaries (initdb, pg_ctl under /usr/lib/postgresql/*/bin, run as
// the postgres OS user when the test runs as root).
// Without them the tests skip, saying how to run them, except under
// CI=true, where they fail.
//
// Two fault tests run a single weir on SQLite and need neither:
// TestFullDisk (fulldisk_test.go) puts its data directory on a 32 MiB
// tmpfs mounted in a private mount namespace (root and unshare(1)) and
// fills it; TestPrefaceFlood (connflood_test.go) opens 5,000 idle TLS
// connections from one loopback address while a client on another takes
// a certificate. TestAuditKill9 (auditkill_test.go) kills a weir issuing
// in a loop with SIGKILL three times and checks that its audit trail
// still verifies and holds every certificate a client received.
package ha
