// SPDX-License-Identifier: Apache-2.0

package transparency

import (
	"bytes"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// The kinds of entry, one per thing the CA did.
const (
	// KindIssued is a certificate issued: the certificate itself, the
	// account, tenant and order it was issued to, and how each of its
	// names was validated.
	KindIssued = "issued"
	// KindRevoked is a certificate revoked, with its reason.
	KindRevoked = "revoked"
	// KindEvent is an administrator's action or a configuration reload,
	// as the audit trail records it (internal/audit's Event).
	KindEvent = "event"
)

// EntryVersion is the version of the entry format this package writes
// and the one it reads.
const EntryVersion = 1

// MaxEntrySize is the largest entry: a tlog-tiles entry bundle writes each
// entry after its length as a big-endian uint16 (EntryBundle).
const MaxEntrySize = math.MaxUint16

// Entry is one leaf of the log: a JSON object whose bytes are what the
// tree hashes (RFC 9162 §2.1.1) and the entry bundles serve. Exactly one
// of Issued, Revoked and Event is set, the one Kind names. ParseEntry
// reads only the form EncodeEntry writes, so an entry has one encoding.
type Entry struct {
	V       int       `json:"v"`
	Kind    string    `json:"kind"`
	Time    time.Time `json:"time"`
	Actor   Actor     `json:"actor"`
	Issued  *Issued   `json:"issued,omitempty"`
	Revoked *Revoked  `json:"revoked,omitempty"`
	Event   *Event    `json:"event,omitempty"`
}

// Actor is who caused the entry: an account, the holder of a
// certificate's key, an administrator or the CA itself ("system").
type Actor struct {
	Kind    string `json:"kind"`
	ID      string `json:"id,omitempty"`
	Address string `json:"address,omitempty"`
}

// Issued is a certificate issued.
type Issued struct {
	// Certificate is the leaf, DER (base64 in JSON).
	Certificate []byte `json:"certificate"`
	// Issuer is the ID of the issuer that signed it (ca.issuers).
	Issuer  string `json:"issuer"`
	Account string `json:"account"`
	Tenant  string `json:"tenant,omitempty"`
	Order   string `json:"order"`
	// Validations are how each of its names was validated, one per name.
	Validations []Validation `json:"validations"`
}

// Validation is how one name of a certificate was validated: a challenge
// type ("http-01"), a tenant's delegated zone ("delegated-zone:.a.example"),
// or "" when it cannot be told.
type Validation struct {
	Name   string `json:"name"`
	Method string `json:"method"`
}

// Revoked is a certificate revoked.
type Revoked struct {
	// Serial is the certificate's serial number, lowercase hex.
	Serial string `json:"serial"`
	Issuer string `json:"issuer"`
	// Reason is the RFC 5280 §5.3.1 reason code.
	Reason int `json:"reason"`
}

// Event is an administrator's action or a configuration reload: its audit
// type and data.
type Event struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data,omitempty"`
}

// EncodeEntry checks e and returns its bytes, the log's leaf.
func EncodeEntry(e Entry) ([]byte, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	if e.Event != nil && len(e.Event.Data) > 0 {
		var compact bytes.Buffer
		if err := json.Compact(&compact, e.Event.Data); err != nil {
			return nil, fmt.Errorf("event data: %v", err)
		}
		ev := *e.Event
		ev.Data = compact.Bytes()
		e.Event = &ev
	}
	b, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	if len(b) > MaxEntrySize {
		return nil, fmt.Errorf("the entry is %d bytes, more than the %d a tlog-tiles entry may hold", len(b), MaxEntrySize)
	}
	return b, nil
}

