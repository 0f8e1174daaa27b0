// SPDX-License-Identifier: Apache-2.0

package jws

// The one reading of JSON that everything a request carries goes through:
// the flattened JWS, its protected header, the payload, the inner JWS of a
// key change and the External Account Binding. encoding/json (v1) matches
// member names to struct fields case-insensitively and keeps the last of
// duplicate members, so {"URL": …} would fill "url" and {"url": a,
// "url": b} would read b, where a proxy in front, or any other parser,
// may read a, or nothing. JOSE member names are case-sensitive (RFC 7515
// §5.3) and unique (RFC 7515 §4, RFC 8259 §4), so both are refused here
// before a value is used. Members weir does not know stay allowed: ACME
// clients send extensions.

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/weir-pki/weir/acme"
)

// MemberError is a JSON object member that the strict reading refuses: a
// name that appears twice in one object, or a name that is not a known
// member but equals one case-insensitively.
type MemberError struct {
	// Name is the member's name as decoded.
	Name string
	// Known is, for a case mismatch, the known member Name resembles; ""
	// for a duplicate.
	Known string
	// Path locates the object holding the member, e.g. `identifiers[0]`;
	// "" for the outermost object.
	Path string
}

// Error says what is wrong and where.
func (e *MemberError) Error() string {
	where := ""
	if e.Path != "" {
		where = " of " + e.Path
	}
	if e.Known == "" {
		return fmt.Sprintf("member %q%s appears more than once", e.Name, where)
	}
	return fmt.Sprintf("member %q%s is not %q: member names are case-sensitive", e.Name, where, e.Known)
}

// Unmarshal decodes data into v as json.Unmarshal does, then refuses, as a
// *MemberError, a duplicate member name in any object at any depth, and a
// member name that matches one of v's JSON fields (at its place in v's
// type) only case-insensitively. Any other error is json.Unmarshal's.
func Unmarshal(data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return err
	}
	return checkMembers(data, schemaOf(reflect.TypeOf(v)))
}

// unmarshalProblem is the malformed problem of JSON text, what, that
// Unmarshal refused: a *MemberError as itself, any other error as "what
// is not form".
func unmarshalProblem(err error, what, form string) *acme.Problem {
	if me, ok := errors.AsType[*MemberError](err); ok {
		return acme.Malformed("%s: %v (RFC 7515 §4, §5.3)", what, me)
	}
	return acme.Malformed("%s is not %s: %v", what, form, err)
}

// maxDepth is encoding/json's nesting limit: deeper input is invalid to
// json.Valid, and so to checkMembers.
const maxDepth = 10000

// errSyntax is checkMembers' verdict on input that is not one JSON value.
var errSyntax = errors.New("not a JSON value")

// checkMembers walks data, one JSON value, once. It returns errSyntax for
// input that json.Valid refuses, and otherwise the first *MemberError,
// with s giving the known member names of each object (nil: none).
func checkMembers(data []byte, s *schema) error {
	sc := scanner{data: data}
	if !sc.value(s, 0) {
		return errSyntax
	}
	if sc.space(); sc.i != len(data) {
		return errSyntax
	}
	if sc.found != nil {
		return sc.found
	}
	return nil
}

// scanner reads JSON (RFC 8259) exactly as strictly as encoding/json:
// strings are not checked for valid UTF-8, and control characters in them
// are refused. The first member it refuses is kept in found while it reads
// on, so that invalid JSON is always errSyntax; each enclosing value adds
// its step to found's Path as the reading leaves it.
type scanner struct {
	data  []byte
	i     int
	found *MemberError
}

// space skips whitespace.
func (sc *scanner) space() {
	for sc.i < len(sc.data) && (sc.data[sc.i] == ' ' || sc.data[sc.i] == '\t' || sc.data[sc.i] == '\n' || sc.data[sc.i] == '\r') {
		sc.i++
	}
}

// next skips whitespace and reports whether c follows, and if so reads it.
func (sc *scanner) next(c byte) bool {
	sc.space()
	if sc.i < len(sc.data) && sc.data[sc.i] == c {
		sc.i++
		return true
	}
	return false
}

