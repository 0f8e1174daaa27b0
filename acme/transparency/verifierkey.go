// SPDX-License-Identifier: Apache-2.0

package transparency

import (
	"fmt"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

// ParseVerifierKey reads the log's verifier key as NewNoteSigner writes
// it and monitors, witnesses and auditors are given it: a note verifier
// key, "name+hash+base64" (surrounding space ignored).
func ParseVerifierKey(vkey string) (note.Verifier, error) {
	vkey = strings.TrimSpace(vkey)
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return nil, fmt.Errorf("%q is not a note verifier key (name+hash+base64): %w", vkey, err)
	}
	return v, nil
}
