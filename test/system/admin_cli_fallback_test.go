// SPDX-License-Identifier: Apache-2.0

package system

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-pki/weir/server"
)

// adminURLFile is the file of the data directory where weir serve records
// the admin API's URL, as docs/operations.md names it.
const adminURLFile = "admin.url"

// TestAdminCLIInvalidConfig: while the configuration file is invalid (an
// edit the running server refused), the operator commands still reach the
// server: through the admin address weir serve recorded in the data
// directory, or with -admin and -token-file; and a token file with bad
// bytes is refused with an error that names it.
func TestAdminCLIInvalidConfig(t *testing.T) {
	e := startEnv(t, nil)
	addr, err := net.ResolveTCPAddr("tcp", e.cfg.Admin.Listen)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.srv.RecordAdminURL(addr); err != nil {
		t.Fatal(err)
	}
	// An edit the server refuses: data-dir is still legible.
	bad := "data-dir: " + e.cfg.DataDir + "\nadmin:\n  listen: [not, an, address]\nno-such-key: 1\n"
	e.writeConfigBytes([]byte(bad))

	var stdout, stderr bytes.Buffer
	if code := builder.Run(t, []string{"certs", "list", "-config", e.cli.Config}, &stdout, &stderr); code != 0 {
		t.Fatalf("certs list with an invalid config: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "does not load") || !strings.Contains(stderr.String(), filepath.Join(e.cfg.DataDir, adminURLFile)) {
		t.Errorf("stderr does not say the config is invalid and which address it used:\n%s", stderr.String())
	}
	if !strings.Contains(stdout.String(), "SERIAL") {
		t.Errorf("no certificate table:\n%s", stdout.String())
	}

	// -admin and -token-file need no configuration at all; a trailing
	// newline in the token file is fine.
	tok, err := os.ReadFile(server.AdminTokenFile(e.cfg))
	if err != nil {
		t.Fatal(err)
	}
	tokFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokFile, append(bytes.TrimSpace(tok), '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	stderr.Reset()
	args := []string{"accounts", "list", "-config", filepath.Join(t.TempDir(), "missing.yaml"), "-admin", e.adminURL, "-token-file", tokFile}
	if code := builder.Run(t, args, &stdout, &stderr); code != 0 {
		t.Fatalf("accounts list -admin -token-file: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}

	// Bad bytes: exit 1 and the file, byte and line named.
	if err := os.WriteFile(tokFile, []byte("abc\x00def\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	stderr.Reset()
	if code := builder.Run(t, args, &stdout, &stderr); code != 1 {
		t.Fatalf("bad token file: exit %d, want 1\n%s", code, stderr.String())
	}
	if msg := stderr.String(); !strings.Contains(msg, tokFile) || !strings.Contains(msg, `byte 4 (line 1) is 0x00`) {
		t.Errorf("bad token file: %s", msg)
	}
}
