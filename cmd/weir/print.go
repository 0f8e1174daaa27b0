// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// The printing of the operator commands' answers: JSON for --json, else
// tables and values.

// newTable starts a table on w, aligned in columns, with its header line
// (columns separated by tabs, as the rows); Flush ends it.
func newTable(w io.Writer, header string) *tabwriter.Writer {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if header != "" {
		fmt.Fprintln(tw, header)
	}
	return tw
}

// printJSON writes v indented.
func printJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// fmtTime prints a time for tables: RFC 3339 in UTC, with the distance
// from now.
func fmtTime(t *time.Time, now time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	d := t.Sub(now).Round(time.Second)
	switch {
	case d > 0:
		return fmt.Sprintf("%s (in %s)", t.UTC().Format(time.RFC3339), d)
	case d < 0:
		return fmt.Sprintf("%s (%s ago)", t.UTC().Format(time.RFC3339), -d)
	}
	return t.UTC().Format(time.RFC3339) + " (now)"
}

// joinOrDash is the elements of s joined by ", ", or "-" when s is empty.
func joinOrDash(s []string) string { return orDash(strings.Join(s, ", ")) }

// orDash is s, or its first alternative (else "-") when s is empty.
func orDash(s string, alt ...string) string {
	switch {
	case s != "":
		return s
	case len(alt) > 0:
		return alt[0]
	}
	return "-"
}
