// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/internal/audit"
	"github.com/weir-pki/weir/web/admin"
)

// AuditConfig is the audit trail (internal/audit): one hash-chained event
// per issuance, revocation, admin action and configuration reload.
type AuditConfig struct {
	// Sink is "file" (JSON lines, fsynced, rotated by size) or "log" (one
	// log record per event).
	Sink string `yaml:"sink"`
	// Path is the file, relative to data-dir; "{replica}" in it is the
	// replica ID, so replicas sharing a directory each write their own.
	Path string `yaml:"path"`
	// MaxSize is the size in bytes past which the file is rotated; 0
	// never rotates.
	MaxSize int64 `yaml:"max-size"`
	// ReplicaID names this replica in the events and the file name; empty
	// means the host name.
	ReplicaID string `yaml:"replica-id"`
	// Sync is when an event of sink: file is fsynced: "background" (the
	// line is written before the request goes on and fsynced right
	// after, off the request path) or "event" (fsynced before the request
	// goes on).
	Sync string `yaml:"sync"`
}

// The audit sinks, and the fsync modes of sink: file.
const (
	auditSinkFile = "file"
	auditSinkLog  = "log"

	auditSyncBackground = "background"
	auditSyncEvent      = "event"
)

// defaultAudit is the audit block's default.
func defaultAudit() AuditConfig {
	return AuditConfig{Sink: auditSinkFile, Path: "audit/audit-{replica}.jsonl", MaxSize: 64 << 20, Sync: auditSyncBackground}
}

