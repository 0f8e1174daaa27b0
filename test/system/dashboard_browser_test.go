// SPDX-License-Identifier: Apache-2.0

package system

import (
	"bytes"
	"cmp"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/server"
)

// browserTimeout bounds the whole browser session; each step has its own
// smaller bound.
const (
	browserTimeout = 60 * time.Second
	browserStep    = 20 * time.Second
)

// startBrowser launches a headless Chromium (Debian's package) with a
// fresh profile, stopped when the test ends. Without Chromium the test is
// skipped, or fails under CI=true.
func startBrowser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		const msg = "the dashboard browser test needs Chromium: apt-get install chromium"
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s (%v)", msg, err)
		}
		t.Skipf("%s (%v)", msg, err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	total, cancelTotal := context.WithTimeout(context.Background(), browserTimeout)
	alloc, cancelAlloc := chromedp.NewExecAllocator(total, opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc, chromedp.WithErrorf(t.Logf))
	t.Cleanup(func() {
		// Close the browser and wait for its process before the profile
		// directory is removed.
		_ = chromedp.Cancel(ctx)
		cancelCtx()
		cancelAlloc()
		cancelTotal()
	})
	// Start the browser now, so that a launch failure is reported as such.
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return ctx
}

// step runs browser actions within browserStep.
func step(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, browserStep)
	defer cancel()
	if err := chromedp.Run(sctx, actions...); err != nil {
		t.Fatalf("browser: %s: %v", what, err)
	}
}

