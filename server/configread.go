// SPDX-License-Identifier: Apache-2.0

package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// configProblem is one problem of a configuration file.
type configProblem struct {
	// Line is the file's line the problem is on (from 1); 0 when the
	// value is a default the file does not set.
	Line int
	// Path is the key path, as in rate-limiting.overrides[2].burst; ""
	// when the problem is about the file as a whole.
	Path string
	// Msg says what is wrong, in the operator's words.
	Msg string
}

// format writes the problem as "FILE:LINE: key.path: message", leaving out
// what it does not have; with no file name, "line LINE: …".
func (p configProblem) format(file string) string {
	var b strings.Builder
	switch {
	case file != "" && p.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", file, p.Line)
	case file != "":
		b.WriteString(file + ": ")
	case p.Line > 0:
		fmt.Fprintf(&b, "line %d: ", p.Line)
	}
	if p.Path != "" {
		b.WriteString(p.Path + ": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// ConfigProblems is every problem of one configuration file, sorted by
// line: the error of ParseConfig and LoadConfig. Its Error is what weir
// check-config prints, one problem per line (Lines).
type ConfigProblems struct {
	file string
	list []configProblem
}

// Error is the problems' lines, joined by line breaks.
func (e *ConfigProblems) Error() string { return strings.Join(e.Lines(), "\n") }

// Lines are the problems, one line each: "FILE:LINE: key.path: message",
// leaving out what a problem does not have.
func (e *ConfigProblems) Lines() []string {
	out := make([]string, len(e.list))
	for i, p := range e.list {
		out[i] = p.format(e.file)
	}
	return out
}

// readConfig reads data, the YAML text of the file named file, into out,
// a pointer to a struct that holds the defaults, then runs validate, which
// checks what out holds. It returns nil, or a *ConfigProblems with every
// problem of the file found in one pass: YAML syntax, unknown keys (with
// the nearest known one), keys set twice, values of the wrong type, and
// validate's errors, each mapped to the line of its key. validate reports
// problems as errors.Join of "<key path>: <message>" errors.
//
// A value with a problem is left at its default, so that the rest of the
// file is still decoded and validated.
func readConfig(file string, data []byte, out any, validate func() error) error {
	t := reflect.TypeOf(out)
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("readConfig: out must point to a struct, not %T", out))
	}
	root, problems := parseYAML(data)
	var w configWalk
	if root != nil {
		clean, ok := w.walk(root, t.Elem(), "")
		problems = append(problems, w.problems...)
		if ok {
			problems = append(problems, decodeClean(clean, out)...)
		}
	}
	// A file that does not parse has nothing more to check; an empty one
	// is the defaults, checked as they are.
	if len(problems) == 0 || root != nil {
		problems = append(problems, validateProblems(validate(), root, t.Elem(), w.dropped)...)
	}
	if len(problems) == 0 {
		return nil
	}
	// By line, a default's problems (no line) last; the order within a
	// line is the order found.
	slices.SortStableFunc(problems, func(a, b configProblem) int {
		if (a.Line == 0) != (b.Line == 0) {
			return b.Line - a.Line // the zero after
		}
		return a.Line - b.Line
	})
	return &ConfigProblems{file: file, list: problems}
}

// parseYAML parses the file's one document. A file with no document is
// all defaults (root nil); a file that is not YAML has one problem.
func parseYAML(data []byte) (*yaml.Node, []configProblem) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		return nil, nil
	} else if err != nil {
		return nil, []configProblem{syntaxProblem(err, data)}
	}
	var problems []configProblem
	var next yaml.Node
	if err := dec.Decode(&next); err != nil && !errors.Is(err, io.EOF) {
		problems = append(problems, syntaxProblem(err, data))
	} else if err == nil && len(next.Content) > 0 && next.Content[0].ShortTag() != "!!null" {
		problems = append(problems, configProblem{Line: next.Content[0].Line,
			Msg: "a second YAML document starts here (after ---); weir reads one, so put every key in it"})
	}
	if len(doc.Content) == 0 {
		return nil, problems
	}
	return doc.Content[0], problems
}

// syntaxProblem places a YAML syntax error on its line. yaml.v3 leaves
// the line out of a problem on the first line and of a problem with the
// bytes (encoding, control characters); those are found here.
func syntaxProblem(err error, data []byte) configProblem {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, text, ok := strings.Cut(rest, ": "); ok {
			if n, err := strconv.Atoi(num); err == nil {
				line, msg = n, text
			}
		}
	}
	if parserProblems[msg] {
		// yaml.v3 numbers the lines of its parser's errors from 0 (and
		// leaves out 0), those of its scanner's from 1.
		line++
	} else if line == 0 {
		line = troubleLine(data, msg)
	}
	// The end of the stream is past the last line: the problem is on it.
	line = min(line, max(1, len(yamlLines(bytes.TrimRight(data, " \t\r\n")))))
	if strings.Contains(msg, "tab character") || strings.Contains(msg, "cannot start any token") {
		if tab := tabIndented(data, line); tab > 0 {
			line, msg = tab, "a tab indents this line; YAML indents with spaces only"
		}
	}
	return configProblem{Line: line, Msg: msg}
}

// parserProblems are the messages of yaml.v3's parser (parserc.go), as
// opposed to its scanner's.
var parserProblems = map[string]bool{
	"did not find expected ',' or ']'": true, "did not find expected ',' or '}'": true,
	"did not find expected <document start>": true, "did not find expected <stream-start>": true,
	"did not find expected '-' indicator": true, "did not find expected key": true,
	"did not find expected node content": true, "found duplicate %YAML directive": true,
	"found duplicate %TAG directive": true, "found incompatible YAML document": true,
	"found undefined tag handle": true,
}

