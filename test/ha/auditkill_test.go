// SPDX-License-Identifier: Apache-2.0

package ha_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/internal/audit"
	"github.com/weir-pki/weir/internal/weirproc"
)

// TestAuditKill9 runs one weir on SQLite with its audit trail in a small
// rotated file, issues certificates from 4 clients in a loop and kills
// weir with SIGKILL in the middle, 3 times, starting it again on the same
// data directory each time. Afterwards the trail's chain verifies (weir
// audit verify, across the rotated files and the restarts), and every
// certificate a client received has its issuance event: the event is
// written before the answer.
func TestAuditKill9(t *testing.T) {
	listen, err := weirproc.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	s, dir := newSolo(t), t.TempDir()
	opts := weirproc.Options{Bin: builder.Binary(t), DataDir: dir, Listen: listen,
		Config: s.config(dir, listen, "", "rate-limiting:\n  whitelist: [127.0.0.0/8]\naudit:\n  replica-id: kill9\n  max-size: 65536\n")}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	var (
		mu       sync.Mutex
		received []string
	)
	const rounds = 3
	for round := range rounds {
		p, err := weirproc.Start(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Stop(10 * time.Second) })
		s.p = p
		hc := s.httpClient("")
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, err := s.acmeClient(ctx, hc)
				if err != nil {
					t.Logf("round %d: account: %v", round, err)
					return
				}
				for i := 0; i < 200; i++ {
					select {
					case <-stop:
						return
					default:
					}
					leaf, err := s.issue(ctx, c, fmt.Sprintf("r%d-w%d-%d.kill.test", round, w, i))
					if err != nil {
						if i == 0 {
							t.Logf("round %d: %v", round, err)
						}
						continue // the kill
					}
					mu.Lock()
					received = append(received, ca.SerialHex(leaf.SerialNumber))
					mu.Unlock()
				}
			}()
		}
		time.Sleep(time.Duration(1500+round*700) * time.Millisecond)
		if err := p.Kill(); err != nil {
			t.Fatal(err)
		}
		close(stop)
		wg.Wait()
		hc.CloseIdleConnections()
	}
	// A last start continues the chain after the last kill.
	p, err := weirproc.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(10 * time.Second); err != nil {
		t.Fatal(err)
	}

	out, err := exec.CommandContext(ctx, opts.Bin, "audit", "verify", "-config", filepath.Join(dir, "weir.yaml")).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "chain intact") {
		t.Fatalf("weir audit verify: %v\n%s", err, out)
	}
	path := filepath.Join(dir, "audit", "audit-kill9.jsonl")
	files := append(audit.RotatedFiles(path), path)
	var trail strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		trail.Write(b)
	}
	if len(received) < rounds {
		t.Fatalf("only %d certificates issued in %d rounds", len(received), rounds)
	}
	for _, serial := range received {
		if !strings.Contains(trail.String(), `"serial":"`+serial+`"`) {
			t.Errorf("certificate %s was received but has no audit event", serial)
		}
	}
	t.Logf("%d certificates received, %d audit files, verify: %s", len(received), len(files), strings.TrimSpace(string(out)))
}
