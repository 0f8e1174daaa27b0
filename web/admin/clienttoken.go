// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"fmt"
	"os"
	"strings"
)

// ReadTokenFile reads an admin token from the file at path (named by
// what, the flag or key that gave it), as CheckToken checks it.
func ReadTokenFile(path, what string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("the admin token (%s): %w", what, err)
	}
	return CheckToken(string(b), fmt.Sprintf("the admin token file %s (%s)", path, what))
}

// CheckToken trims a token of the whitespace around it, such as the
// newline an editor or echo adds, and checks that every byte is
// printable ASCII other than a space (RFC 6750's b64token is narrower
// still, and the server compares the whole string). An error names from,
// where the token came from, and the byte and line.
func CheckToken(raw, from string) (string, error) {
	tok := strings.TrimSpace(raw)
	if tok == "" {
		return "", fmt.Errorf("%s is empty", from)
	}
	lead := strings.Index(raw, tok)
	for i := 0; i < len(tok); i++ {
		if c := tok[i]; c <= ' ' || c > '~' {
			line := 1 + strings.Count(raw[:lead+i], "\n")
			return "", fmt.Errorf("%s: byte %d (line %d) is 0x%02x, which a token cannot hold: it must be one line of printable ASCII without spaces", from, lead+i+1, line, c)
		}
	}
	return tok, nil
}
