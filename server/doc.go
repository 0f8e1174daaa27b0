// SPDX-License-Identifier: Apache-2.0

// Package server is weir assembled: the configuration file composed of
// the packages' own blocks, read in one pass that reports every problem
// with its line and key (Config, LoadConfig, ParseConfig); the server
// wired from it (New: the data directory, the CA, the ACME store, the
// limiter backend, nonces, the ACME service, its HTTPS front end and the
// admin listener), run until its context ends (Serve) and reloaded live
// when the file changes; the CA bootstrap of weir init (InitDataDir); and
// the operations behind weir's other subcommands (Backup, Migrate,
// MigrateStorage, CheckReady). The command line (cmd/weir) parses flags
// and prints; everything it does is a function of this package.
//
// Only this package and the commands read weir's files: the
// configuration, the data directory and the files the configuration
// names. Its tests are the system tests of domain behaviour: a whole
// server on loopback driven by an ACME client, with the operator
// commands run as the weir binary.
package server
