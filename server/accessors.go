// SPDX-License-Identifier: Apache-2.0

package server

import (
	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/web/admin"
)

// The parts of a running server that a program embedding it, or a system
// test driving it from outside the package (test/system), may read or
// act on directly. Each is the object the server itself uses, not a copy.

// Store is the server's ACME store (SQLite or PostgreSQL, storage.go).
func (s *Server) Store() Store { return s.store }

// Service is the ACME use cases the handlers call: what an operator's
// command does through the admin API, an embedding program may do here.
func (s *Server) Service() *acme.Service { return s.svc }

// Metrics is the server's Prometheus registry and limiter activity, as the
// admin listener's /metrics serves them.
func (s *Server) Metrics() *admin.Metrics { return s.metrics }

// Reload reads the config file again and applies it now, as a SIGHUP or a
// save of the file does; trigger names the cause in the log and the audit
// trail. A refused reload leaves the running configuration as it was and
// returns the problems.
func (s *Server) Reload(trigger string) error { return s.reload(trigger) }

// CADir is the directory of cfg's data directory that holds the CA's
// certificates and keys.
func CADir(cfg Config) string { return dataPath(cfg.DataDir, "ca") }

// RootFiles are the root certificate's file and its key's in cfg's data
// directory (the key's until weir ca take-root-offline moves it away).
func RootFiles(cfg Config) (cert, key string) {
	return dataPath(cfg.DataDir, fileCARoot), dataPath(cfg.DataDir, fileCARootKey)
}