func (c AuditConfig) validate() []error {
	var errs []error
	if c.Sink != auditSinkFile && c.Sink != auditSinkLog {
		errs = append(errs, fmt.Errorf("audit.sink: %q is neither %q nor %q", c.Sink, auditSinkFile, auditSinkLog))
	}
	if c.Sync != auditSyncBackground && c.Sync != auditSyncEvent {
		errs = append(errs, fmt.Errorf("audit.sync: %q is neither %q nor %q", c.Sync, auditSyncBackground, auditSyncEvent))
	}
	if c.Sink == auditSinkFile && c.Path == "" {
		errs = append(errs, fmt.Errorf("audit.path: must not be empty with sink: file"))
	}
	if c.MaxSize < 0 || (c.MaxSize > 0 && c.MaxSize < 64<<10) {
		errs = append(errs, fmt.Errorf("audit.max-size: %d is too small (0, or at least 65536)", c.MaxSize))
	}
	if strings.ContainsAny(c.ReplicaID, `/\`) {
		errs = append(errs, fmt.Errorf("audit.replica-id: %q must not contain a path separator", c.ReplicaID))
	}
	return errs
}

// replica is the replica ID of c.
func (c AuditConfig) replica() string {
	if c.ReplicaID != "" {
		return c.ReplicaID
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		return "weir"
	}
	return host
}

// AuditPath is the audit file of cfg (sink: file), absolute when
// cfg.DataDir is.
func AuditPath(cfg Config) string {
	p := filepath.FromSlash(strings.ReplaceAll(cfg.Audit.Path, "{replica}", cfg.Audit.replica()))
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(cfg.DataDir, p)
}

// auditTrail records weir's events in the audit sink. A failure to write
// is logged and counted (weir_audit_write_failures_total) and does not
// undo nor hold back what it records: the store has it already.
type auditTrail struct {
	sink *audit.Sink
	// vlog, when the verifiable log is on, gets the administrators'
	// actions and the reloads as entries (issuances and revocations
	// write theirs in their own transactions).
	vlog *verifiableLog
}

// openAudit opens the audit sink of cfg.
func openAudit(cfg Config, log *slog.Logger) (*auditTrail, error) {
	ac := audit.Config{Replica: cfg.Audit.replica(), MaxSize: cfg.Audit.MaxSize, Log: log, SyncEach: cfg.Audit.Sync == auditSyncEvent}
	if cfg.Audit.Sink == auditSinkFile {
		ac.Path = AuditPath(cfg)
	}
	sink, err := audit.Open(ac)
	if err != nil {
		return nil, err
	}
	return &auditTrail{sink: sink}, nil
}

func (t *auditTrail) close() error {
	if t == nil {
		return nil
	}
	return t.sink.Close()
}

func auditActor(a acme.Actor) audit.Actor {
	out := audit.Actor{Kind: a.Kind, ID: a.ID}
	if a.Address.IsValid() {
		out.Address = a.Address.String()
	}
	return out
}

// Issued implements acme.Auditor.
func (t *auditTrail) Issued(_ context.Context, cert *acme.Certificate, o *acme.Order, actor acme.Actor) {
	data := map[string]any{"serial": cert.Serial, "names": cert.Names, "account": string(cert.AccountID),
		"order": string(cert.OrderID), "profile": cert.Profile,
		"not_before": cert.NotBefore, "not_after": cert.NotAfter}
	if o.Replaces != "" {
		data["replaces"] = o.Replaces
	}
	if cert.Validations != nil {
		// How each name was validated, as stored with the certificate
		// (Baseline Requirements §3.2.2.4, §5.4.1).
		data["validations"] = cert.Validations
	}
	if leaf, err := x509.ParseCertificate(cert.DER); err == nil {
		data["issuer"] = leaf.Issuer.String()
		data["issuer_key_id"] = hex.EncodeToString(leaf.AuthorityKeyId)
	}
	t.sink.Record(audit.Event{Type: audit.TypeIssuance, Actor: auditActor(actor), Data: data})
}

// Revoked implements acme.Auditor.
func (t *auditTrail) Revoked(_ context.Context, cert *acme.Certificate, reason int, actor acme.Actor) {
	t.sink.Record(audit.Event{Type: audit.TypeRevocation, Actor: auditActor(actor), Data: map[string]any{
		"serial": cert.Serial, "names": cert.Names, "account": string(cert.AccountID),
		"reason": ca.ReasonString(reason), "reason_code": reason}})
}

// AdminAction implements admin.Auditor.
func (t *auditTrail) AdminAction(ctx context.Context, actor acme.Actor, a admin.AuditedAction) {
	data := map[string]any{"action": a.Action, "status": a.Status}
	if a.Request != nil {
		data["request"] = a.Request
	}
	ev := audit.Event{Type: audit.TypeAdminAction, Actor: auditActor(actor), Data: data}
	t.sink.Record(ev)
	t.vlog.event(ctx, ev)
}

// reloaded records a configuration reload: the keys it changed and the
// ones that wait for a restart, or why it was refused.
func (t *auditTrail) reloaded(trigger string, old, cur Config, restart []string, err error) {
	if t == nil {
		return
	}
	data := map[string]any{"trigger": trigger}
	if err != nil {
		data["refused"] = err.Error()
	} else {
		data["changed"] = configChanges(old, cur)
		if len(restart) > 0 {
			data["needs_restart"] = restart
		}
	}
	ev := audit.Event{Type: audit.TypeReload, Actor: audit.Actor{Kind: "system", ID: trigger}, Data: data}
	t.sink.Record(ev)
	t.vlog.event(context.Background(), ev)
}

// configChanges lists the keys, as dotted paths, whose values differ
// between old and cur; only the keys, never their values (secrets).
func configChanges(old, cur Config) []string {
	a, b := yamlTree(old), yamlTree(cur)
	var out []string
	diffTree("", a, b, &out)
	sort.Strings(out)
	return out
}

func yamlTree(c Config) any {
	data, err := yaml.Marshal(c)
	if err != nil {
		return nil
	}
	var tree any
	if yaml.Unmarshal(data, &tree) != nil {
		return nil
	}
	return tree
}

func diffTree(prefix string, a, b any, out *[]string) {
	ma, oka := a.(map[string]any)
	mb, okb := b.(map[string]any)
	if !oka || !okb {
		ya, _ := yaml.Marshal(a)
		yb, _ := yaml.Marshal(b)
		if string(ya) != string(yb) {
			*out = append(*out, prefix)
		}
		return
	}
	keys := map[string]bool{}
	for k := range ma {
		keys[k] = true
	}
	for k := range mb {
		keys[k] = true
	}
	for k := range keys {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		diffTree(p, ma[k], mb[k], out)
	}
}
