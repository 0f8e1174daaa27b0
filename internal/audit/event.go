// SPDX-License-Identifier: Apache-2.0

// Package audit is weir's audit trail: one structured, hash-chained event
// per issuance, revocation, admin action and configuration reload, written
// to an append-only sink (a JSON-lines file, fsynced and rotated by size,
// or the log). Verify checks a chain of files and names its first break.
//
// A line is one JSON object whose last member is "hash": the SHA-256, in
// hex, of the line's bytes with that member removed (the object closed
// right after the member before it). Every event carries in "prev" the
// hash of the event before it, in the same file or, for a file's first
// event after a rotation or a restart, in the file before it; the first
// event of a trail has "prev": "". An edited line then no longer matches
// its own hash, and a removed or inserted one breaks the next "prev".
package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// The event types.
const (
	TypeIssuance    = "issuance"
	TypeRevocation  = "revocation"
	TypeAdminAction = "admin-action"
	TypeReload      = "config-reload"
	// TypeTruncated records that the sink dropped a torn last line at
	// start (a process killed in the middle of a write).
	TypeTruncated = "audit-truncated"
	// TypeStarted records that a sink opened the file: a replica started.
	TypeStarted = "audit-started"
)

// Actor is who caused an event.
type Actor struct {
	// Kind is "account", "certificate-key" (a revocation signed with the
	// certificate's key), "admin" or "system".
	Kind string `json:"kind"`
	// ID is the account ID, the admin identity or the replica.
	ID string `json:"id,omitempty"`
	// Address is the client's IP address, when a client caused it.
	Address string `json:"address,omitempty"`
}

// Event is one audit record as a caller gives it; the sink adds the
// sequence, the time and the chain.
type Event struct {
	Type  string         `json:"type"`
	Actor Actor          `json:"actor"`
	Data  map[string]any `json:"data,omitempty"`
}

// record is an event as written, but for its hash.
type record struct {
	Time    time.Time `json:"time"`
	Replica string    `json:"replica"`
	Seq     uint64    `json:"seq"`
	Event
	Prev string `json:"prev"`
}

// hashSuffixLen is the length of `,"hash":"<64 hex>"}`.
const hashSuffixLen = len(`,"hash":""}`) + sha256.Size*2

// encodeLine returns the line of r (without the newline) and its hash.
func encodeLine(r record) ([]byte, string, error) {
	body, err := json.Marshal(r)
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(body)
	h := hex.EncodeToString(sum[:])
	line := append(body[:len(body)-1], `,"hash":"`...)
	line = append(line, h...)
	line = append(line, `"}`...)
	return line, h, nil
}

// parsedLine is what a line holds for the chain.
type parsedLine struct {
	Prev string // the hash it claims for the event before it
	Hash string // its hash, as written and as computed (they are equal)
	Seq  uint64
}

// parseLine checks the line's own hash and returns its chain fields.
func parseLine(line []byte) (parsedLine, error) {
	if len(line) < hashSuffixLen+2 || string(line[len(line)-hashSuffixLen:len(line)-hashSuffixLen+len(`,"hash":"`)]) != `,"hash":"` ||
		line[len(line)-2] != '"' || line[len(line)-1] != '}' {
		return parsedLine{}, errors.New(`does not end with the "hash" member`)
	}
	written := string(line[len(line)-hashSuffixLen+len(`,"hash":"`) : len(line)-2])
	body := append(append([]byte{}, line[:len(line)-hashSuffixLen]...), '}')
	sum := sha256.Sum256(body)
	if h := hex.EncodeToString(sum[:]); h != written {
		return parsedLine{}, fmt.Errorf("its hash %s is not that of its content (%s): the line was altered", short(written), short(h))
	}
	var r record
	if err := json.Unmarshal(body, &r); err != nil {
		return parsedLine{}, fmt.Errorf("not a JSON object: %v", err)
	}
	return parsedLine{Prev: r.Prev, Hash: written, Seq: r.Seq}, nil
}

// short is the first 12 hex digits of a hash, for messages.
func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return `""`
	}
	return h
}
