// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/weir-pki/weir/web/admin"
)

// weir eab: External Account Binding keys (RFC 8555 §7.3.4), through the
// admin API.

func cmdEAB(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	verbs := map[string]subcommand{
		"create": {"create --label LABEL [--tenant NAME] [--json]", eabCreate},
		"list":   {"list [--label LABEL] [--json]", eabList},
		"revoke": {"revoke KEY-ID [--json]", eabRevoke},
	}
	return runGroup(ctx, "eab", verbs, []string{"create", "list", "revoke"}, args, stdout, stderr)
}

func eabCreate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, af := newVerbFlags("eab create", "eab create --label LABEL [--tenant NAME]",
		"Makes an External Account Binding key: a key ID and an HMAC key that let one ACME client\ncreate one account. The HMAC key is shown this once. Rate-limit overrides keyed\n\"eab:LABEL\" apply to the accounts bound with keys of the label. With --tenant, the key and its\naccount belong to that tenant (weir tenant) and get its policy.", stderr)
	label := fs.String("label", "", "the `label` of the key, e.g. a team: letters, digits, '.', '_', '-'")
	tenant := fs.String("tenant", "", "the `tenant` the key and its account belong to (none: the default, ca.policy alone)")
	pos, code, ok := parseInterspersed(fs, args, stdout)
	if !ok {
		return code
	}
	if *label == "" || len(pos) > 0 {
		return usageError(fs, stderr, "give --label, and no argument")
	}
	return ask(ctx, fs, af, nil, post("/api/v1/eab", admin.EABCreateRequest{Label: *label, Tenant: *tenant}), stdout, stderr, func(k admin.EABKeyView) {
		fmt.Fprintf(stdout, "External Account Binding key for label %s", k.Label)
		if k.Tenant != "" {
			fmt.Fprintf(stdout, " of tenant %s", k.Tenant)
		}
		fmt.Fprintf(stdout, "\n\n")
		fmt.Fprintf(stdout, "  key ID:    %s\n", k.KeyID)
		fmt.Fprintf(stdout, "  HMAC key:  %s\n\n", k.HMACKey)
		fmt.Fprintf(stdout, "The HMAC key is not shown again. It binds one new account, once.\n\n")
		fmt.Fprintf(stdout, "certbot:  --eab-kid %s --eab-hmac-key %s\n", k.KeyID, k.HMACKey)
		fmt.Fprintf(stdout, "lego:     --eab --kid %s --hmac %s\n", k.KeyID, k.HMACKey)
	})
}

func eabList(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, af := newVerbFlags("eab list", "eab list [--label LABEL]",
		"Lists the External Account Binding keys, newest first, with the account each is bound to.\nHMAC keys are never shown.", stderr)
	label := fs.String("label", "", "only the keys of this `label`")
	if code, ok := parseNoArgs(fs, args, stdout, stderr); !ok {
		return code
	}
	return ask(ctx, fs, af, nil, get("/api/v1/eab", url.Values{"label": {*label}}), stdout, stderr, func(p admin.Page[admin.EABKeyView]) {
		tw := newTable(stdout, "KEY ID\tLABEL\tTENANT\tSTATUS\tCREATED\tACCOUNT\tBOUND")
		for _, k := range p.Items {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.KeyID, k.Label, orDash(k.Tenant), k.Status, k.CreatedAt.UTC().Format(time.RFC3339), orDash(k.BoundAccount), fmtTime(k.BoundAt, time.Now()))
		}
		tw.Flush()
	})
}

func eabRevoke(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, af := newVerbFlags("eab revoke", "eab revoke KEY-ID",
		"Revokes an External Account Binding key so that it never binds an account. An account\nalready bound with it keeps working; weir accounts deactivate stops it.", stderr)
	keyID, code, ok := oneArg(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	return ask(ctx, fs, af, nil, post("/api/v1/eab/"+url.PathEscape(keyID)+"/revoke", nil), stdout, stderr, func(k admin.EABKeyView) {
		fmt.Fprintf(stdout, "revoked EAB key %s (label %s)", k.KeyID, k.Label)
		if k.BoundAccount != "" {
			fmt.Fprintf(stdout, "; account %s, bound with it, keeps working", k.BoundAccount)
		}
		fmt.Fprintln(stdout)
	})
}
