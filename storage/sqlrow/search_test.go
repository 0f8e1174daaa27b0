// SPDX-License-Identifier: Apache-2.0

package sqlrow

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/weir-pki/weir/acme"
)

// TestSearchKeys: each name once forward and once reversed, in lower
// case, without duplicates.
func TestSearchKeys(t *testing.T) {
	got := SearchKeys([]string{"A.example.com", "a.example.com", "*.b.org"})
	want := []string{"<gro.b.*", "<moc.elpmaxe.a", ">*.b.org", ">a.example.com"}
	if !slices.Equal(got, want) {
		t.Errorf("SearchKeys = %q, want %q", got, want)
	}
}

// TestSearchRanges: a search is the range of the names it begins, of the
// names it ends and of the serials it begins; every key of a name it
// matches is in one of them, and no key of a name it does not match.
func TestSearchRanges(t *testing.T) {
	r := searchRanges("Example.COM")
	want := []any{">example.com", ">example.com\x7f", "<moc.elpmaxe", "<moc.elpmaxe\x7f", "example.com", "example.com\x7f"}
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("searchRanges = %q, want %q", r, want)
	}
	in := func(k string) bool {
		return (k >= r[0].(string) && k < r[1].(string)) || (k >= r[2].(string) && k < r[3].(string))
	}
	for name, match := range map[string]bool{
		"example.com": true, "a.example.com": true, "*.example.com": true, "example.com.au": true,
		"example.co": false, "xexample.org": false, "b.example.org": false,
	} {
		if got := slices.ContainsFunc(SearchKeys([]string{name}), in); got != match {
			t.Errorf("%s: matched %v, want %v", name, got, match)
		}
	}
}

// TestSearchQuery: a dense search tests each certificate's names; a
// search SQLite or PostgreSQL cannot compare is not probed.
func TestSearchQuery(t *testing.T) {
	in := Inventory{Driver: "sqlite", ILike: "LIKE"}
	for _, dense := range []bool{false, true} {
		p, ok, err := in.Certificates(acme.CertQuery{Search: "x.org"}, "serial", dense)
		if !ok || err != nil || strings.Contains(p.SQL, "name_set") != dense || (!dense && !reflect.DeepEqual(p.Args[:6], searchRanges("x.org"))) {
			t.Errorf("dense %v: %s %v (%v, %v)", dense, p.SQL, p.Args, ok, err)
		}
	}
	if q, args, ok := in.SearchProbe("x.org"); !ok || strings.Count(q, "LIMIT 5000") != 3 || len(args) != 6 {
		t.Errorf("SearchProbe = %s %v %v", q, args, ok)
	}
	pg := Inventory{Driver: "postgres", Storable: func(s string) bool { return !strings.ContainsRune(s, 0) }}
	if _, _, ok := pg.SearchProbe("a\x00"); ok {
		t.Error("a probe PostgreSQL cannot compare")
	}
	if _, _, ok := pg.SearchProbe(""); ok {
		t.Error("a probe of no search")
	}
}
