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

// RootCertFile is the root CA's certificate in cfg's data directory.
func RootCertFile(cfg Config) string { return dataPath(cfg.DataDir, fileCARoot) }

// RootKeyFile is the root CA's key in cfg's data directory, where weir
// init writes it and weir ca take-root-offline takes it from.
func RootKeyFile(cfg Config) string { return dataPath(cfg.DataDir, fileCARootKey) }
