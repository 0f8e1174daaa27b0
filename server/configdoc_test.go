// SPDX-License-Identifier: Apache-2.0

package server

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/ratelimit"
)

// TestDefaultValue: the placeholders of configTemplate render values as
// the example file writes them.
func TestDefaultValue(t *testing.T) {
	cfg := DefaultConfig()
	rl := &cfg.RateLimiting
	rl.Backend, rl.BackendTimeout, rl.HelpURL = "memory", 750*time.Millisecond, "https://limits.example/weir"
	rl.Redis = ratelimit.RedisConfig{Addrs: []string{"10.0.0.1:6379", "10.0.0.2:6379"}, DB: 2, TLS: true}
	rl.Whitelist = []string{"10.0.0.0/8", "::1"}
	rl.DuplicateCertificate = ratelimit.WindowConfig{Enabled: true, MaxPerWindow: 4, Window: 72 * time.Hour}
	rl.FailedValidation.Window = 90 * time.Minute
	rl.Global.Burst = 17
	v := reflect.ValueOf(cfg)
	tests := []struct{ path, want string }{
		{"rate-limiting.backend", "memory"},
		{"rate-limiting.backend-timeout", "750ms"},
		{"rate-limiting.help-url", `"https://limits.example/weir"`},
		{"rate-limiting.redis", `{ addrs: ["10.0.0.1:6379", "10.0.0.2:6379"], master-name: "", password-file: "", db: 2, tls: true }`},
		{"rate-limiting.whitelist", `[10.0.0.0/8, "::1"]`},
		{"rate-limiting.overrides", "[]"},
		{"rate-limiting.duplicate-certificate", "{ enabled: true, max-per-window: 4, window: 72h }"},
		{"rate-limiting.failed-validation.window", "1h30m"},
		{"rate-limiting.global.burst", "17"},
		{"log.format", "text"},
	}
	for _, tt := range tests {
		if got := defaultValue(v, tt.path); got != tt.want {
			t.Errorf("defaultValue(%s) = %s, want %s", tt.path, got, tt.want)
		}
	}
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		72 * time.Hour: "72h", time.Hour + 30*time.Minute: "1h30m", time.Hour + 10*time.Minute: "1h10m",
		10 * time.Minute: "10m", time.Minute: "1m", 90 * time.Second: "1m30s", 500 * time.Millisecond: "500ms", 0: "0s",
	} {
		if got := shortDuration(d); got != want {
			t.Errorf("shortDuration(%v) = %s, want %s", d, got, want)
		}
	}
}

// TestConfigTextNames: a config file or data directory whose name holds
// "{{" is written as it is, not taken for a placeholder.
func TestConfigTextNames(t *testing.T) {
	text := string(ConfigText("w{{rate-limiting.backend}}.yaml", "./d{{x.y}}"))
	for _, want := range []string{"weir serve -config w{{rate-limiting.backend}}.yaml", "data-dir: ./d{{x.y}}"} {
		if !strings.Contains(text, want) {
			t.Errorf("configText lacks %q", want)
		}
	}
}
