// SPDX-License-Identifier: Apache-2.0

// Package migrations holds weir's database schema as numbered, forward-only
// SQL files embedded in the binary, and a helper that lists them in order.
//
// A migration file is named NNNN_name.sql: a positive decimal version, an
// underscore, and a name of lowercase letters, digits and underscores.
// Versions are applied in increasing order and a file, once released, is
// never edited: a schema change is always a new file with a higher version.
// The package only reads files; applying them is the job of each storage
// backend (see storage/sqlite).
package migrations
