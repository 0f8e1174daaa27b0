// SPDX-License-Identifier: Apache-2.0

package transparency

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// Checkpoint is a C2SP tlog-checkpoint: the log's origin, the size of its
// tree and the tree's root hash, with optional extension lines.
type Checkpoint struct {
	// Origin names the log, unique among logs (e.g. "ca.example.internal/log").
	Origin string
	Size   int64
	Hash   tlog.Hash
	// Extensions are further lines, each non-empty; none by default.
	Extensions []string
}

// String is the checkpoint's note text: every line ends with a newline.
func (c Checkpoint) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%d\n%s\n", c.Origin, c.Size, base64.StdEncoding.EncodeToString(c.Hash[:]))
	for _, e := range c.Extensions {
		b.WriteString(e)
		b.WriteByte('\n')
	}
	return b.String()
}

// ParseCheckpoint reads the text of a checkpoint (a note's text, without
// its signatures).
func ParseCheckpoint(text string) (Checkpoint, error) {
	if !strings.HasSuffix(text, "\n") || !utf8.ValidString(text) {
		return Checkpoint{}, errors.New("checkpoint: not UTF-8 text ending with a newline")
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) < 3 {
		return Checkpoint{}, fmt.Errorf("checkpoint: %d lines, want an origin, a size and a hash", len(lines))
	}
	c := Checkpoint{Origin: lines[0]}
	if c.Origin == "" {
		return Checkpoint{}, errors.New("checkpoint: empty origin line")
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || size < 0 || lines[1] != strconv.FormatInt(size, 10) {
		return Checkpoint{}, fmt.Errorf("checkpoint: size %q is not a decimal tree size", lines[1])
	}
	c.Size = size
	h, err := base64.StdEncoding.Strict().DecodeString(lines[2])
	if err != nil || len(h) != tlog.HashSize {
		return Checkpoint{}, fmt.Errorf("checkpoint: root hash %q is not %d bytes of base64", lines[2], tlog.HashSize)
	}
	copy(c.Hash[:], h)
	for _, e := range lines[3:] {
		if e == "" {
			return Checkpoint{}, errors.New("checkpoint: an empty extension line")
		}
		c.Extensions = append(c.Extensions, e)
	}
	return c, nil
}

// SignCheckpoint signs c as a note with the log's key and any witnesses'.
func SignCheckpoint(c Checkpoint, signers ...note.Signer) ([]byte, error) {
	return note.Sign(&note.Note{Text: c.String()}, signers...)
}

// OpenCheckpoint verifies a signed checkpoint with the log's verifier key
// and returns it. The note must carry a good signature of that key; the
// signatures of other keys are not checked here (a witness's are, by
// whoever knows its key).
func OpenCheckpoint(msg []byte, logKey note.Verifier) (Checkpoint, error) {
	n, err := note.Open(msg, note.VerifierList(logKey))
	if err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint: %w", err)
	}
	c, err := ParseCheckpoint(n.Text)
	if err != nil {
		return Checkpoint{}, err
	}
	if c.Origin != logKey.Name() {
		return Checkpoint{}, fmt.Errorf("checkpoint: origin %q is not the log key's name %q", c.Origin, logKey.Name())
	}
	return c, nil
}
