// SPDX-License-Identifier: Apache-2.0

package sqlrow

import (
	"fmt"
	"slices"
	"strings"
)

// Certificate search. A search text matches a certificate when, folded to
// lower case, it begins one of its names ("three.example" matches
// three.example.com, and a whole name matches itself), ends one of its
// names ("example.com" matches every name under example.com, and the name
// itself), or begins its serial (hexadecimal). Each name of a certificate
// is stored twice in cert_search (both schemas): as searchForward and the
// name, and as searchReversed and the name reversed, so that each of the
// three is one range of a primary key, and a text that matches nothing
// reads no row of certificates.
const (
	searchForward  = ">"
	searchReversed = "<"
	// searchEnd sorts after every character of a name or serial (letters,
	// digits, '-', '.', '*', ':'): the range of the texts that begin with
	// p is [p, p+searchEnd).
	searchEnd = "\x7f"
)

// SearchKeys are the keys of cert_search of a certificate with names,
// each once.
func SearchKeys(names []string) []string {
	keys := make([]string, 0, 2*len(names))
	for _, n := range names {
		n = strings.ToLower(n)
		keys = append(keys, searchForward+n, searchReversed+reverse(n))
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// reverse returns s with its bytes in reverse order (names are ASCII).
func reverse(s string) string {
	b := []byte(s)
	slices.Reverse(b)
	return string(b)
}

// SearchDense is the number of candidates from which a search is dense
// (both stores probe: PostgreSQL's planner, too, sorts every candidate of
// a broad search):
// its matches are then found sooner by reading the certificates newest
// first and testing each, which stops after a page of matches (at most
// about PageLimit times the certificates over SearchDense rows), than by
// reading every candidate and sorting them.
const SearchDense = 5000

// SearchProbe is the query that counts the candidates of a search for
// text, up to SearchDense in each range: Inventory.Certificates takes
// whether it reached SearchDense. ok is false when there is nothing to
// probe: no search, or one that matches nothing.
func (in Inventory) SearchProbe(text string) (query string, args []any, ok bool) {
	if text == "" || !in.storable(text) {
		return "", nil, false
	}
	var b strings.Builder
	for i, r := range []string{"cert_search WHERE key", "cert_search WHERE key", "certificates WHERE serial"} {
		if i > 0 {
			b.WriteString(" + ")
		}
		col := r[strings.LastIndexByte(r, ' ')+1:]
		fmt.Fprintf(&b, "(SELECT count(*) FROM (SELECT 1 FROM %s >= $%d AND %s < $%d LIMIT %d) AS c%d)", r, 2*i+1, col, 2*i+2, SearchDense, i)
	}
	return "SELECT " + b.String(), searchRanges(text), true
}

// searchRanges are the bounds of the three ranges of a search for text:
// the names it begins, the names it ends, the serials it begins.
func searchRanges(text string) []any {
	q := strings.ToLower(text)
	fwd, rev := searchForward+q, searchReversed+reverse(q)
	return []any{fwd, fwd + searchEnd, rev, rev + searchEnd, q, q + searchEnd}
}

// searchCond is the condition of a certificate search for text: its
// serial is among those of the three ranges. A dense search instead tests
// each certificate the page reads, newest first, on its own names
// (name_set: the names joined by ","; names hold no ",") and serial, so
// that it stops after a page of matches without reading every candidate.
func (in Inventory) searchCond(w *where, text string, dense bool) {
	if dense {
		// The column itself in every term, so that PostgreSQL's planner
		// weighs the patterns by the column's statistics and reads the
		// newest certificates first.
		pat := likeEscape(strings.ToLower(text))
		like := " " + in.ILike + ` ? ESCAPE '\'`
		w.add(`(name_set`+like+` OR name_set`+like+` OR name_set`+like+` OR name_set`+like+` OR serial`+like+`)`,
			pat+"%", "%,"+pat+"%", "%"+pat, "%"+pat+",%", pat+"%")
		return
	}
	w.add(`serial IN (SELECT serial FROM cert_search WHERE key >= ? AND key < ?
		UNION SELECT serial FROM cert_search WHERE key >= ? AND key < ?
		UNION SELECT serial FROM certificates WHERE serial >= ? AND serial < ?)`, searchRanges(text)...)
}
