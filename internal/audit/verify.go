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
	// First and Last are the seq of the first and the last event.
	First, Last uint64
	// Continues is the "prev" of the first event when it is not "": the
	// files given continue a trail whose earlier files were not given
	// (VerifyOptions.From).
	Continues string
}

// VerifyOptions says where the files given begin.
type VerifyOptions struct {
	// From is the seq of the first event given, when the files begin after
	// the trail's first event on purpose (its earlier files archived
	// elsewhere). 0: they begin at the trail's head, seq 1, which names no
	// event before it.
	From uint64
}

// Break is the first place a chain does not hold.
type Break struct {
	File   string
	Line   int
	Reason string
}

func (b *Break) Error() string { return fmt.Sprintf("%s:%d: %s", b.File, b.Line, b.Reason) }

// Verify checks the chain of files, oldest first (a trail's rotated files
// and then its current one): every line's own hash, that every event
// names the hash of the one before it, that the seq numbers follow each
// other without a gap or a repeat (an event removed, or duplicated, with
// the later hashes recomputed keeps the chain but not the sequence), and
// that the files begin where opts says: at the trail's head unless told
// otherwise, so that events removed from the start are not taken for a
// trail that continues. It returns a *Break at the first line that fails.
//
// A chain cannot show that events were cut off at the end, nor a trail
// rewritten whole with a new chain: that takes a record kept elsewhere
// (docs/operations.md, "Audit trail").
func Verify(files []string, opts VerifyOptions) (Report, error) {
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
				if reason := opts.head(pl); reason != "" {
					f.Close()
					return rep, &Break{name, n, reason}
				}
				rep.Continues, rep.First, started = pl.Prev, pl.Seq, true
			} else if pl.Prev != prev {
				f.Close()
				return rep, &Break{name, n, fmt.Sprintf("it names %s as the event before it, but that event's hash is %s: an event was removed, inserted or reordered before it",
					short(pl.Prev), short(prev))}
			} else if reason := sequence(rep.Last, pl.Seq); reason != "" {
				f.Close()
				return rep, &Break{name, n, reason}
			}
			prev, rep.Last = pl.Hash, pl.Seq
			rep.Events++
		}
		f.Close()
		rep.Files++
	}
	return rep, nil
}

// head is why the first event given, pl, is not where the files should
// begin; "" when it is.
func (o VerifyOptions) head(pl parsedLine) string {
	switch {
	case o.From == 0 && (pl.Seq != 1 || pl.Prev != ""):
		return fmt.Sprintf("the trail's head is missing: the first event given is seq %d, which continues from an event with hash %s. "+
			"The events before it were removed, or the earlier files were not given: give them, oldest first, or -from %d if they are archived elsewhere",
			pl.Seq, short(pl.Prev), pl.Seq)
	case o.From != 0 && pl.Seq != o.From:
		return fmt.Sprintf("the first event given is seq %d, not seq %d where the files were said to begin", pl.Seq, o.From)
	case o.From == 1 && pl.Prev != "":
		return fmt.Sprintf("the first event, seq 1, names an event before it (hash %s): the trail's head was rewritten", short(pl.Prev))
	}
	return ""
}

// sequence is why seq cannot follow last; "" when it can.
func sequence(last, seq uint64) string {
	switch {
	case seq == last+1:
		return ""
	case seq <= last:
		return fmt.Sprintf("its seq %d does not follow the seq %d before it: an event was duplicated or reordered, and the chain recomputed after it", seq, last)
	default:
		return fmt.Sprintf("its seq %d jumps from %d: %d events were removed before it, and the chain recomputed after them", seq, last, seq-last-1)
	}
}
