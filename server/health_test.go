// SPDX-License-Identifier: Apache-2.0

package server

import (
	"testing"
)

func TestReadyzURL(t *testing.T) {
	on, off := true, false
	tests := []struct {
		name  string
		admin AdminConfig
		acme  string
		want  string
	}{
		{"admin on loopback", AdminConfig{Enabled: &on, Listen: "127.0.0.1:14001"}, "localhost:14000", "http://127.0.0.1:14001/readyz"},
		{"admin with TLS on every interface", AdminConfig{Enabled: &on, Listen: "0.0.0.0:9443", TLS: true}, "localhost:14000", "https://127.0.0.1:9443/readyz"},
		{"admin on every IPv6 interface", AdminConfig{Enabled: &on, Listen: "[::]:14001", TLS: true}, "localhost:14000", "https://[::1]:14001/readyz"},
		{"admin off", AdminConfig{Enabled: &off, Listen: "127.0.0.1:14001"}, "localhost:14000", "https://localhost:14000/readyz"},
		{"admin off, ACME on every interface", AdminConfig{Enabled: &off}, ":14000", "https://127.0.0.1:14000/readyz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Admin, cfg.Server.Listen = tt.admin, tt.acme
			if got := readyURL(cfg); got != tt.want {
				t.Errorf("readyURL = %q, want %q", got, tt.want)
			}
		})
	}
}
