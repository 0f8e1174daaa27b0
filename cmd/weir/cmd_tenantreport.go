// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/url"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/weir-pki/weir/web/admin"
)

// weir tenant report: what the dashboard's tenant page shows, as tables.

func tenantReport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, af := newVerbFlags("tenant report", "tenant report NAME",
		"Shows a tenant with what belongs to it: its policy, its EAB keys, the accounts bound with\n"+
			"them and their buckets against their limits, its refusals by rule on the replica\n"+
			"asked (since its start) and the most recent, and its most recent certificates.", stderr)
	name, code, ok := oneArg(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	return ask(ctx, fs, af, nil, get("/api/v1/tenants/"+url.PathEscape(name)+"/report", nil), stdout, stderr, func(rep admin.TenantReport) {
		printTenantReport(stdout, rep)
	})
}

// printTenantReport prints a tenant's report as a list of its settings
// and a table of each part.
func printTenantReport(stdout io.Writer, rep admin.TenantReport) {
	printTenant(stdout, rep.Tenant)
	if rep.Warning != "" {
		fmt.Fprintf(stdout, "\nwarning: %s\n", rep.Warning)
	}
	now := time.Now()
	section := func(title, header string) *tabwriter.Writer {
		fmt.Fprintf(stdout, "\n%s:\n", title)
		return newTable(stdout, header)
	}
	tw := section("EAB keys", "KEY ID\tLABEL\tSTATUS\tACCOUNT")
	for _, k := range rep.EABKeys {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", k.KeyID, k.Label, k.Status, orDash(k.BoundAccount))
	}
	tw.Flush()
	tw = section("Usage against limits", "ACCOUNT\tBUCKET\tREMAINING\tCAPACITY")
	for _, a := range rep.Accounts {
		if a.BucketErr != "" {
			fmt.Fprintf(tw, "%s\t-\t%s\t\n", a.ID, a.BucketErr)
		}
		for _, b := range a.Buckets {
			if !b.Enabled {
				fmt.Fprintf(tw, "%s\t%s\tdisabled\t\n", a.ID, b.Bucket)
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", a.ID, b.Bucket, b.Remaining, b.Capacity)
		}
	}
	tw.Flush()
	if rep.AccountsMore {
		fmt.Fprintln(stdout, "(more accounts are bound than shown)")
	}
	tw = section("Refusals by rule", "RULE\tREFUSALS")
	for _, rule := range slices.Sorted(maps.Keys(rep.RefusalsByRule)) {
		fmt.Fprintf(tw, "%s\t%d\n", rule, rep.RefusalsByRule[rule])
	}
	tw.Flush()
	tw = section("Recent refusals", "WHEN\tRULE\tACTION\tACCOUNT\tIDENTIFIER")
	for _, r := range rep.Refusals {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", fmtTime(&r.At, now), r.Rule, r.Action, r.Account, orDash(r.Identifier))
	}
	tw.Flush()
	tw = section("Recent certificates", "SERIAL\tACCOUNT\tSTATE\tISSUED\tNAMES")
	for _, cv := range rep.Certificates {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", cv.Serial, cv.Account, cv.State, fmtTime(&cv.IssuedAt, now), joinOrDash(cv.Names))
	}
	tw.Flush()
}
