// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/weir-pki/weir/web/admin"
)

// weir tenant: tenants, the named policies that EAB keys and their
// accounts belong to, through the admin API.

func cmdTenant(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	verbs := map[string]subcommand{
		"create": {"create NAME [policy flags] [--json]", tenantCreate},
		"list":   {"list [--json]", tenantList},
		"show":   {"show NAME [--json]", tenantShow},
		"report": {"report NAME [--json]", tenantReport},
		"update": {"update NAME [policy flags] [--json]", tenantUpdate},
		"delete": {"delete NAME [--json]", tenantDelete},
	}
	return runGroup(ctx, "tenant", verbs, []string{"create", "list", "show", "report", "update", "delete"}, args, stdout, stderr)
}

// tenantPolicyAbout explains the policy flags of create and update.
const tenantPolicyAbout = `Name patterns: "host.example.com" is that name only; ".example.com" is the zone,
example.com and every name under it. Denied patterns win. A tenant admits only what it
lists, and never more than ca.policy: a name must pass both. Lists are comma-separated.
A delegated zone (--delegated-zone, off by default) lies within an allowed zone; its
names are issued with no challenge to whoever holds one of the tenant's EAB keys.`

// tenantCreateExample and tenantUpdateExample end the help of create and
// update: a zone is written with its leading dot.
const (
	tenantCreateExample = `

Example: the zone pay.corp.example with every name under it, one exact name
elsewhere, and a zone within it denied:
  weir tenant create payments --allow .pay.corp.example,api.corp.example --deny .legacy.pay.corp.example`
	tenantUpdateExample = `

Example: deny one more name, keeping the denied zone:
  weir tenant update payments --deny .legacy.pay.corp.example,old.pay.corp.example`
)

// policyFlags are the flags that set a tenant's policy.
type policyFlags struct {
	allow, deny, ipRanges, profiles, challenges *string
	delegated                                   *string
	wildcards                                   *bool
	maxLifetime                                 *string
}

func addPolicyFlags(fs *flag.FlagSet) policyFlags {
	return policyFlags{
		allow:       fs.String("allow", "", "allowed name `patterns`: exact names (host.example.com) and zones with a leading dot (.example.com)"),
		deny:        fs.String("deny", "", "denied name `patterns`, as --allow's (.legacy.example.com), which win over --allow"),
		wildcards:   fs.Bool("wildcards", false, "permit wildcard identifiers under the allowed zones"),
		ipRanges:    fs.String("ip-ranges", "", "allowed IP `ranges` (CIDRs or addresses)"),
		profiles:    fs.String("profiles", "", "the `profiles` its orders may use (none: every one)"),
		challenges:  fs.String("challenges", "", "the challenge `types` its authorizations offer (none: every one)"),
		maxLifetime: fs.String("max-lifetime", "", "the longest certificate `lifetime`, e.g. 720h (none: the profile's)"),
		delegated:   fs.String("delegated-zone", "", "`zones` (.team-a.internal) whose names need no challenge; \"\" for none"),
	}
}

// apply sets on v the policy flags given on fs's command line (all of
// them for a new tenant, as their zero values are the defaults).
func (p policyFlags) apply(fs *flag.FlagSet, v *admin.TenantView) {
	list := func(s string) []string {
		out := []string{}
		for _, e := range strings.Split(s, ",") {
			if e = strings.TrimSpace(e); e != "" {
				out = append(out, e)
			}
		}
		return out
	}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "allow":
			v.AllowedNames = list(*p.allow)
		case "deny":
			v.DeniedNames = list(*p.deny)
		case "wildcards":
			v.Wildcards = *p.wildcards
		case "ip-ranges":
			v.AllowedIPRanges = list(*p.ipRanges)
		case "profiles":
			v.Profiles = list(*p.profiles)
		case "challenges":
			v.ChallengeTypes = list(*p.challenges)
		case "max-lifetime":
			v.MaxLifetime = *p.maxLifetime
		case "delegated-zone":
			v.DelegatedZones = list(*p.delegated)
		}
	})
}