// ParseEntry reads a leaf: a JSON object of the current version with no
// unknown member, in the one form EncodeEntry writes, whose certificate
// (for an issuance) parses and names exactly the names it lists.
func ParseEntry(b []byte) (Entry, error) {
	if len(b) > MaxEntrySize {
		return Entry{}, fmt.Errorf("%d bytes, more than %d", len(b), MaxEntrySize)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var e Entry
	if err := dec.Decode(&e); err != nil {
		return Entry{}, fmt.Errorf("not an entry: %v", err)
	}
	if dec.More() {
		return Entry{}, errors.New("not an entry: data after the object")
	}
	again, err := EncodeEntry(e)
	if err != nil {
		return Entry{}, err
	}
	if !bytes.Equal(again, b) {
		return Entry{}, errors.New("not in the log's one encoding of its content (member order, spacing, escapes or time format differ)")
	}
	return e, nil
}

// check is the rule of a valid entry.
func (e Entry) check() error {
	if e.V != EntryVersion {
		return fmt.Errorf("version %d, want %d", e.V, EntryVersion)
	}
	if e.Time.IsZero() || e.Time.Location() != time.UTC {
		return errors.New("time must be set, in UTC")
	}
	if err := e.Actor.check(); err != nil {
		return fmt.Errorf("actor: %v", err)
	}
	set := 0
	for _, p := range []bool{e.Issued != nil, e.Revoked != nil, e.Event != nil} {
		if p {
			set++
		}
	}
	if set != 1 {
		return fmt.Errorf("%d of issued, revoked and event are set, want the one kind %q names", set, e.Kind)
	}
	switch {
	case e.Kind == KindIssued && e.Issued != nil:
		return e.Issued.check()
	case e.Kind == KindRevoked && e.Revoked != nil:
		return e.Revoked.check()
	case e.Kind == KindEvent && e.Event != nil:
		if e.Event.Type == "" {
			return errors.New("event: no type")
		}
		return nil
	}
	return fmt.Errorf("kind %q does not match its content", e.Kind)
}

func (a Actor) check() error {
	switch a.Kind {
	case "account", "certificate-key", "admin", "system":
	default:
		return fmt.Errorf("unknown kind %q", a.Kind)
	}
	if a.Address != "" {
		if ip, err := netip.ParseAddr(a.Address); err != nil || ip.String() != a.Address {
			return fmt.Errorf("address %q is not an IP address in its canonical form", a.Address)
		}
	}
	return nil
}

func (i *Issued) check() error {
	if i.Issuer == "" || i.Account == "" || i.Order == "" {
		return errors.New("issued: issuer, account and order must be set")
	}
	cert, err := x509.ParseCertificate(i.Certificate)
	if err != nil {
		return fmt.Errorf("issued: the certificate does not parse: %v", err)
	}
	names := slices.Clone(cert.DNSNames)
	for _, ip := range cert.IPAddresses {
		names = append(names, ip.String())
	}
	listed := make([]string, 0, len(i.Validations))
	for _, v := range i.Validations {
		listed = append(listed, strings.ToLower(v.Name))
	}
	for j := range names {
		names[j] = strings.ToLower(names[j])
	}
	slices.Sort(names)
	slices.Sort(listed)
	if !slices.Equal(names, listed) {
		return fmt.Errorf("issued: the validations name %v, the certificate %v", listed, names)
	}
	return nil
}

func (r *Revoked) check() error {
	if r.Issuer == "" {
		return errors.New("revoked: no issuer")
	}
	if b, err := hex.DecodeString(r.Serial); err != nil || len(b) == 0 || hex.EncodeToString(b) != r.Serial {
		return fmt.Errorf("revoked: serial %q is not lowercase hex", r.Serial)
	}
	// RFC 5280 §5.3.1: 0-10, 7 unused.
	if r.Reason < 0 || r.Reason > 10 || r.Reason == 7 {
		return fmt.Errorf("revoked: reason %d is not an RFC 5280 reason code", r.Reason)
	}
	return nil
}

// EntryTime is the time of an entry written by EncodeEntry, read without
// checking the rest of it: what the sequencer's lag is measured from.
func EntryTime(b []byte) (time.Time, error) {
	var e struct {
		Time time.Time `json:"time"`
	}
	if err := json.Unmarshal(b, &e); err != nil {
		return time.Time{}, fmt.Errorf("entry time: %v", err)
	}
	if e.Time.IsZero() {
		return time.Time{}, errors.New("entry time: the entry has no time")
	}
	return e.Time, nil
}
