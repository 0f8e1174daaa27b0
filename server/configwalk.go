// SPDX-License-Identifier: Apache-2.0

package server

import (
	"encoding"
	"fmt"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// configWalk checks a parsed YAML tree against the Go type it will be
// decoded into, as yaml.v3 would decode it, and collects every problem in
// one pass: unknown keys, keys set twice, values of the wrong shape or
// type. It builds a clean copy of the tree without the bad entries, so
// that what is valid can still be decoded and validated: a bad value is
// left at its default rather than hiding the problems of the others.
//
// The walk follows the type by reflection over the yaml tags, so a new
// key is known to it as soon as it has a field.
type configWalk struct {
	problems []configProblem
	// dropped are the paths of values left at their default because
	// they had a problem; a validation error about them would only
	// repeat it.
	dropped []string
	// anchors remembers each anchored node walked as a type, so an alias
	// costs no second walk (and cannot recurse for ever).
	anchors map[walkKey]*walkResult
}

type walkKey struct {
	n *yaml.Node
	t reflect.Type
}

type walkResult struct {
	clean *yaml.Node
	ok    bool
	busy  bool // being walked: an alias to it refers to itself
	path  string
}

var (
	durationType        = reflect.TypeFor[time.Duration]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func (w *configWalk) problem(line int, path, format string, args ...any) {
	w.problems = append(w.problems, configProblem{Line: line, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// walk checks n as a value of type t at path and returns its clean copy;
// ok is false when n cannot be decoded as t at all, and the caller then
// leaves it out.
func (w *configWalk) walk(n *yaml.Node, t reflect.Type, path string) (clean *yaml.Node, ok bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode {
		return w.alias(n, t, path)
	}
	if n.Anchor == "" {
		return w.value(n, t, path)
	}
	key := walkKey{n, t}
	if r, seen := w.anchors[key]; seen {
		return r.clean, r.ok
	}
	r := &walkResult{busy: true, path: path}
	if w.anchors == nil {
		w.anchors = map[walkKey]*walkResult{}
	}
	w.anchors[key] = r
	r.clean, r.ok = w.value(n, t, path)
	r.busy = false
	return r.clean, r.ok
}

// alias walks the anchored node an alias names, once per type.
func (w *configWalk) alias(n *yaml.Node, t reflect.Type, path string) (*yaml.Node, bool) {
	target := n.Alias
	if target == nil {
		w.problem(n.Line, path, "*%s names no anchor", n.Value)
		return nil, false
	}
	if r := w.anchors[walkKey{target, t}]; r != nil {
		switch {
		case r.busy:
			w.problem(n.Line, path, "*%s refers to the value that contains it", n.Value)
			w.dropped = append(w.dropped, path)
			return nil, false
		case !r.ok:
			w.problem(n.Line, path, "*%s refers to a value with a problem (at %s)", n.Value, orTop(r.path))
			w.dropped = append(w.dropped, path)
			return nil, false
		}
	}
	clean, ok := w.walk(target, t, path)
	if !ok {
		return nil, false
	}
	c := *n
	c.Alias = clean
	return &c, true
}

// value walks a node that is not an alias.
func (w *configWalk) value(n *yaml.Node, t reflect.Type, path string) (*yaml.Node, bool) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return n, true // yaml.v3 leaves the default (or an empty list)
	}
	isText := reflect.PointerTo(t).Implements(textUnmarshalerType)
	switch {
	case t.Kind() == reflect.Struct && !isText:
		return w.mapping(n, t, path, newStructFields(t))
	case t.Kind() == reflect.Map && !isText:
		return w.mapping(n, t, path, nil)
	case (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && !isText:
		if n.Kind != yaml.SequenceNode {
			return w.wrongShape(n, t, path)
		}
		c := *n
		c.Content = make([]*yaml.Node, len(n.Content))
		ok := true
		for i, item := range n.Content {
			var itemOK bool
			// A list with a bad item keeps its default, but every item
			// is still looked at.
			c.Content[i], itemOK = w.walk(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
			ok = ok && itemOK
		}
		if !ok {
			w.dropped = append(w.dropped, path)
		}
		return &c, ok
	case t.Kind() == reflect.Interface:
		return n, true
	}
	if n.Kind != yaml.ScalarNode {
		return w.wrongShape(n, t, path)
	}
	if err := n.Decode(reflect.New(t).Interface()); err != nil {
		w.problem(n.Line, path, "%s", scalarMismatch(n.Value, t, err))
		w.dropped = append(w.dropped, path)
		return nil, false
	}
	return n, true
}

// mapping walks a mapping node decoded into a struct (fields not nil: its
// keys) or a Go map (fields nil: any key of the map's key type).
func (w *configWalk) mapping(n *yaml.Node, t reflect.Type, path string, fields *structFields) (*yaml.Node, bool) {
	if n.Kind != yaml.MappingNode {
		return w.wrongShape(n, t, path)
	}
	c := *n
	c.Content = nil
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Value == "<<" && (k.Tag == "" || k.Tag == "!" || k.ShortTag() == "!!merge") {
			// A merge key (<<: *defaults, or a list of them) brings in
			// other mappings' keys, checked as this one's.
			if cv, ok := w.merge(v, t, path); ok {
				c.Content = append(c.Content, k, cv)
			}
			continue
		}
		if k.Kind != yaml.ScalarNode {
			w.problem(k.Line, path, "a key must be a name, not %s", shapeOf(k))
			continue
		}
		name := k.Value
		if err := k.Decode(&name); err != nil {
			name = k.Value
		}
		p := joinPath(path, name)
		if first, dup := seen[k.Value]; dup {
			w.problem(k.Line, p, "is set twice (first on line %d)", first)
			continue
		}
		seen[k.Value] = k.Line
		var vt reflect.Type
		switch {
		case fields == nil:
			if kt := t.Key(); kt.Kind() != reflect.String || reflect.PointerTo(kt).Implements(textUnmarshalerType) {
				if err := k.Decode(reflect.New(kt).Interface()); err != nil {
					w.problem(k.Line, p, "%s", scalarMismatch(k.Value, kt, err))
					continue
				}
			}
			vt = t.Elem()
		case fields.byName[name] != nil:
			vt = fields.byName[name]
		case fields.inline != nil:
			vt = fields.inline
		default:
			w.problem(k.Line, p, "%s", unknownKey(name, path, fields.names))
			continue
		}
		if cv, ok := w.walk(v, vt, p); ok {
			c.Content = append(c.Content, k, cv)
		}
	}
	return &c, true
}

// merge walks the value of a merge key: a mapping, or a list of them.
func (w *configWalk) merge(v *yaml.Node, t reflect.Type, path string) (*yaml.Node, bool) {
	if v.Kind != yaml.SequenceNode {
		return w.walk(v, t, path)
	}
	c := *v
	c.Content = make([]*yaml.Node, len(v.Content))
	ok := true
	for i, item := range v.Content {
		var itemOK bool
		c.Content[i], itemOK = w.walk(item, t, path)
		ok = ok && itemOK
	}
	return &c, ok
}

// wrongShape reports a list, mapping or single value where another shape
// belongs.
func (w *configWalk) wrongShape(n *yaml.Node, t reflect.Type, path string) (*yaml.Node, bool) {
	want := nounOf(t)
	switch {
	case path == "":
		w.problem(n.Line, "", "the file must be a mapping of keys (data-dir:, server:, …), not %s", shapeOf(n))
	case t.Kind() == reflect.Slice && n.Kind == yaml.ScalarNode:
		w.problem(n.Line, path, "must be a list, not the single value %q; write it as [%s], or one \"- item\" line per item", n.Value, n.Value)
	default:
		w.problem(n.Line, path, "must be %s, not %s", want, shapeOf(n))
	}
	w.dropped = append(w.dropped, path)
	return nil, false
}

// structFields are the keys of a struct as yaml.v3 reads them.
type structFields struct {
	byName map[string]reflect.Type
	names  []string     // in field order, for messages
	inline reflect.Type // the value type of an ",inline" map: any other key
}

func newStructFields(t reflect.Type) *structFields {
	f := &structFields{byName: map[string]reflect.Type{}}
	f.add(t)
	return f
}

// add follows yaml.v3's rules: the yaml tag names the key ("-" skips the
// field), else the lower-cased field name; ",inline" merges a struct's
// keys or takes every other key into a map.
func (f *structFields) add(t reflect.Type) {
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.PkgPath != "" && !sf.Anonymous {
			continue
		}
		tag := sf.Tag.Get("yaml")
		if tag == "-" {
			continue
		}
		name, flags, _ := strings.Cut(tag, ",")
		if strings.Contains(","+flags+",", ",inline,") {
			ft := sf.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Map {
				f.inline = ft.Elem()
			} else {
				f.add(ft)
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(sf.Name)
		}
		f.byName[name] = sf.Type
		f.names = append(f.names, name)
	}
}

// unknownKey says what a key that is not one of names should be: the
// nearest known key when one is a slip of the keyboard away, else the
// list of the keys that are.
func unknownKey(key, parent string, names []string) string {
	norm := strings.NewReplacer("_", "-", " ", "-").Replace(strings.ToLower(key))
	best, bestD := "", -1
	for _, n := range names {
		if d := editDistance(norm, n); bestD < 0 || d < bestD {
			best, bestD = n, d
		}
	}
	if best != "" && bestD <= max(1, min(2, len(best)/4)) {
		return fmt.Sprintf("unknown key; did you mean %s?", best)
	}
	where := parent
	if parent == "" {
		where = "the top level"
	}
	return fmt.Sprintf("unknown key; %s takes %s", where, strings.Join(names, ", "))
}

// editDistance is the optimal string alignment distance of a and b:
// insertions, deletions, substitutions and swaps of two neighbours each
// count one.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return max(len(a), len(b)) // far apart, and no quadratic work
	}
	prev2, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// scalarMismatch says, in the operator's words, why value is not a t.
func scalarMismatch(value string, t reflect.Type, err error) string {
	if t == durationType {
		if _, numErr := strconv.ParseFloat(value, 64); numErr == nil {
			return fmt.Sprintf("%q is not a duration: give it a unit (e.g. 10s, 5m, 2h)", value)
		}
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if t == durationType {
			break
		}
		neg := strings.HasPrefix(value, "-")
		unsigned := t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64
		if _, isInt := new(big.Int).SetString(strings.ReplaceAll(value, "_", ""), 0); isInt && !(neg && unsigned) {
			if neg {
				return fmt.Sprintf("%s is too small", value)
			}
			return fmt.Sprintf("%s is too large", value)
		}
	}
	if reflect.PointerTo(t).Implements(textUnmarshalerType) {
		if _, isTypeErr := err.(*yaml.TypeError); !isTypeErr {
			return fmt.Sprintf("%q is not valid: %v", value, err)
		}
	}
	return fmt.Sprintf("%q is not %s", value, nounOf(t))
}

// nounOf names what a value of type t is, as the file would write it.
func nounOf(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == durationType {
		return "a duration (e.g. 10s, 5m, 2h)"
	}
	if reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return "a single value"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number, 0 or more"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a single value"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Struct:
		return "a mapping of keys"
	case reflect.Map:
		return "a mapping of names to values"
	}
	return "a value of another kind"
}

// shapeOf names what a node is, for "must be X, not Y".
func shapeOf(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.AliasNode:
		return "*" + n.Value
	}
	return fmt.Sprintf("the single value %q", n.Value)
}

// joinPath is the key path of key under parent.
func joinPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func orTop(path string) string {
	if path == "" {
		return "the top level"
	}
	return path
}
