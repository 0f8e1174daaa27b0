// SPDX-License-Identifier: Apache-2.0

package server

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
)

// TestReadBuildInfo: a release build's -ldflags values win; without them
// the version is the module's or "dev", and the Go version is the
// toolchain's.
func TestReadBuildInfo(t *testing.T) {
	b := ReadBuildInfo("v1.2.3", "0123456789abcdef0123", "2026-01-02T03:04:05Z", true)
	if b.Version != "v1.2.3" || b.Commit != "0123456789abcdef0123" || b.Date != "2026-01-02T03:04:05Z" || !b.PKCS11 || b.GoVersion != runtime.Version() {
		t.Errorf("overrides: %+v", b)
	}
	if got := b.ShortCommit(); got != "0123456789ab" {
		t.Errorf("ShortCommit = %q", got)
	}
	b.Modified = true
	if got := b.ShortCommit(); got != "0123456789ab+dirty" {
		t.Errorf("ShortCommit of a modified tree = %q", got)
	}
	var w bytes.Buffer
	b.Print(&w)
	for _, want := range []string{"weir v1.2.3\n", "commit:   0123456789abcdef0123 (modified)", "date:     2026-01-02T03:04:05Z", "go:       " + runtime.Version(), "pkcs11:   true"} {
		if !strings.Contains(w.String(), want) {
			t.Errorf("Print lacks %q:\n%s", want, w.String())
		}
	}
	d := ReadBuildInfo("", "", "", false)
	if d.Version == "" || d.GoVersion != runtime.Version() || d.PKCS11 {
		t.Errorf("defaults: %+v", d)
	}
	if d.Commit == "" && d.ShortCommit() != "unknown" {
		t.Errorf("ShortCommit without a commit = %q", d.ShortCommit())
	}
}
