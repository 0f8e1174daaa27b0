// SPDX-License-Identifier: Apache-2.0

package server

import (
	"io"
	"strings"
	"testing"
)

// TestValidationWorkersPerAccountConfig: acme.validation-workers-per-account
// is 0 (acme's default share) or 1 to acme.validation-workers, and reaches
// the Service.
func TestValidationWorkersPerAccountConfig(t *testing.T) {
	tests := []struct {
		yaml    string
		wantErr string // "" for none
		want    int    // the Service's cap
	}{
		{yaml: "", want: 4},
		{yaml: "acme: {validation-workers: 2}", want: 1},
		{yaml: "acme: {validation-workers: 40}", want: 10},
		{yaml: "acme: {validation-workers-per-account: 1}", want: 1},
		{yaml: "acme: {validation-workers-per-account: 16}", want: 16},
		{yaml: "acme: {validation-workers-per-account: 17}", wantErr: "acme.validation-workers-per-account: 17 must be between 1 and acme.validation-workers (16)"},
		{yaml: "acme: {validation-workers: 2, validation-workers-per-account: 3}", wantErr: "acme.validation-workers-per-account: 3 must be between 1 and acme.validation-workers (2)"},
		{yaml: "acme: {validation-workers-per-account: -1}", wantErr: "acme.validation-workers-per-account: -1"},
	}
	for _, tc := range tests {
		t.Run(tc.yaml, func(t *testing.T) {
			cfg, err := ParseConfig("", []byte(tc.yaml))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			cfg.DataDir = t.TempDir()
			cfg.Server.Listen = "127.0.0.1:0"
			cfg.Admin.Enabled = new(bool)
			srv, err := New(t.Context(), cfg, Options{Log: io.Discard})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			if got := srv.svc.Config().ValidationWorkersPerAccount; got != tc.want {
				t.Errorf("the Service's ValidationWorkersPerAccount = %d, want %d", got, tc.want)
			}
		})
	}
}