// troubleLine finds the line of a syntax error yaml.v3 gave no line: the
// first byte that is not text, the first use of an unknown anchor, else
// the first line (the one yaml.v3 does not number).
func troubleLine(data []byte, msg string) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 || r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f {
			return len(yamlLines(data[:i]))
		}
		i += size
	}
	if _, name, ok := strings.Cut(msg, "unknown anchor '"); ok {
		name, _, _ = strings.Cut(name, "'")
		if i := bytes.Index(data, []byte("*"+name)); i >= 0 {
			return len(yamlLines(data[:i]))
		}
	}
	return 1
}

// tabIndented is the first line from line n on (within two) that has a
// tab in its indentation, 0 if none: yaml.v3 may place the error on the
// line before.
func tabIndented(data []byte, n int) int {
	lines := yamlLines(data)
	for i := max(n, 1); i <= min(n+2, len(lines)); i++ {
		l := lines[i-1]
		if bytes.IndexByte(l[:len(l)-len(bytes.TrimLeft(l, " \t"))], '\t') >= 0 {
			return i
		}
	}
	return 0
}

// yamlLines splits data into lines as YAML counts them: a line ends at
// LF, CR, CR LF, NEL, LS or PS (YAML 1.1 §5.4).
func yamlLines(data []byte) [][]byte {
	var lines [][]byte
	start := 0
	for i := 0; i < len(data); {
		brk := 0
		switch {
		case data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n':
			brk = 2
		case data[i] == '\r' || data[i] == '\n':
			brk = 1
		case bytes.HasPrefix(data[i:], []byte("\u0085")), bytes.HasPrefix(data[i:], []byte("\u2028")), bytes.HasPrefix(data[i:], []byte("\u2029")):
			_, brk = utf8.DecodeRune(data[i:])
		}
		if brk == 0 {
			i++
			continue
		}
		lines = append(lines, data[start:i])
		i += brk
		start = i
	}
	return append(lines, data[start:])
}

// decodeClean decodes the checked tree into out. The walk refuses what
// yaml.v3 would, so an error here is one the walk does not foresee; it
// is reported rather than lost.
func decodeClean(clean *yaml.Node, out any) []configProblem {
	err := clean.Decode(out)
	if err == nil {
		return nil
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return []configProblem{{Line: clean.Line, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}}
	}
	var problems []configProblem
	for _, e := range te.Errors {
		p := configProblem{Line: clean.Line, Msg: e}
		if rest, ok := strings.CutPrefix(e, "line "); ok {
			if num, text, ok := strings.Cut(rest, ": "); ok {
				if n, err := strconv.Atoi(num); err == nil && n > 0 {
					p.Line, p.Msg = n, text
				}
			}
		}
		problems = append(problems, p)
	}
	return problems
}

// validateProblems turns validate's "<key path>: <message>" errors into
// problems on the line of their key: the key's own line when the file
// sets it, else the line of the nearest enclosing key it sets, else none.
// A key left at its default because its value had a problem is not
// reported again.
func validateProblems(err error, root *yaml.Node, t reflect.Type, dropped []string) []configProblem {
	top := newStructFields(t).byName
	var problems []configProblem
	for _, e := range flattenErrors(err) {
		for _, text := range oneLine(e.Error()) {
			p := configProblem{Msg: text}
			if path, msg, ok := strings.Cut(text, ": "); ok {
				if first := strings.FieldsFunc(path, isPathSep); len(first) > 0 && top[first[0]] != nil {
					p.Path, p.Msg = path, msg
				}
			}
			if p.Path != "" && slices.ContainsFunc(dropped, func(d string) bool { return within(p.Path, d) }) {
				continue
			}
			p.Line = locate(root, p.Path)
			problems = append(problems, p)
		}
	}
	return problems
}

func isPathSep(r rune) bool { return r == '.' || r == '[' }

// within reports whether path is key or a key under it.
func within(path, key string) bool {
	return path == key || key == "" || strings.HasPrefix(path, key+".") || strings.HasPrefix(path, key+"[")
}

// locate is the line of the key at path, or of the nearest enclosing key
// the file sets; 0 when it sets none. A mapping key may hold dots (a
// profile name), so each step takes the longest key that fits.
func locate(root *yaml.Node, path string) int {
	n, rest, line := root, path, 0
	for steps := 0; n != nil && rest != "" && steps < 1000; steps++ {
		for hops := 0; n.Kind == yaml.AliasNode && n.Alias != nil && hops < 100; hops++ {
			n = n.Alias
		}
		switch {
		case n.Kind == yaml.MappingNode:
			var k, v *yaml.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				c := n.Content[i]
				if c.Kind == yaml.ScalarNode && c.Value != "" && within(rest, c.Value) && (k == nil || len(c.Value) > len(k.Value)) {
					k, v = c, n.Content[i+1]
				}
			}
			if k == nil {
				return line
			}
			line, n, rest = k.Line, v, strings.TrimPrefix(rest[len(k.Value):], ".")
		case n.Kind == yaml.SequenceNode && strings.HasPrefix(rest, "["):
			num, after, ok := strings.Cut(rest[1:], "]")
			i, err := strconv.Atoi(num)
			if !ok || err != nil || i < 0 || i >= len(n.Content) {
				return line
			}
			n, rest = n.Content[i], strings.TrimPrefix(after, ".")
			line = n.Line
		default:
			return line
		}
	}
	return line
}

// flattenErrors lists the leaves of a tree of joined errors.
func flattenErrors(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flattenErrors(e)...)
		}
		return out
	}
	return []error{err}
}

// oneLine splits a multi-line message into its non-empty lines.
func oneLine(msg string) []string {
	var out []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}
