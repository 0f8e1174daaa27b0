// SPDX-License-Identifier: Apache-2.0

package system

import (
	"bufio"
	"bytes"
	"context"
	"crypto"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/storage/postgres/pgtest"
	"github.com/weir-pki/weir/storage/sqlite"
	"github.com/weir-pki/weir/web/admin"
)

// The helpers of the admin and dashboard tests that came from other files
// of package server.

// metricsLogBuf collects the server's log for inspection while the
// server keeps writing to it.
type metricsLogBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *metricsLogBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// snapshotTables are every table of the ACME store.
var snapshotTables = []string{"accounts", "orders", "authzs", "challenges", "certificates", "eab_keys"}

// dbSnapshot is the row count and a digest of the contents of each table.
type dbSnapshot struct {
	counts  map[string]int
	digests map[string]string
}

// snapshot reads every table through the store's read pool.
func snapshotDB(t *testing.T, e *env) dbSnapshot {
	t.Helper()
	db := e.srv.Store().(*sqlite.Store).DB()
	s := dbSnapshot{counts: map[string]int{}, digests: map[string]string{}}
	for _, table := range snapshotTables {
		var n int
		if err := db.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
			t.Fatalf("count %s: %v", table, err)
		}
		s.counts[table] = n
		rows, err := db.QueryContext(t.Context(), "SELECT * FROM "+table+" ORDER BY 1")
		if err != nil {
			t.Fatalf("read %s: %v", table, err)
		}
		cols, _ := rows.Columns()
		h := sha256.New()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatalf("scan %s: %v", table, err)
			}
			fmt.Fprintf(h, "%v\n", vals)
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("read %s: %v", table, err)
		}
		rows.Close()
		s.digests[table] = hex.EncodeToString(h.Sum(nil))
	}
	return s
}

// diff describes how after differs from s, "" when it does not.
func (s dbSnapshot) diff(after dbSnapshot) string {
	var out []string
	for _, table := range snapshotTables {
		switch {
		case s.counts[table] != after.counts[table]:
			out = append(out, fmt.Sprintf("%s: %d rows -> %d", table, s.counts[table], after.counts[table]))
		case s.digests[table] != after.digests[table]:
			out = append(out, fmt.Sprintf("%s: rows changed", table))
		}
	}
	return strings.Join(out, "; ")
}

// postgresSchema returns a DSN on a fresh schema of the test server.
func postgresSchema(t *testing.T) string {
	t.Helper()
	_, dsn := pgtest.Schema(t, "weir_e2e_")
	return dsn
}

// auditLine is the part of an audit event the tests read.
type auditLine struct {
	Type    string `json:"type"`
	Replica string `json:"replica"`
	Actor   struct {
		Kind, ID, Address string
	} `json:"actor"`
	Data map[string]any `json:"data"`
}

func readAudit(t *testing.T, path string) []auditLine {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []auditLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l auditLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, l)
	}
	return out
}

// eabRegister registers key with x/crypto/acme and an External Account
// Binding of kid MACed with hmacKey.
func (e *env) eabRegister(ctx context.Context, key crypto.Signer, kid string, hmacKey []byte) (*xacme.Account, error) {
	return e.Client(key).Register(ctx, &xacme.Account{
		ExternalAccountBinding: &xacme.ExternalAccountBinding{KID: kid, Key: hmacKey},
	}, xacme.AcceptTOS)
}

// wantACMEError fails t unless err is an ACME problem of type typ with
// status and a detail holding detail.
func wantACMEError(t *testing.T, what string, err error, status int, typ acme.ProblemType, detail string) {
	t.Helper()
	var ae *xacme.Error
	if !errors.As(err, &ae) {
		t.Fatalf("%s: error %v; want an ACME %s problem", what, err, typ)
	}
	if ae.StatusCode != status || ae.ProblemType != string(typ) || !strings.Contains(ae.Detail, detail) {
		t.Fatalf("%s: %d %s %q; want %d %s with %q", what, ae.StatusCode, ae.ProblemType, ae.Detail, status, typ, detail)
	}
}

// tenantClient registers a new account bound with a new EAB key of tenant
// (labelled as the tenant) and returns its client.
func (e *env) tenantClient(t *testing.T, tenant string) *xacme.Client {
	t.Helper()
	return e.eabKeyClient(t, tenant, tenant)
}

// eabKeyClient registers a new account bound with a new EAB key of label
// and tenant and returns its client.
func (e *env) eabKeyClient(t *testing.T, label, tenant string) *xacme.Client {
	t.Helper()
	c, _, _ := e.eabKeyAccount(t, label, tenant)
	return c
}

// eabKeyAccount is eabKeyClient, which also returns the EAB key the
// account is bound with and its HMAC key, decoded.
func (e *env) eabKeyAccount(t *testing.T, label, tenant string) (*xacme.Client, admin.EABKeyView, []byte) {
	t.Helper()
	var k admin.EABKeyView
	e.cli.JSON(t, &k, "eab", "create", "--label", label, "--tenant", tenant)
	hk, err := base64.RawURLEncoding.DecodeString(k.HMACKey)
	if err != nil {
		t.Fatal(err)
	}
	key := acmeenv.NewKey(t)
	if _, err := e.eabRegister(t.Context(), key, k.KeyID, hk); err != nil {
		t.Fatalf("register with a key of tenant %s: %v", tenant, err)
	}
	return e.Client(key), k, hk
}

// redisServer is a redis-server process of the test's own, so that it can
// be stopped and started again without touching anyone else's.
type redisServer struct {
	t    *testing.T
	bin  string
	port int
	cmd  *exec.Cmd
}

func startRedis(t *testing.T) *redisServer {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server is required under CI=true (apt-get install -y redis-server)")
		}
		t.Skip("redis-server not installed; apt-get install -y redis-server to run the Redis failure test")
	}
	ln := acmeenv.ListenLoopback(t)
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	r := &redisServer{t: t, bin: bin, port: port}
	r.start()
	t.Cleanup(r.stop)
	return r
}

func (r *redisServer) addr() string { return fmt.Sprintf("127.0.0.1:%d", r.port) }

func (r *redisServer) start() {
	r.t.Helper()
	r.cmd = exec.Command(r.bin, "--port", fmt.Sprint(r.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", r.t.TempDir())
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", r.addr(), 200*time.Millisecond); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.t.Fatalf("redis-server on %s did not start", r.addr())
}

// stop ends the process by its PID and waits for it.
func (r *redisServer) stop() {
	if r.cmd == nil || r.cmd.Process == nil {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = r.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = r.cmd.Process.Kill()
		<-done
	}
	r.cmd = nil
}
