package main

import (
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// writeConfig writes cfg as the server's config file.
func (e *testEnv) writeConfig(cfg Config) {
	e.t.Helper()
	b, err := yaml.Marshal(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(e.srv.configPath, b, 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// TestReload: a valid edit changes the limits live and keeps what was
// spent; an invalid edit is refused and the old configuration keeps
// working; what cannot change live is reported as needing a restart.
func TestReload(t *testing.T) {
	e := startEnv(t, nil)
	key := newKey(t)
	_, kid := e.rawAccount(key)
	id := strings.TrimPrefix(kid, e.base+"/acme/account/")
	wantStatus(t, e.rawOrder(key, kid, "before.weir.test"), http.StatusCreated)

	cfg := e.cfg
	cfg.RateLimiting.OrderCreation = OrderLimit{Enabled: true, OrdersPerAccountPerHour: 20, OrderBurst: 2, SANBudgetPerAccountPerHour: 100}
	cfg.CA.Policy.DeniedDomains = []string{"blocked.test"}
	e.writeConfig(cfg)
	if err := e.srv.reload("test"); err != nil {
		t.Fatalf("reload: %v", err)
	}
	wantStatus(t, e.rawOrder(key, kid, "one.weir.test"), http.StatusCreated)
	wantStatus(t, e.rawOrder(key, kid, "two.weir.test"), http.StatusCreated)
	want429(t, e.rawOrder(key, kid, "three.weir.test"), "order-creation", id)
	if typ, _ := e.rawOrder(key, kid, "x.blocked.test").problem(); typ != "urn:ietf:params:acme:error:rejectedIdentifier" {
		t.Errorf("the reloaded policy was not applied: %s", typ)
	}

	// An invalid edit: refused, and the running limits stay.
	bad := cfg
	bad.RateLimiting.OrderCreation.OrderBurst = 0
	e.writeConfig(bad)
	err := e.srv.reload("test")
	if err == nil || !strings.Contains(err.Error(), "rate-limiting.order-creation.order-burst") {
		t.Fatalf("reload of an invalid file: err = %v, want one naming the key", err)
	}
	want429(t, e.rawOrder(key, kid, "four.weir.test"), "order-creation", id)
	if err := os.WriteFile(e.srv.configPath, []byte("rate-limiting: [not, a, map"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := e.srv.reload("test"); err == nil {
		t.Fatal("reload of broken YAML succeeded")
	}
	if res, err := e.http.Get(e.base + "/directory"); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("server after refused reloads: %v %v", res, err)
	}

	// Raising the burst keeps what was spent: 2 of the 4 are used (the
	// first order was made while the limit was off).
	more := cfg
	more.RateLimiting.OrderCreation.OrderBurst = 4
	more.Server.Listen = "127.0.0.1:1"
	e.writeConfig(more)
	if err := e.srv.reload("test"); err != nil {
		t.Fatalf("reload: %v", err)
	}
	wantStatus(t, e.rawOrder(key, kid, "five.weir.test"), http.StatusCreated)
	wantStatus(t, e.rawOrder(key, kid, "six.weir.test"), http.StatusCreated)
	want429(t, e.rawOrder(key, kid, "seven.weir.test"), "order-creation", id)
	if r := e.srv.reloaded.restart; !slices.Contains(r, "server.listen") {
		t.Errorf("needs restart = %v, want server.listen", r)
	}
}

// TestReloadTriggers: SIGHUP and a change of the file each reload it.
func TestReloadTriggers(t *testing.T) {
	// Catch SIGHUP here too, so the test process survives it whenever it
	// arrives. The server's own watcher runs since startEnv.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	e := startEnv(t, nil)
	cfg := e.cfg

	reloadedAfter := func(since time.Time) bool {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			e.srv.reloaded.mu.Lock()
			at := e.srv.reloaded.at
			e.srv.reloaded.mu.Unlock()
			if at.After(since) {
				return true
			}
			time.Sleep(50 * time.Millisecond)
		}
		return false
	}

	// A changed file (the poll sees a new modification time).
	start := time.Now()
	cfg.CA.Policy.DeniedDomains = []string{"file.test"}
	time.Sleep(10 * time.Millisecond)
	e.writeConfig(cfg)
	if err := os.Chtimes(e.srv.configPath, time.Now(), time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if !reloadedAfter(start) {
		t.Fatal("a changed config file was not reloaded within 10 s")
	}
	// SIGHUP, once the watcher has had time to subscribe.
	time.Sleep(100 * time.Millisecond)
	start = time.Now()
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if !reloadedAfter(start) {
		t.Fatal("SIGHUP did not reload the config within 10 s")
	}
}