func tenantCreate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, af := newVerbFlags("tenant create", "tenant create NAME [flags]",
		"Creates a tenant: a named policy for the accounts bound with its EAB keys\n(weir eab create --tenant NAME).\n\n"+tenantPolicyAbout+tenantCreateExample, stderr)
	pf := addPolicyFlags(fs.FlagSet)
	name, code, ok := oneArg(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	v := admin.TenantView{Name: name}
	pf.apply(fs.FlagSet, &v)
	return ask(ctx, fs, af, nil, post("/api/v1/tenants", v), stdout, stderr, func(out admin.TenantView) { printTenant(stdout, out) })
}

func tenantUpdate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, af := newVerbFlags("tenant update", "tenant update NAME [flags]",
		"Changes a tenant's policy: the flags given replace those settings, the others stay.\nThe next new-order and finalize of its accounts see it: a narrowed tenant stops\nits pending orders at finalize.\n\n"+tenantPolicyAbout+tenantUpdateExample, stderr)
	pf := addPolicyFlags(fs.FlagSet)
	name, code, ok := oneArg(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	c, err := af.client(stderr)
	if err != nil {
		return fail(stderr, "tenant update", err)
	}
	path := "/api/v1/tenants/" + url.PathEscape(name)
	var v admin.TenantView
	if err := c.Get(ctx, path, nil, &v); err != nil {
		return fail(stderr, "tenant update", err)
	}
	pf.apply(fs.FlagSet, &v)
	return ask(ctx, fs, af, c, request{method: http.MethodPut, path: path, body: v}, stdout, stderr, func(out admin.TenantView) { printTenant(stdout, out) })
}

func tenantShow(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, af := newVerbFlags("tenant show", "tenant show NAME", "Shows a tenant's policy.", stderr)
	name, code, ok := oneArg(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	return ask(ctx, fs, af, nil, get("/api/v1/tenants/"+url.PathEscape(name), nil), stdout, stderr, func(v admin.TenantView) { printTenant(stdout, v) })
}

func tenantList(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, af := newVerbFlags("tenant list", "tenant list", "Lists the tenants, by name.", stderr)
	if code, ok := parseNoArgs(fs, args, stdout, stderr); !ok {
		return code
	}
	return ask(ctx, fs, af, nil, get("/api/v1/tenants", nil), stdout, stderr, func(p admin.Page[admin.TenantView]) {
		tw := newTable(stdout, "NAME\tALLOWED\tDENIED\tWILDCARDS\tIP RANGES\tMAX LIFETIME\tDELEGATED ZONES")
		for _, v := range p.Items {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%s\t%s\t%s\n", v.Name, joinOrDash(v.AllowedNames), joinOrDash(v.DeniedNames),
				v.Wildcards, joinOrDash(v.AllowedIPRanges), orDash(v.MaxLifetime), joinOrDash(v.DelegatedZones))
		}
		tw.Flush()
	})
}

func tenantDelete(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, af := newVerbFlags("tenant delete", "tenant delete NAME",
		"Deletes a tenant. It is refused while EAB keys belong to the tenant (revoked ones too):\ntheir accounts keep its policy.", stderr)
	name, code, ok := oneArg(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	return deleteVerb(ctx, fs, af, "/api/v1/tenants/"+url.PathEscape(name), map[string]string{"deleted": name}, stdout, stderr, "deleted tenant %s\n", name)
}

// printTenant prints one tenant as a list of its settings.
func printTenant(stdout io.Writer, v admin.TenantView) {
	tw := newTable(stdout, "")
	rows := [][2]string{
		{"name", v.Name}, {"allowed names", joinOrDash(v.AllowedNames)}, {"denied names", joinOrDash(v.DeniedNames)},
		{"wildcards", fmt.Sprint(v.Wildcards)}, {"IP ranges", joinOrDash(v.AllowedIPRanges)},
		{"profiles", orDash(strings.Join(v.Profiles, ", "), "every one")},
		{"challenge types", orDash(strings.Join(v.ChallengeTypes, ", "), "every one")},
		{"max lifetime", orDash(v.MaxLifetime, "the profile's")},
		{"delegated zones", orDash(strings.Join(v.DelegatedZones, ", "), "none (every name is validated)")},
	}
	for _, r := range rows {
		fmt.Fprintf(tw, "%s:\t%s\n", r[0], r[1])
	}
	tw.Flush()
}
