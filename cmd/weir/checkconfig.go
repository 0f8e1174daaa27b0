package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// cmdCheckConfig parses a configuration file strictly and validates it,
// printing every problem, each naming its key, one per line.
func cmdCheckConfig(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check-config", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: weir check-config FILE\n\n"+
			"Parses FILE as weir serve would (unknown keys are errors) and validates it.\n"+
			"Prints \"FILE: ok\" and exits 0, or prints every problem, one per line, and\n"+
			"exits 1.\n")
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	path := fs.Arg(0)
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", path, err)
		return 1
	}
	problems := checkConfig(data)
	if len(problems) == 0 {
		fmt.Fprintf(stdout, "%s: ok\n", path)
		return 0
	}
	for _, p := range problems {
		fmt.Fprintf(stderr, "%s: %s\n", path, p)
	}
	return 1
}

// checkConfig returns the problems of a configuration file, one line each,
// each starting with the key it is about where one can be named: the
// decoding errors when it does not decode, else the validation errors.
func checkConfig(data []byte) []string {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return oneLine(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	keys := map[int][]string{}
	keyLines(&doc, "", keys)
	cfg := defaultConfig()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return oneLine(strings.TrimPrefix(err.Error(), "yaml: "))
		}
		var out []string
		for _, e := range te.Errors {
			out = append(out, decodeProblem(e, keys))
		}
		return out
	}
	var out []string
	for _, e := range flattenErrors(cfg.Validate()) {
		out = append(out, oneLine(e.Error())...)
	}
	return out
}

// decodeProblem names the key of a yaml.v3 type error ("line N: …") from
// the line it is on.
func decodeProblem(msg string, keys map[int][]string) string {
	rest, ok := strings.CutPrefix(msg, "line ")
	if !ok {
		return msg
	}
	num, text, ok := strings.Cut(rest, ": ")
	line, err := strconv.Atoi(num)
	if !ok || err != nil {
		return msg
	}
	ks := keys[line]
	if len(ks) == 0 {
		return fmt.Sprintf("line %d: %s", line, text)
	}
	key := ks[0]
	if len(ks) > 1 { // a flow mapping: the unknown key, or the block
		key = commonParent(ks)
		if f, ok := strings.CutPrefix(text, "field "); ok {
			f, _, _ = strings.Cut(f, " ")
			for _, k := range ks {
				if strings.HasSuffix(k, "."+f) || k == f {
					key = k
				}
			}
		}
	}
	return fmt.Sprintf("%s: %s (line %d)", key, text, line)
}

// keyLines records the dotted path of every mapping key and sequence item
// by the line it is on.
func keyLines(n *yaml.Node, path string, out map[int][]string) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			keyLines(c, path, out)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := k.Value
			if path != "" {
				p = path + "." + k.Value
			}
			out[k.Line] = append(out[k.Line], p)
			keyLines(v, p, out)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			if c.Kind == yaml.ScalarNode {
				out[c.Line] = append(out[c.Line], p)
			}
			keyLines(c, p, out)
		}
	}
}

// commonParent is the longest dotted prefix shared by keys.
func commonParent(keys []string) string {
	sorted := append([]string(nil), keys...)
	sort.Strings(sorted)
	first := strings.Split(sorted[0], ".")
	last := strings.Split(sorted[len(sorted)-1], ".")
	n := 0
	for n < len(first) && n < len(last) && first[n] == last[n] {
		n++
	}
	if n == 0 {
		return strings.Join(keys, ", ")
	}
	return strings.Join(first[:n], ".")
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
