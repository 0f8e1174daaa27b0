// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"strings"
	"testing"
)

// TestTokenFile: surrounding whitespace is trimmed; an empty token or a
// byte a token cannot hold is an error naming the source, byte and line.
func TestTokenFile(t *testing.T) {
	for _, tc := range []struct{ raw, tok, err string }{
		{"abcdefghijklmnop\n", "abcdefghijklmnop", ""},
		{"  abcdefghijklmnop\r\n", "abcdefghijklmnop", ""},
		{"\n\n", "", "f is empty"},
		{"abc def\n", "", `f: byte 4 (line 1) is 0x20`},
		{"\nabc\xffdef", "", `f: byte 5 (line 2) is 0xff`},
		{"abc\ndef", "", `f: byte 4 (line 1) is 0x0a`},
	} {
		tok, err := CheckToken(tc.raw, "f")
		if tok != tc.tok || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("CheckToken(%q) = %q, %v; want %q, %q", tc.raw, tok, err, tc.tok, tc.err)
		}
	}
}
