// SPDX-License-Identifier: Apache-2.0

package server

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// BuildInfo says which weir this is: what `weir version` prints, the
// banner's first line and the weir_build_info metric.
type BuildInfo struct {
	// Version is the release (v1.2.3), the module's pseudo-version of a
	// build from a VCS checkout, or "dev".
	Version string `json:"version"`
	// Commit is the VCS revision, "" when unknown.
	Commit string `json:"commit"`
	// Date is the commit's time (RFC 3339) or the release build's date.
	Date string `json:"date"`
	// Modified reports a build from a working tree with uncommitted changes.
	Modified bool `json:"modified"`
	// GoVersion is the toolchain that built the binary.
	GoVersion string `json:"goVersion"`
	// PKCS11 reports whether PKCS#11 signers are built in.
	PKCS11 bool `json:"pkcs11"`
}

// ReadBuildInfo reads the binary's build information (the module version
// and the vcs.revision, vcs.time and vcs.modified settings the go command
// stamps) and lets the non-empty overrides of a release build (-ldflags
// -X) win over it.
func ReadBuildInfo(version, commit, date string, pkcs11 bool) BuildInfo {
	b := BuildInfo{Version: "dev", GoVersion: runtime.Version(), PKCS11: pkcs11}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			b.Version = v
		}
		stamps := map[string]*string{"vcs.revision": &b.Commit, "vcs.time": &b.Date}
		for _, s := range bi.Settings {
			if p := stamps[s.Key]; p != nil {
				*p = s.Value
			}
			b.Modified = b.Modified || s.Key == "vcs.modified" && s.Value == "true"
		}
	}
	for _, o := range []struct {
		dst *string
		v   string
	}{{&b.Version, version}, {&b.Commit, commit}, {&b.Date, date}} {
		if o.v != "" {
			*o.dst = o.v
		}
	}
	return b
}

// ShortCommit is the first 12 hex digits of the commit, with "+dirty"
// for a modified tree; "unknown" when there is none.
func (b BuildInfo) ShortCommit() string {
	c := b.Commit
	if c == "" {
		return "unknown"
	}
	if len(c) > 12 {
		c = c[:12]
	}
	if b.Modified {
		c += "+dirty"
	}
	return c
}

// Print writes the build information for people, one fact per line.
func (b BuildInfo) Print(w io.Writer) {
	var sb strings.Builder
	fmt.Fprintf(&sb, "weir %s\n", b.Version)
	commit := b.Commit
	if commit == "" {
		commit = "unknown"
	}
	if b.Modified {
		commit += " (modified)"
	}
	date := b.Date
	if date == "" {
		date = "unknown"
	}
	fmt.Fprintf(&sb, "  commit:   %s\n  date:     %s\n  go:       %s\n  pkcs11:   %t\n", commit, date, b.GoVersion, b.PKCS11)
	_, _ = io.WriteString(w, sb.String())
}
