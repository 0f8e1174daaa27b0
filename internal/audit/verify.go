// SPDX-License-Identifier: Apache-2.0

package audit

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
)

// Report is the outcome of Verify.
type Report struct {
	Files, Events int
	// Continues is the "prev" of the first event when it is not "": the
	// files given continue a trail whose earlier files were not given.
	Continues string
}

// Break is the first place a chain does not hold.
type Break struct {
	File   string
	Line   int
	Reason string
}

func (b *Break) Error() string { return fmt.Sprintf("%s:%d: %s", b.File, b.Line, b.Reason) }

// Verify checks the chain of files, oldest first (a trail's rotated files
// and then its current one): every line's own hash, and that every event
// names the hash of the one before it. It returns a *Break at the first
// line that fails.
func Verify(files []string) (Report, error) {
	var rep Report
	prev, started := "", false
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return rep, err
		}
		rd := bufio.NewReader(f)
		for n := 1; ; n++ {
			line, err := rd.ReadBytes('\n')
			if errors.Is(err, io.EOF) && len(line) == 0 {
				break
			}
			if err != nil && !errors.Is(err, io.EOF) {
				f.Close()
				return rep, err
			}
			if line[len(line)-1] != '\n' {
				f.Close()
				return rep, &Break{name, n, "the line is torn (no newline): the process stopped while writing it; weir cuts it off at its next start"}
			}
			pl, perr := parseLine(line[:len(line)-1])
			if perr != nil {
				f.Close()
				return rep, &Break{name, n, perr.Error()}
			}
			if !started {
				rep.Continues, started = pl.Prev, true
			} else if pl.Prev != prev {
				f.Close()
				return rep, &Break{name, n, fmt.Sprintf("it names %s as the event before it, but that event's hash is %s: an event was removed, inserted or reordered before it",
					short(pl.Prev), short(prev))}
			}
			prev = pl.Hash
			rep.Events++
		}
		f.Close()
		rep.Files++
	}
	return rep, nil
}
