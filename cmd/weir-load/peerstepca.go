// SPDX-License-Identifier: Apache-2.0

// step-ca (github.com/smallstep/certificates) as a peer: its PKI, its
// ca.json with one ACME provisioner, its start.

package main

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"

	"github.com/weir-pki/weir/internal/weirproc"
)

// stepCAConfig is the part of step-ca's ca.json (authority/config.Config)
// the tool sets; step-ca fills in the rest (TLS options, templates).
type stepCAConfig struct {
	Root            string          `json:"root"`
	Crt             string          `json:"crt"`
	Key             string          `json:"key"`
	Address         string          `json:"address"`
	InsecureAddress string          `json:"insecureAddress"`
	DNSNames        []string        `json:"dnsNames"`
	Logger          stepCALogger    `json:"logger"`
	DB              stepCADB        `json:"db"`
	Authority       stepCAAuthority `json:"authority"`
	CommonName      string          `json:"commonName"`
}

type stepCALogger struct {
	Format string `json:"format"`
}

// stepCADB is db.Config.
type stepCADB struct {
	Type                  string `json:"type"`
	DataSource            string `json:"dataSource"`
	BadgerFileLoadingMode string `json:"badgerFileLoadingMode"`
}

type stepCAAuthority struct {
	Provisioners []stepCAProvisioner `json:"provisioners"`
}

// stepCAProvisioner is an ACME provisioner (authority/provisioner.ACME).
type stepCAProvisioner struct {
	Type       string       `json:"type"`
	Name       string       `json:"name"`
	Challenges []string     `json:"challenges"`
	Claims     stepCAClaims `json:"claims"`
}

// stepCAClaims are provisioner.Claims' TLS durations.
type stepCAClaims struct {
	MaxTLSDur     string `json:"maxTLSCertDuration"`
	DefaultTLSDur string `json:"defaultTLSCertDuration"`
}

// stepCAProvisionerName names the ACME provisioner: the directory is
// /acme/NAME/directory.
const stepCAProvisionerName = "acme"

// newStepCAConfig is the ca.json of a step-ca listening on address with
// the root, intermediate certificate and (encrypted) key at those paths,
// its database badger (v2) in dbDir, and one ACME provisioner offering
// http-01 with weir's lifetime as default and maximum.
func newStepCAConfig(address, rootPath, crtPath, keyPath, dbDir string) stepCAConfig {
	life := strconv.Itoa(int(peerLifetime.Hours())) + "h"
	return stepCAConfig{
		Root: rootPath, Crt: crtPath, Key: keyPath,
		Address: address, InsecureAddress: "",
		DNSNames:   []string{"127.0.0.1", "localhost"},
		Logger:     stepCALogger{Format: "text"},
		DB:         stepCADB{Type: "badgerv2", DataSource: dbDir},
		CommonName: "weir-load step-ca",
		Authority: stepCAAuthority{Provisioners: []stepCAProvisioner{{
			Type: "ACME", Name: stepCAProvisionerName, Challenges: []string{"http-01"},
			Claims: stepCAClaims{MaxTLSDur: life, DefaultTLSDur: life},
		}}},
	}
}

// stepCAArgs are step-ca's arguments: its DNS on the tool's server and
// its http-01 validations on the responder's port (--acme-http-port,
// which needs --insecure; without it step-ca dials port 80).
func stepCAArgs(cfgPath, passwordPath, dnsAddr string, httpPort int) []string {
	return []string{cfgPath, "--password-file", passwordPath, "--resolver", dnsAddr,
		"--acme-http-port", strconv.Itoa(httpPort), "--insecure"}
}

// startStepCA makes a root and an intermediate (its key encrypted with a
// random password written next to it), writes ca.json into dir and starts
// step-ca, waiting for its /health. step-ca makes its own listener
// certificate from the intermediate: the root is the client's only trust.
func startStepCA(ctx context.Context, ps *peerServer, dir string, so serverOptions) (*weirproc.Proc, error) {
	root, err := newCA("weir-load step-ca root", nil)
	if err != nil {
		return nil, err
	}
	inter, err := newCA("weir-load step-ca intermediate", root)
	if err != nil {
		return nil, err
	}
	pw := make([]byte, 16)
	if _, err := rand.Read(pw); err != nil {
		return nil, err
	}
	password := []byte(hex.EncodeToString(pw))
	path := func(name string) string { return filepath.Join(dir, name) }
	if err := root.writeCert(path("root_ca.crt")); err != nil {
		return nil, err
	}
	if err := inter.writeCert(path("intermediate_ca.crt")); err != nil {
		return nil, err
	}
	if err := inter.writeKey(path("intermediate_ca_key"), password); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path("password.txt"), password, 0o600); err != nil {
		return nil, err
	}
	addr, err := weirproc.FreeAddr()
	if err != nil {
		return nil, err
	}
	cfg, err := json.MarshalIndent(newStepCAConfig(addr, path("root_ca.crt"), path("intermediate_ca.crt"), path("intermediate_ca_key"), path("db")), "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(path("ca.json"), cfg, 0o600); err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	roots.AddCert(root.cert)
	proc, err := weirproc.StartCommand(ctx, weirproc.CommandOptions{
		Bin:  ps.spec.bin,
		Args: stepCAArgs(path("ca.json"), path("password.txt"), so.dnsAddr, so.httpPort),
		// STEPPATH: nothing of $HOME/.step is read or written.
		Env: append(append([]string{}, peerEnv...), "STEPPATH="+path("step")),
		Dir: dir, Listen: addr, Roots: roots, ReadyPath: "/health",
	})
	if err != nil {
		return nil, err
	}
	ps.dirURL = proc.Base + "/acme/" + stepCAProvisionerName + "/directory"
	ps.storage = "badger v2 (step-ca, in the run dir)"
	return proc, nil
}
