// SPDX-License-Identifier: Apache-2.0

// Package storagetest is the contract test suite of acme.Store: every
// storage backend runs Run against fresh instances of itself, so that all
// backends behave alike where acme.Service can tell the difference.
//
// The suite checks the documented semantics of acme.Store: IDs and lookups,
// errors wrapping acme.ErrNotFound and acme.ErrConflict, compare-and-set
// status updates (including fifty concurrent finalizations of one order,
// exactly one of which may issue), pagination, the selection rules of
// FindValidAuthz and ListRevoked, fresh copies, and the
// round-trip of times and problem documents. Times are compared with
// time.Equal and built with microsecond precision, the least a backend
// must keep.
package storagetest
