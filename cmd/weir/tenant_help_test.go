// SPDX-License-Identifier: Apache-2.0

package main

import (
	"flag"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/weir-pki/weir/web/admin"
)

// TestTenantHelpShowsZones: the help of tenant create and update shows a
// zone as the tenant syntax asks for it, with its leading dot, in the
// --allow flag and in an example command line that makes a valid policy
// (the server's own check, acme.Tenant.Validate).
func TestTenantHelpShowsZones(t *testing.T) {
	for _, verb := range []string{"create", "update"} {
		code, out, _ := runCLI("tenant", verb, "-h")
		if code != 0 {
			t.Fatalf("weir tenant %s -h: exit %d", verb, code)
		}
		if !regexp.MustCompile(`(?m)^  -allow patterns\n\s+.*\(\.example\.com\)`).MatchString(out) {
			t.Errorf("weir tenant %s -h: the -allow flag does not show a .zone:\n%s", verb, out)
		}
		m := regexp.MustCompile(`(?m)^  weir tenant ` + verb + ` (\S+) (.+)$`).FindStringSubmatch(out)
		if m == nil {
			t.Errorf("weir tenant %s -h: no example command line:\n%s", verb, out)
			continue
		}
		fs := flag.NewFlagSet(verb, flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		pf := addPolicyFlags(fs)
		if err := fs.Parse(strings.Fields(m[2])); err != nil || fs.NArg() != 0 {
			t.Errorf("the example %q does not parse: %v %v", m[0], err, fs.Args())
			continue
		}
		v := admin.TenantView{Name: m[1]}
		pf.apply(fs, &v)
		zones := 0
		for _, p := range append(append([]string{}, v.AllowedNames...), v.DeniedNames...) {
			if strings.HasPrefix(p, ".") {
				zones++
			}
		}
		if zones == 0 {
			t.Errorf("the example %q names no .zone", m[0])
		}
		tenant, err := v.Tenant()
		if err == nil {
			_, err = tenant.Validate(nil)
		}
		if err != nil {
			t.Errorf("the example %q is not a valid policy: %v", m[0], err)
		}
	}
}