// value reads one value, after whitespace, at depth (the number of
// enclosing objects and arrays) whose known members are s's.
func (sc *scanner) value(s *schema, depth int) bool {
	if sc.space(); sc.i >= len(sc.data) {
		return false
	}
	switch c := sc.data[sc.i]; {
	case c == '{':
		return depth < maxDepth && sc.object(s, depth+1)
	case c == '[':
		return depth < maxDepth && sc.array(s, depth+1)
	case c == '"':
		_, ok := sc.str()
		return ok
	case c == '-' || '0' <= c && c <= '9':
		return sc.number()
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if rest := sc.data[sc.i:]; len(rest) >= len(lit) && string(rest[:len(lit)]) == lit {
			sc.i += len(lit)
			return true
		}
	}
	return false
}

// smallObject is how many names an object may have before their
// comparison goes through a map rather than a scan of the earlier ones.
const smallObject = 16

func (sc *scanner) object(s *schema, depth int) bool {
	sc.i++ // {
	if sc.next('}') {
		return true
	}
	var (
		small [smallObject][]byte
		names = small[:0]
		many  map[string]struct{}
	)
	for {
		if sc.space(); sc.i >= len(sc.data) || sc.data[sc.i] != '"' {
			return false
		}
		raw, ok := sc.str()
		if !ok {
			return false
		}
		name := memberName(raw)
		var sub *schema
		if sc.found == nil {
			dup := false
			if many != nil {
				_, dup = many[string(name)]
				many[string(name)] = struct{}{}
			} else {
				for _, n := range names {
					dup = dup || bytes.Equal(n, name)
				}
				if names = append(names, name); len(names) == smallObject {
					many = make(map[string]struct{}, 2*smallObject)
					for _, n := range names {
						many[string(n)] = struct{}{}
					}
				}
			}
			var known string
			sub, known = s.member(name)
			if dup || known != "" {
				sc.found = &MemberError{Name: string(name), Known: known}
			}
		}
		if !sc.next(':') {
			return false
		}
		had := sc.found != nil
		if !sc.value(sub, depth) {
			return false
		}
		if !had && sc.found != nil {
			sc.found.Path = joinPath(memberStep(name), sc.found.Path)
		}
		if sc.next('}') {
			return true
		}
		if !sc.next(',') {
			return false
		}
	}
}

func (sc *scanner) array(s *schema, depth int) bool {
	sc.i++ // [
	if sc.next(']') {
		return true
	}
	var elem *schema
	if s != nil {
		elem = s.elem
	}
	for n := 0; ; n++ {
		had := sc.found != nil
		if !sc.value(elem, depth) {
			return false
		}
		if !had && sc.found != nil {
			sc.found.Path = joinPath(fmt.Sprintf("[%d]", n), sc.found.Path)
		}
		if sc.next(']') {
			return true
		}
		if !sc.next(',') {
			return false
		}
	}
}

// joinPath joins a step, a member name or an index, to the path below
// it: a and [0] make a[0], [0] and b make [0].b.
func joinPath(step, rest string) string {
	switch {
	case rest == "":
		return step
	case rest[0] == '[':
		return step + rest
	}
	return step + "." + rest
}

// memberStep is a member name as a path shows it: bare when it is a plain
// word, quoted otherwise.
func memberStep(name []byte) string {
	plain := len(name) > 0
	for _, c := range name {
		plain = plain && ('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-')
	}
	if plain {
		return string(name)
	}
	return fmt.Sprintf("%q", name)
}

// str reads a string and returns it with its quotes, as it stands.
func (sc *scanner) str() ([]byte, bool) {
	start := sc.i
	for sc.i++; sc.i < len(sc.data); {
		switch c := sc.data[sc.i]; {
		case c == '"':
			sc.i++
			return sc.data[start:sc.i], true
		case c < 0x20:
			return nil, false
		case c != '\\':
			sc.i++
		case sc.i+1 < len(sc.data) && strings.IndexByte(`"\\/bfnrt`, sc.data[sc.i+1]) >= 0:
			sc.i += 2
		case sc.i+5 < len(sc.data) && sc.data[sc.i+1] == 'u' && isHex(sc.data[sc.i+2:sc.i+6]):
			sc.i += 6
		default:
			return nil, false
		}
	}
	return nil, false
}

