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

// weir admin token: the administrators' named credentials, each with a
// role (read or operate), through the admin API with the token file's
// credential (operate).

func cmdAdmin(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	verbs := map[string]subcommand{
		"token": {"token add|list|revoke ...", cmdAdminToken},
	}
	return runGroup(ctx, "admin", verbs, []string{"token"}, args, stdout, stderr)
}

func cmdAdminToken(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	verbs := map[string]subcommand{
		"add":    {"add NAME --role read|operate [--json]", adminTokenAdd},
		"list":   {"list [--json]", adminTokenList},
		"revoke": {"revoke NAME [--json]", adminTokenRevoke},
	}
	return runGroup(ctx, "admin token", verbs, []string{"add", "list", "revoke"}, args, stdout, stderr)
}

func adminTokenAdd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, af := newVerbFlags("admin token add", "admin token add NAME --role read|operate",
		"Adds an admin credential: a bearer token for the admin API and the dashboard's login,\n"+
			"named NAME (the actor of its actions in the log and the audit trail), with a role:\n"+
			"read sees everything and changes nothing; operate may also revoke, reset, deactivate,\n"+
			"manage EAB keys, tenants and credentials. The token is shown this once; weir keeps its\n"+
			"SHA-256 only, in the store. It works at once, without a restart, and on every\n"+
			"replica of the store within a few seconds.", stderr)
	role := fs.String("role", "", "the credential's `role`: read or operate")
	pos, code, ok := parseInterspersed(fs, args, stdout)
	if !ok {
		return code
	}
	if len(pos) != 1 || *role == "" {
		return usageError(fs, stderr, "give one NAME and --role")
	}
	if _, err := admin.ParseRole(*role); err != nil {
		return usageError(fs, stderr, err.Error())
	}
	return ask(ctx, fs, af, nil, post("/api/v1/credentials", admin.CredentialRequest{Name: pos[0], Role: *role}), stdout, stderr, func(v admin.CredentialView) {
		fmt.Fprintf(stdout, "admin credential %s (role %s)\n\n  token:  %s\n\n", v.Name, v.Role, v.Token)
		fmt.Fprintf(stdout, "The token is not shown again. Send it as \"Authorization: Bearer TOKEN\", or type it\ninto the dashboard's login. weir admin token revoke %s ends it.\n", v.Name)
	})
}

func adminTokenList(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, af := newVerbFlags("admin token list", "admin token list",
		"Lists the admin credentials with their roles: the token file's (admin) first.\nTokens are never shown.", stderr)
	if code, ok := parseNoArgs(fs, args, stdout, stderr); !ok {
		return code
	}
	return ask(ctx, fs, af, nil, get("/api/v1/credentials", nil), stdout, stderr, func(p admin.Page[admin.CredentialView]) {
		tw := newTable(stdout, "NAME\tROLE\tCREATED\tBY")
		for _, v := range p.Items {
			created := "the token file"
			if !v.CreatedAt.IsZero() {
				created = v.CreatedAt.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", v.Name, v.Role, created, orDash(v.CreatedBy))
		}
		tw.Flush()
	})
}

func adminTokenRevoke(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, af := newVerbFlags("admin token revoke", "admin token revoke NAME",
		"Revokes an admin credential: its token stops working at once and its dashboard\nsessions end, on every replica of the store within a few seconds. The token file's\ncredential (admin) is rotated by replacing the file.", stderr)
	name, code, ok := oneArg(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	return deleteVerb(ctx, fs, af, "/api/v1/credentials/"+url.PathEscape(name), map[string]string{"revoked": name}, stdout, stderr,
		"revoked admin credential %s; its sessions have ended\n", name)
}
