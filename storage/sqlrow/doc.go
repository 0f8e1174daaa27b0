// SPDX-License-Identifier: Apache-2.0

// Package sqlrow is the stored form of weir's ACME state that the two SQL
// drivers, storage/sqlite and storage/postgres, share: the encodings of
// the columns (times as Unix nanoseconds, lists and problem documents as
// JSON text, account IDs and order sequence numbers as integers), the
// columns each object is read from and the decoding of such a row into
// its acme object, the checks and encodings of an object's values before
// a write, and the errors the drivers give for them, each beginning with
// the driver's name.
//
// The two schemas (migrations/sqlite and migrations/postgres) store every
// column in this form, so a row means the same in both and a copy from
// one to the other (weir migrate-storage) changes nothing. What differs
// between the drivers stays in them: the SQL of each statement, the
// connections and transactions, and how the driver reports a missing row
// or a violated constraint.
package sqlrow
