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

// RootCertFile is the root CA's certificate in the data directory dataDir
// (ca/root.pem), the file weir ca sign-intermediate -root-cert takes.
func RootCertFile(dataDir string) string { return dataPath(dataDir, fileCARoot) }

// RootKeyFile is the root CA's key in the data directory dataDir
// (ca/root-key.pem) while the root is online (weir ca take-root-offline).
func RootKeyFile(dataDir string) string { return dataPath(dataDir, fileCARootKey) }

// Reload reads the config file again and applies it now, as a SIGHUP or a
// save of the file does; trigger names the cause in the log and the audit
// trail. A refused reload leaves the running configuration as it was and
// returns the problems.
func (s *Server) Reload(trigger string) error { return s.reload(trigger) }
