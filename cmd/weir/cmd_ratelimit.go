// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/weir-pki/weir/web/admin"
)

func cmdRatelimit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	verbs := map[string]subcommand{
		"status":  {"status KEY | --account ID | --ip IP [--json]", ratelimitStatus},
		"explain": {"explain --account ID --names a,b [--json]", ratelimitExplain},
		"reset":   {"reset KEY", ratelimitReset},
	}
	return runGroup(ctx, "ratelimit", verbs, []string{"status", "explain", "reset"}, args, stdout, stderr)
}

func ratelimitStatus(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, af := newVerbFlags("ratelimit status", "ratelimit status KEY | --account ID | --ip IP",
		"Shows every limiter bucket of a bucket key (limit:key, e.g. order-creation:42), an account\nor a client IP: its capacity, what remains, and when it is full again. Spends nothing.", stderr)
	account := fs.String("account", "", "an account `ID`")
	ip := fs.String("ip", "", "a client `IP` address")
	pos, code, ok := parseInterspersed(fs, args, stdout)
	if !ok {
		return code
	}
	q := url.Values{"account": {*account}, "ip": {*ip}}
	if len(pos) == 1 {
		q.Set("key", pos[0])
	}
	if n := len(pos) + boolInt(*account != "") + boolInt(*ip != ""); n != 1 || len(pos) > 1 {
		return usageError(fs, stderr, "give one of KEY, --account or --ip")
	}
	return ask(ctx, fs, af, nil, get("/api/v1/ratelimit/status", q), stdout, stderr, func(out struct {
		Buckets []admin.BucketView `json:"buckets"`
	}) {
		now := time.Now()
		tw := newTable(stdout, "BUCKET\tLIMIT\tREMAINING\tNEXT\tFULL AGAIN")
		for _, b := range out.Buckets {
			if !b.Enabled {
				fmt.Fprintf(tw, "%s\tdisabled\t-\t-\t-\n", b.Bucket)
				continue
			}
			lim := b.Describe
			if b.Override {
				lim += " (override)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%s\t%s\n", b.Bucket, lim, b.Remaining, b.Capacity, fmtTime(b.NextAt, now), fmtTime(b.FullAt, now))
		}
		tw.Flush()
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func ratelimitExplain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, af := newVerbFlags("ratelimit explain", "ratelimit explain --account ID --names a,b",
		"Predicts what a new order of the account for these names would meet now: which limit\nwould refuse it and when it would pass. Spends nothing.", stderr)
	account := fs.String("account", "", "the account `ID`")
	names := fs.String("names", "", "comma-separated `names` of the order")
	pos, code, ok := parseInterspersed(fs, args, stdout)
	if !ok {
		return code
	}
	if *account == "" || *names == "" || len(pos) > 0 {
		return usageError(fs, stderr, "give --account and --names, and no argument")
	}
	req := admin.ExplainRequest{Account: *account, Names: strings.Split(*names, ",")}
	return ask(ctx, fs, af, nil, post("/api/v1/ratelimit/explain", req), stdout, stderr, func(v admin.ExplainView) { printExplain(stdout, v) })
}

// printExplain prints what ratelimit explain predicts.
func printExplain(stdout io.Writer, v admin.ExplainView) {
	var ids []string
	for _, id := range v.Identifiers {
		ids = append(ids, id.Value)
	}
	fmt.Fprintf(stdout, "new order of account %s for %s (%d new authorizations):\n", v.Account, strings.Join(ids, ", "), v.FreshAuthzs)
	switch {
	case v.Problem != nil:
		fmt.Fprintf(stdout, "  refused before the limiter: %s: %s\n", v.Problem.Type, v.Problem.Detail)
	case v.Allowed:
		fmt.Fprintln(stdout, "  would pass every limit now")
	case v.Never:
		fmt.Fprintf(stdout, "  would be refused by %s:%s, and no wait helps: %s\n", v.Limit, v.Key, v.Detail)
	default:
		fmt.Fprintf(stdout, "  would be refused (429) by %s:%s; passes at %s\n", v.Limit, v.Key, fmtTime(v.PassesAt, time.Now()))
		if len(v.Denied) > 1 {
			tw := newTable(stdout, "  DENIED BY\tWAIT\tPASSES AT")
			for _, d := range v.Denied {
				fmt.Fprintf(tw, "  %s\t%s\t%s\n", d.Bucket, d.RetryAfter, d.PassesAt.Format(time.RFC3339))
			}
			tw.Flush()
		}
	}
}

func ratelimitReset(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, af := newVerbFlags("ratelimit reset", "ratelimit reset KEY",
		"Makes the bucket with this key (limit:key, e.g. order-creation:42) fresh.", stderr)
	key, code, ok := oneArg(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	return ask(ctx, fs, af, nil, post("/api/v1/ratelimit/reset", admin.ResetRequest{Key: key}), stdout, stderr, func(map[string]string) {
		fmt.Fprintf(stdout, "reset %s\n", key)
	})
}
