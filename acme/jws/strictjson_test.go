// SPDX-License-Identifier: Apache-2.0

package jws

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
)

// strictTarget is a payload type of the shape the strict reading meets:
// nested structs in a slice, a map, opaque JSON and an embedded struct.
type strictTarget struct {
	Identifiers []strictIdent          `json:"identifiers"`
	Labels      map[string]strictIdent `json:"labels"`
	Raw         json.RawMessage        `json:"raw"`
	Any         any                    `json:"any"`
	Skipped     string                 `json:"-"`
	Plain       string
	strictEmbedded
}

type strictIdent struct {
	Type  string `json:"type"`
	Value string `json:"value,omitempty"`
}

type strictEmbedded struct {
	Kid string `json:"kid"`
}

// TestUnmarshalStrict: duplicates anywhere and case-only matches of known
// members are refused with the member and its place; everything else
// decodes as json.Unmarshal decodes it.
func TestUnmarshalStrict(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		// want is the MemberError's text; "" for success, "json" for an
		// error of json.Unmarshal.
		want string
	}{
		{"valid", `{"identifiers":[{"type":"dns","value":"a.test"}],"kid":"k","Plain":"p"}`, ""},
		{"unknown members", `{"identifiers":[],"x-ext":1,"IDENT":2,"nested":{"Type":1}}`, ""},
		{"empty", `{}`, ""},
		{"whitespace", " \t\r\n{ \"kid\" : \"k\" } \n", ""},
		{"null", `null`, ""},
		{"syntax", `{"kid":}`, "json"},
		{"type", `{"kid":1}`, "json"},
		{"duplicate", `{"kid":"a","kid":"b"}`, `member "kid" appears more than once`},
		{"duplicate unknown", `{"x":1,"y":2,"x":3}`, `member "x" appears more than once`},
		{"duplicate by escape", `{"kid":"a","\u006bid":"b"}`, `member "kid" appears more than once`},
		{"duplicate in a slice element", `{"identifiers":[{"type":"dns"},{"type":"dns","type":"ip"}]}`,
			`member "type" of identifiers[1] appears more than once`},
		{"duplicate in opaque JSON", `{"raw":{"a":{"b":1,"b":2}}}`, `member "b" of raw.a appears more than once`},
		{"duplicate under any", `{"any":[[{"c":1,"c":1}]]}`, `member "c" of any[0][0] appears more than once`},
		{"duplicate among many", `{"m0":0,"m1":1,"m2":2,"m3":3,"m4":4,"m5":5,"m6":6,"m7":7,"m8":8,"m9":9,"m10":10,` +
			`"m11":11,"m12":12,"m13":13,"m14":14,"m15":15,"m16":16,"m17":17,"m3":3}`, `member "m3" appears more than once`},
		{"case", `{"Identifiers":[]}`, `member "Identifiers" is not "identifiers": member names are case-sensitive`},
		{"case, embedded field", `{"KID":"k"}`, `member "KID" is not "kid"`},
		{"case, untagged field", `{"plain":"p"}`, `member "plain" is not "Plain"`},
		{"case in a slice element", `{"identifiers":[{"Type":"dns"}]}`, `member "Type" of identifiers[0] is not "type"`},
		{"case in a map value", `{"labels":{"a b":{"VALUE":"v"}}}`, `member "VALUE" of labels."a b" is not "value"`},
		{"case by Unicode folding", `{"\u212aid":"k"}`, "member \"\u212aid\" is not \"kid\""},
		{"case by escape", `{"\u004bid":"k"}`, `member "Kid" is not "kid"`},
		{"skipped field", `{"Skipped":"s","skipped":"s"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v strictTarget
			err := Unmarshal([]byte(tc.in), &v)
			me, isMember := errors.AsType[*MemberError](err)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Unmarshal(%s) = %v; want success", tc.in, err)
			case tc.want == "json" && (err == nil || isMember):
				t.Fatalf("Unmarshal(%s) = %v; want json.Unmarshal's error", tc.in, err)
			case tc.want != "" && tc.want != "json" && (!isMember || !strings.Contains(me.Error(), tc.want)):
				t.Fatalf("Unmarshal(%s) = %v; want a MemberError %q", tc.in, err, tc.want)
			}
			if err == nil {
				var ref strictTarget
				_ = json.Unmarshal([]byte(tc.in), &ref)
				if !reflect.DeepEqual(v, ref) {
					t.Errorf("Unmarshal decoded %+v; json.Unmarshal %+v", v, ref)
				}
			}
		})
	}
}

// TestCheckMembersDepth: nesting is refused where json.Valid refuses it.
func TestCheckMembersDepth(t *testing.T) {
	for _, depth := range []int{maxDepth, maxDepth + 1} {
		for _, open := range []string{"[", `{"a":`} {
			closer := map[string]string{"[": "]", `{"a":`: "}"}[open]
			in := []byte(strings.Repeat(open, depth) + "1" + strings.Repeat(closer, depth))
			got := checkMembers(in, nil) == nil
			if want := json.Valid(in); got != want {
				t.Errorf("depth %d of %s: checkMembers accepts %v, json.Valid %v", depth, open, got, want)
			}
		}
	}
}

// hasDuplicate is the reference: whether any object in data, a valid
// JSON value, repeats a member name (decoded), by json.Decoder's tokens.
func hasDuplicate(t *testing.T, data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // any valid number, 1e1000 too
	// One entry per open container: the names seen (nil for an array)
	// and whether the next string token is a name.
	type frame struct {
		names  map[string]bool
		isName bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return false
		}
		if err != nil {
			t.Fatalf("reference decoder: %v", err)
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if s, ok := tok.(string); ok && top != nil && top.names != nil && top.isName {
			if top.names[s] {
				return true
			}
			top.names[s] = true
			top.isName = false
			continue
		}
		if top != nil && top.names != nil {
			top.isName = true // a value ends; a name or '}' follows
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{names: map[string]bool{}, isName: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && stack[len(stack)-1].names != nil {
				stack[len(stack)-1].isName = true
			}
		}
	}
}

// exactReading decodes into a protectedHeader only the members of data
// whose names are exactly the header's, so that no case-insensitive match
// can take part.
func exactReading(t *testing.T, data []byte) protectedHeader {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("reference decode: %v", err)
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for _, name := range schemaOf(reflect.TypeFor[protectedHeader]()).names {
		if raw, ok := m[name]; ok {
			if b.Len() > 1 {
				b.WriteByte(',')
			}
			q, _ := json.Marshal(name)
			b.Write(q)
			b.WriteByte(':')
			b.Write(raw)
		}
	}
	b.WriteByte('}')
	var h protectedHeader
	if err := json.Unmarshal(b.Bytes(), &h); err != nil {
		t.Fatalf("reference decode of %s: %v", b.Bytes(), err)
	}
	return h
}

// FuzzCheckMembers: the scanner never panics, accepts exactly what
// json.Valid accepts (bar the members it refuses), finds a duplicate
// exactly when there is one, and what it accepts as a protected header
// json.Unmarshal reads as an exact-name reading does.
func FuzzCheckMembers(f *testing.F) {
	for _, s := range []string{
		`{"alg":"ES256","nonce":"n","url":"https://ca.test/x","jwk":{"kty":"EC","crv":"P-256","x":"AA","y":"AA"}}`,
		`{"alg":"ES256","URL":"u","Nonce":"n"}`, `{"url":"a","url":"b"}`, `{"url":"a","\u0075rl":"b"}`,
		`{"a":[{"b":1},{"b":1,"c":{"d":[]}}]}`, `[1,-0.5e+3,true,false,null,"\ud83d\ude00"]`,
		`{"\u212aid":"k"}`, `{"a":"\xff","\xfe":1,"\xff":2}`, `{"a":1,}`, `{"":"",""0`, `1E1000`, `01`, `"\u12"`, `{"a" 1}`, `[`, ``,
	} {
		f.Add([]byte(s))
	}
	hs := schemaOf(reflect.TypeFor[protectedHeader]())
	f.Fuzz(func(t *testing.T, data []byte) {
		err := checkMembers(data, nil)
		if valid := json.Valid(data); (err != errSyntax) != valid {
			t.Fatalf("checkMembers = %v; json.Valid = %v", err, valid)
		}
		if err == errSyntax {
			return
		}
		if _, isDup := err.(*MemberError); isDup != hasDuplicate(t, data) {
			t.Fatalf("checkMembers = %v; the reference finds a duplicate: %v", err, !isDup)
		}
		if err != nil || checkMembers(data, hs) != nil {
			return
		}
		var h protectedHeader
		if json.Unmarshal(data, &h) != nil {
			return
		}
		if exact := exactReading(t, data); !reflect.DeepEqual(h, exact) {
			t.Fatalf("accepted header %s reads as %+v; by exact names %+v", data, h, exact)
		}
	})
}

// benchJWS is a new-order request as a client sends it: an ES256 JWS with
// a kid, over a one-name payload.
func benchJWS(b *testing.B) ([]byte, *ecdsa.PrivateKey) {
	b.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	hdr := `{"alg":"ES256","kid":"https://ca.test/acme/account/12345","nonce":"AAGb3GZKqD4bxSm3lQ0uSQgV9B1jYzAu","url":"https://ca.test/acme/new-order"}`
	payload := `{"identifiers":[{"type":"dns","value":"www.example.com"}]}`
	in := base64.RawURLEncoding.EncodeToString([]byte(hdr)) + "." + base64.RawURLEncoding.EncodeToString([]byte(payload))
	d := sha256.Sum256([]byte(in))
	r, s, err := ecdsa.Sign(rand.Reader, key, d[:])
	if err != nil {
		b.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	parts := strings.SplitN(in, ".", 2)
	body, _ := json.Marshal(map[string]string{"protected": parts[0], "payload": parts[1], "signature": base64.RawURLEncoding.EncodeToString(sig)})
	return body, key
}

// BenchmarkParse compares the reading of a request's flattened JWS and
// protected header with encoding/json alone (as before the strict
// reading) and with Unmarshal, the strict scan alone (what Unmarshal
// adds), and the ES256 verification that follows either.
func BenchmarkParse(b *testing.B) {
	body, key := benchJWS(b)
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			var f flattened
			if err := json.Unmarshal(body, &f); err != nil {
				b.Fatal(err)
			}
			hdr, _ := decodeB64("protected header", f.Protected)
			var h protectedHeader
			if err := json.Unmarshal(hdr, &h); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("strict", func(b *testing.B) {
		for b.Loop() {
			var f flattened
			if err := Unmarshal(body, &f); err != nil {
				b.Fatal(err)
			}
			hdr, _ := decodeB64("protected header", f.Protected)
			var h protectedHeader
			if err := Unmarshal(hdr, &h); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("scan-only", func(b *testing.B) {
		var f flattened
		_ = json.Unmarshal(body, &f)
		hdr, _ := decodeB64("protected header", f.Protected)
		fs, hs := schemaOf(reflect.TypeFor[*flattened]()), schemaOf(reflect.TypeFor[*protectedHeader]())
		for b.Loop() {
			if checkMembers(body, fs) != nil || checkMembers(hdr, hs) != nil {
				b.Fatal("refused")
			}
		}
	})
	b.Run("es256-verify", func(b *testing.B) {
		p, prob := parse(body)
		if prob != nil {
			b.Fatal(prob)
		}
		k := &jose.JSONWebKey{Key: &key.PublicKey}
		for b.Loop() {
			if _, prob := verifySig(p, k); prob != nil {
				b.Fatal(prob)
			}
		}
	})
}