// TestDashboardBrowser drives the dashboard in a real browser: a 429 is
// forced through ACME, then Chromium logs in with the admin token, finds
// the refusal in the limiter's recent 429s, resets the bucket with the
// reset form, sees the flash and the bucket full again in the status form,
// and takes a full-page screenshot. The next order then passes through
// ACME: the reset freed the bucket.
func TestDashboardBrowser(t *testing.T) {
	bctx := startBrowser(t)
	e := startEnv(t, func(c *server.Config) {
		c.RateLimiting.OrderCreation = ratelimit.OrderCreationConfig{Enabled: true, OrdersPerAccountPerHour: 20, OrderBurst: 1, SANBudgetPerAccountPerHour: 100}
	})
	if e.adminURL == "" {
		t.Fatal("the harness started no admin listener")
	}
	ctx, cancel := context.WithTimeout(t.Context(), browserTimeout)
	defer cancel()

	// Force a 429: burst 1, two orders.
	key := acmeenv.NewKey(t)
	acct, err := e.Client(key).Register(ctx, &xacme.Account{}, xacme.AcceptTOS)
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimPrefix(acct.URI, e.Base+"/acme/account/")
	bucket := "order-creation:" + id
	acmeenv.WantStatus(t, e.RawOrder(key, acct.URI, "b1.weir.test"), 201)
	acmeenv.Want429(t, e.RawOrder(key, acct.URI, "b2.weir.test"), "order-creation", id)

	// Log in: / sends the browser to the login page.
	var loc, heading string
	step(t, bctx, "open /",
		chromedp.Navigate(e.adminURL+"/"),
		chromedp.WaitVisible(`#token`, chromedp.ByQuery),
		chromedp.Location(&loc),
	)
	if loc != e.adminURL+"/login" {
		t.Fatalf("GET / led to %s, want the login page", loc)
	}
	if dir := os.Getenv("WEIR_DASHBOARD_SCREENSHOTS"); dir != "" {
		var b []byte
		step(t, bctx, "screenshot /login", chromedp.FullScreenshot(&b, 100))
		if err := os.WriteFile(filepath.Join(dir, "dashboard-login.png"), b, 0o644); err != nil {
			t.Errorf("WEIR_DASHBOARD_SCREENSHOTS: %v", err)
		}
	}
	step(t, bctx, "log in",
		chromedp.SendKeys(`#token`, e.adminToken(t), chromedp.ByQuery),
		chromedp.Click(`#login-submit`, chromedp.ByQuery),
		chromedp.WaitVisible(`#issuance`, chromedp.ByQuery),
		chromedp.Location(&loc),
		chromedp.Text(`main h1`, &heading, chromedp.ByQuery),
	)
	if loc != e.adminURL+"/" || heading != "Overview" {
		t.Fatalf("after login: %s with heading %q, want the overview", loc, heading)
	}

	// The limiter page lists the refusal.
	row := `#recent-429s tr[data-bucket="` + bucket + `"]`
	var limit, rowKey, recent string
	step(t, bctx, "open the limiter",
		chromedp.Click(`header nav a[href="/limiter"]`, chromedp.ByQuery),
		chromedp.WaitVisible(row, chromedp.ByQuery),
		chromedp.Text(row+` td.limit`, &limit, chromedp.ByQuery),
		chromedp.Text(row+` td.key`, &rowKey, chromedp.ByQuery),
		chromedp.Text(`#recent-429s`, &recent, chromedp.ByQuery),
	)
	if strings.TrimSpace(limit) != "order-creation" || strings.TrimSpace(rowKey) != id || !strings.Contains(recent, "new-order") {
		t.Fatalf("recent 429s row: limit %q key %q, want order-creation and %s; table:\n%s", limit, rowKey, id, recent)
	}

	// Reset the bucket with the reset form.
	var flash string
	step(t, bctx, "reset",
		chromedp.SendKeys(`#reset_key`, bucket, chromedp.ByQuery),
		chromedp.Click(`#reset-submit`, chromedp.ByQuery),
		chromedp.WaitVisible(`#flash`, chromedp.ByQuery),
		chromedp.Text(`#flash`, &flash, chromedp.ByQuery),
	)
	if strings.TrimSpace(flash) != "reset "+bucket {
		t.Fatalf("flash %q, want %q", flash, "reset "+bucket)
	}

	// The status form shows the bucket full again.
	cell := `#status-result tr[data-bucket="` + bucket + `"] td.remaining`
	var remaining, capacity string
	var ok1, ok2 bool
	step(t, bctx, "status",
		chromedp.SetValue(`#status_by`, "key", chromedp.ByQuery),
		chromedp.SendKeys(`#status_value`, bucket, chromedp.ByQuery),
		chromedp.Click(`#status-submit`, chromedp.ByQuery),
		chromedp.WaitVisible(cell, chromedp.ByQuery),
		chromedp.AttributeValue(cell, "data-remaining", &remaining, &ok1, chromedp.ByQuery),
		chromedp.AttributeValue(cell, "data-capacity", &capacity, &ok2, chromedp.ByQuery),
	)
	if !ok1 || !ok2 || remaining != capacity || capacity != "1" {
		t.Fatalf("after the reset %s has %q of %q left, want 1 of 1", bucket, remaining, capacity)
	}

	// A full-page screenshot of the limiter page.
	var shot []byte
	step(t, bctx, "screenshot", chromedp.FullScreenshot(&shot, 100))
	path := filepath.Join(t.TempDir(), "dashboard-limiter.png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Size() == 0 {
		t.Fatalf("screenshot %s: %v, size %d", path, err, st.Size())
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 1000 || b.Dy() < 600 {
		t.Errorf("screenshot is %dx%d, want the full 1280-wide page", b.Dx(), b.Dy())
	}
	t.Logf("screenshot: %s (%d bytes, %dx%d)", path, st.Size(), img.Bounds().Dx(), img.Bounds().Dy())
	if dir := os.Getenv("WEIR_DASHBOARD_SCREENSHOTS"); dir != "" {
		// Keep copies, of every page, for people working on the design.
		if err := os.WriteFile(filepath.Join(dir, "dashboard-limiter.png"), shot, 0o644); err != nil {
			t.Errorf("WEIR_DASHBOARD_SCREENSHOTS: %v", err)
		}
		for _, pg := range []string{"", "accounts", "accounts/" + id, "certs", "orders", "eab", "config"} {
			var b []byte
			step(t, bctx, "screenshot /"+pg, chromedp.Navigate(e.adminURL+"/"+pg), chromedp.FullScreenshot(&b, 100))
			name := "dashboard-" + strings.ReplaceAll(cmp.Or(pg, "overview"), "/", "-") + ".png"
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Errorf("WEIR_DASHBOARD_SCREENSHOTS: %v", err)
			}
		}
	}

	// The reset really freed the bucket: the next order passes.
	acmeenv.WantStatus(t, e.RawOrder(key, acct.URI, "b3.weir.test"), 201)
}
