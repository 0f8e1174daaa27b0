// SPDX-License-Identifier: Apache-2.0

package transparency_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme/transparency"
)

// leafDER is a certificate for a.weir.test and 127.0.0.1.
func leafDER(t testing.TB) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(0x1234), Subject: pkix.Name{CommonName: "a.weir.test"},
		NotBefore: time.Unix(1_800_000_000, 0), NotAfter: time.Unix(1_800_086_400, 0),
		DNSNames: []string{"a.weir.test"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

var at = time.Date(2026, 12, 7, 2, 0, 0, 5, time.UTC)

func issuedEntry(der []byte) transparency.Entry {
	return transparency.Entry{V: 1, Kind: transparency.KindIssued, Time: at,
		Actor: transparency.Actor{Kind: "account", ID: "acct1", Address: "192.0.2.1"},
		Issued: &transparency.Issued{Certificate: der, Issuer: "default", Account: "acct1", Tenant: "team", Order: "ord1",
			Validations: []transparency.Validation{{Name: "a.weir.test", Method: "http-01"}, {Name: "127.0.0.1", Method: "tls-alpn-01"}}}}
}

// TestEntryRoundTrip: each kind encodes, and parses back to what was
// encoded.
func TestEntryRoundTrip(t *testing.T) {
	der := leafDER(t)
	for _, e := range []transparency.Entry{
		issuedEntry(der),
		{V: 1, Kind: transparency.KindRevoked, Time: at, Actor: transparency.Actor{Kind: "admin", ID: "oncall"},
			Revoked: &transparency.Revoked{Serial: "1234ab", Issuer: "default", Reason: 1}},
		{V: 1, Kind: transparency.KindEvent, Time: at, Actor: transparency.Actor{Kind: "system", ID: "replica-a"},
			Event: &transparency.Event{Type: "config-reload", Data: json.RawMessage(`{ "changed": ["rate-limiting"] }`)}},
	} {
		b, err := transparency.EncodeEntry(e)
		if err != nil {
			t.Fatalf("%s: %v", e.Kind, err)
		}
		got, err := transparency.ParseEntry(b)
		if err != nil {
			t.Fatalf("%s: parsing %s: %v", e.Kind, b, err)
		}
		again, err := transparency.EncodeEntry(got)
		if err != nil || string(again) != string(b) {
			t.Fatalf("%s: %s re-encodes as %s (%v)", e.Kind, b, again, err)
		}
		if got.Kind != e.Kind || !got.Time.Equal(at) || got.Actor != e.Actor {
			t.Fatalf("%s: parsed %+v", e.Kind, got)
		}
	}
}

// TestEntryRefused: every malformed entry is refused, by EncodeEntry
// and, written by hand, by ParseEntry, with the reason.
func TestEntryRefused(t *testing.T) {
	der := leafDER(t)
	good := issuedEntry(der)
	goodB, err := transparency.EncodeEntry(good)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(*transparency.Entry)) transparency.Entry {
		e := issuedEntry(der)
		iss := *e.Issued
		iss.Validations = append([]transparency.Validation(nil), iss.Validations...)
		e.Issued = &iss
		f(&e)
		return e
	}
	for _, tc := range []struct {
		name string
		e    transparency.Entry
		want string
	}{
		{"version", edit(func(e *transparency.Entry) { e.V = 2 }), "version 2"},
		{"no time", edit(func(e *transparency.Entry) { e.Time = time.Time{} }), "time must be set"},
		{"local time", edit(func(e *transparency.Entry) { e.Time = at.In(time.FixedZone("x", 3600)) }), "in UTC"},
		{"actor kind", edit(func(e *transparency.Entry) { e.Actor.Kind = "root" }), `unknown kind "root"`},
		{"actor address", edit(func(e *transparency.Entry) { e.Actor.Address = "::ffff:192.0.2.1x" }), "not an IP address"},
		{"two kinds", edit(func(e *transparency.Entry) { e.Revoked = &transparency.Revoked{Serial: "01", Issuer: "d"} }), "2 of issued"},
		{"kind mismatch", edit(func(e *transparency.Entry) { e.Kind = transparency.KindRevoked }), "does not match"},
		{"no order", edit(func(e *transparency.Entry) { e.Issued.Order = "" }), "order must be set"},
		{"bad certificate", edit(func(e *transparency.Entry) { e.Issued.Certificate = der[:40] }), "does not parse"},
		{"name missing", edit(func(e *transparency.Entry) { e.Issued.Validations = e.Issued.Validations[:1] }), "the validations name"},
		{"name added", edit(func(e *transparency.Entry) {
			e.Issued.Validations = append(e.Issued.Validations, transparency.Validation{Name: "b.weir.test"})
		}), "the validations name"},
		{"serial case", transparency.Entry{V: 1, Kind: transparency.KindRevoked, Time: at, Actor: transparency.Actor{Kind: "admin"},
			Revoked: &transparency.Revoked{Serial: "AB", Issuer: "default"}}, "not lowercase hex"},
		{"reason 7", transparency.Entry{V: 1, Kind: transparency.KindRevoked, Time: at, Actor: transparency.Actor{Kind: "admin"},
			Revoked: &transparency.Revoked{Serial: "ab", Issuer: "default", Reason: 7}}, "reason 7"},
		{"event type", transparency.Entry{V: 1, Kind: transparency.KindEvent, Time: at, Actor: transparency.Actor{Kind: "admin"},
			Event: &transparency.Event{}}, "no type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := transparency.EncodeEntry(tc.e); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("EncodeEntry: %v, want %q", err, tc.want)
			}
			b, err := json.Marshal(tc.e)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := transparency.ParseEntry(b); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ParseEntry: %v, want %q", err, tc.want)
			}
		})
	}
	for name, b := range map[string]string{
		"unknown member": strings.Replace(string(goodB), `{"v":1,`, `{"v":1,"extra":0,`, 1),
		"spacing":        strings.Replace(string(goodB), `{"v":1,`, `{"v": 1,`, 1),
		"member order":   strings.Replace(string(goodB), `{"v":1,"kind":"issued",`, `{"kind":"issued","v":1,`, 1),
		"trailing data":  string(goodB) + "{}",
		"too large":      string(goodB) + strings.Repeat(" ", transparency.MaxEntrySize),
	} {
		if _, err := transparency.ParseEntry([]byte(b)); err == nil {
			t.Errorf("%s: ParseEntry accepted %.80s…", name, b)
		}
	}
}

func FuzzParseEntry(f *testing.F) {
	b, err := transparency.EncodeEntry(issuedEntry(leafDER(f)))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"v":1,"kind":"revoked","time":"2026-12-07T02:00:00Z","actor":{"kind":"admin"},"revoked":{"serial":"ab","issuer":"default","reason":1}}`))
	f.Add([]byte(`{"v":1,"kind":"event","time":"2026-12-07T02:00:00Z","actor":{"kind":"system"},"event":{"type":"config-reload","data":{"a":[1,"<"]}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := transparency.ParseEntry(b)
		if err != nil {
			return
		}
		again, err := transparency.EncodeEntry(e)
		if err != nil || string(again) != string(b) {
			t.Fatalf("parsed %q, which encodes as %q (%v)", b, again, err)
		}
	})
}
