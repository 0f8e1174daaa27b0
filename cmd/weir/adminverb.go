// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/weir-pki/weir/web/admin"
)

// The shape of an operator verb: its flags with the admin flags
// (newVerbFlags), its arguments (oneArg, or parseInterspersed and its own
// check), one request of the admin API, and the answer printed as JSON
// with --json or else as text (ask).

// newVerbFlags makes the flag set of one verb with the admin flags.
func newVerbFlags(name, usage, about string, stderr io.Writer) (*cmdFlags, *adminFlags) {
	fs := newFlagSet(name, usage, about, stderr)
	return fs, addAdminFlags(fs.FlagSet)
}

// oneArg parses a verb that takes exactly one positional argument and
// returns it, or the exit code as parseFlags does.
func oneArg(fs *cmdFlags, args []string, stdout, stderr io.Writer) (string, int, bool) {
	pos, code, ok := parseInterspersed(fs, args, stdout)
	if !ok {
		return "", code, false
	}
	if len(pos) != 1 {
		return "", usageError(fs, stderr, "takes one argument"), false
	}
	return pos[0], 0, true
}

// request is one request of the admin API: a GET of path with query
// when method is empty, else method with body.
type request struct {
	method, path string
	query        url.Values
	body         any
}

// get and post are the requests most verbs send.
func get(path string, q url.Values) request { return request{path: path, query: q} }
func post(path string, body any) request {
	return request{method: http.MethodPost, path: path, body: body}
}

// ask sends a verb's request with c (nil: the client the admin flags
// describe) and prints the answer, a T: indented JSON with --json, else
// with text. It returns the exit code; a failure is "weir VERB: error".
func ask[T any](ctx context.Context, fs *cmdFlags, af *adminFlags, c *admin.Client, r request, stdout, stderr io.Writer, text func(T)) int {
	var err error
	if c == nil {
		if c, err = af.client(stderr); err != nil {
			return fail(stderr, fs.Name(), err)
		}
	}
	var v T
	if r.method == "" {
		err = c.Get(ctx, r.path, r.query, &v)
	} else {
		err = c.Do(ctx, r.method, r.path, r.body, &v)
	}
	if err != nil {
		return fail(stderr, fs.Name(), err)
	}
	if *af.json {
		printJSON(stdout, v)
		return 0
	}
	text(v)
	return 0
}

// deleteVerb sends a DELETE of path, whose answer has no body, and
// prints done as JSON with --json, else format with a.
func deleteVerb(ctx context.Context, fs *cmdFlags, af *adminFlags, path string, done map[string]string, stdout, stderr io.Writer, format string, a ...any) int {
	c, err := af.client(stderr)
	if err == nil {
		err = c.Do(ctx, http.MethodDelete, path, nil, nil)
	}
	if err != nil {
		return fail(stderr, fs.Name(), err)
	}
	if *af.json {
		printJSON(stdout, done)
		return 0
	}
	fmt.Fprintf(stdout, format, a...)
	return 0
}
