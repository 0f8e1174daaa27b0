// SPDX-License-Identifier: Apache-2.0

package audit

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Copying a trail while a Sink writes it (weir backup). A rotated file
// never changes; the current one only grows by whole fsynced lines, so
// its complete lines at any instant are a prefix of the chain. A copy
// takes that prefix and leaves out a line being written.

// Trails groups files, any mix of trails' current and rotated files (a
// glob over replicas' names, say), by trail: the current file's path
// maps to the trail's files, its rotated ones oldest first and then the
// current one when it exists. A rotated file whose current file is gone
// still lists under that name.
func Trails(files []string) map[string][]string {
	trails := map[string][]string{}
	for _, f := range files {
		cur := f
		if c, ok := currentOf(f); ok {
			cur = c
		}
		if _, seen := trails[cur]; seen {
			continue
		}
		list := RotatedFiles(cur)
		if st, err := os.Stat(cur); err == nil && st.Mode().IsRegular() {
			list = append(list, cur)
		}
		if len(list) > 0 {
			trails[cur] = list
		}
	}
	return trails
}

// currentOf is the current file of the trail whose rotated file is name
// (rotatedName), and whether name is one.
func currentOf(name string) (string, bool) {
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	n := len(rotatedLayout)
	if len(stem) < n+2 || stem[len(stem)-n-1] != '-' {
		return "", false
	}
	if _, err := time.Parse(rotatedLayout, stem[len(stem)-n:]); err != nil {
		return "", false
	}
	return stem[:len(stem)-n-1] + ext, true
}

// CopyComplete copies the complete lines of the trail file src, those
// ending in a newline, to dst (a new file, mode 0600, synced), leaving
// out a last line that is still being written, and returns how many
// lines it copied.
func CopyComplete(src, dst string) (int, error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return 0, err
	}
	last, complete, err := lastLine(in, st.Size())
	if err != nil {
		return 0, fmt.Errorf("%s: %w", src, err)
	}
	size := st.Size()
	if !complete {
		size -= int64(len(last))
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return 0, err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	lines := &lineCounter{w: out}
	_, err = io.Copy(lines, io.NewSectionReader(in, 0, size))
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
		return 0, fmt.Errorf("copying %s: %w", src, err)
	}
	return lines.n, nil
}

// lineCounter counts the newlines written through it.
type lineCounter struct {
	w io.Writer
	n int
}

func (c *lineCounter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += bytes.Count(p[:n], []byte{'\n'})
	return n, err
}