func isHex(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// memberName decodes a quoted member name as encoding/json does (escapes,
// invalid UTF-8 as U+FFFD), so that names that decode alike compare alike:
// "url" and "\u0075rl" are the same member.
func memberName(quoted []byte) []byte {
	inner := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return inner
	}
	var s string
	if err := json.Unmarshal(quoted, &s); err != nil {
		return inner // not reached: str has checked the syntax
	}
	return []byte(s)
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (sc *scanner) number() bool {
	sc.skip("-")
	if !sc.skip("0") && sc.digits() == 0 {
		return false
	}
	if sc.skip(".") && sc.digits() == 0 {
		return false
	}
	if sc.skip("eE") {
		sc.skip("+-")
		return sc.digits() > 0
	}
	return true
}

// skip reads one byte if it is one of set.
func (sc *scanner) skip(set string) bool {
	if sc.i < len(sc.data) && strings.IndexByte(set, sc.data[sc.i]) >= 0 {
		sc.i++
		return true
	}
	return false
}

func (sc *scanner) digits() int {
	n := 0
	for ; sc.i < len(sc.data) && '0' <= sc.data[sc.i] && sc.data[sc.i] <= '9'; n++ {
		sc.i++
	}
	return n
}

// schema is what the strict reading knows of a Go type that JSON decodes
// into: the JSON names of a struct's fields with the schema of each, or
// the schema of a slice's, array's or map's elements. A nil *schema knows
// no names (an interface, a json.RawMessage, a type with its own
// UnmarshalJSON): below it only duplicates are refused.
type schema struct {
	fields map[string]*schema
	names  []string // the keys of fields, for the case-insensitive scan
	elem   *schema
}

// member returns the schema of the member name, and the known member
// name resembles when name is not a field but equals one as encoding/json
// compares names (bytes.EqualFold: simple Unicode case folding, so "K"
// with a Kelvin sign matches "k").
func (s *schema) member(name []byte) (sub *schema, resembles string) {
	if s == nil {
		return nil, ""
	}
	if s.fields == nil {
		// A map: any name, each value of the element type.
		return s.elem, ""
	}
	if sub, ok := s.fields[string(name)]; ok {
		return sub, ""
	}
	for _, known := range s.names {
		if bytes.EqualFold(name, []byte(known)) {
			return nil, known
		}
	}
	return nil, ""
}

// schemas caches schemaOf by type: reflection once per type.
var schemas sync.Map // reflect.Type -> *schema

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// schemaOf returns the schema of t (nil for a nil type).
func schemaOf(t reflect.Type) *schema {
	if t == nil {
		return nil
	}
	if s, ok := schemas.Load(t); ok {
		return s.(*schema)
	}
	s := buildSchema(t, map[reflect.Type]*schema{})
	schemas.Store(t, s)
	return s
}

// buildSchema makes the schema of t; seen holds the schemas being built,
// so that a recursive type refers to itself.
func buildSchema(t reflect.Type, seen map[reflect.Type]*schema) *schema {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s, ok := seen[t]; ok {
		return s
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		s := &schema{}
		seen[t] = s
		s.elem = buildSchema(t.Elem(), seen)
		if s.elem == nil {
			return nil
		}
		return s
	case reflect.Struct:
		s := &schema{fields: map[string]*schema{}}
		seen[t] = s
		for _, f := range reflect.VisibleFields(t) {
			name, ok := jsonName(f)
			if !ok {
				continue
			}
			s.fields[name] = buildSchema(f.Type, seen)
			s.names = append(s.names, name)
		}
		return s
	}
	return nil
}

// jsonName is the member name encoding/json gives field f, and whether f
// is a member at all: exported, not tagged "-", and not an embedded
// struct whose fields are promoted instead.
func jsonName(f reflect.StructField) (string, bool) {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	name, _, _ := strings.Cut(tag, ",")
	if f.Anonymous {
		t := f.Type
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if name == "" && t.Kind() == reflect.Struct {
			return "", false
		}
	}
	if !f.IsExported() {
		return "", false
	}
	if name == "" {
		name = f.Name
	}
	return name, true
}
