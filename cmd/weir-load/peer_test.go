// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPebbleConfig: the JSON has pebble's keys (as its
// test/config/pebble-config.json spells them) with the tool's values.
func TestPebbleConfig(t *testing.T) {
	b, err := json.Marshal(newPebbleConfig("127.0.0.1:1", "127.0.0.1:2", "/d/cert.pem", "/d/key.pem", 5002, 5001))
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]map[string]any
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	p := top["pebble"]
	want := map[string]any{
		"listenAddress": "127.0.0.1:1", "managementListenAddress": "127.0.0.1:2",
		"certificate": "/d/cert.pem", "privateKey": "/d/key.pem",
		"httpPort": 5002.0, "tlsPort": 5001.0, "ocspResponderURL": "", "externalAccountBindingRequired": false,
		"keyAlgorithm": "ecdsa",
	}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("pebble.%s = %#v, want %#v", k, p[k], v)
		}
	}
	// As pebble reads it: its config struct, field names in Go's case.
	var c struct {
		Pebble struct {
			HTTPPort int
			Profiles map[string]struct{ ValidityPeriod uint64 }
		}
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if c.Pebble.HTTPPort != 5002 || c.Pebble.Profiles["default"].ValidityPeriod != 90*24*3600 {
		t.Errorf("as pebble reads it: %+v", c)
	}
	for _, e := range []string{"PEBBLE_VA_NOSLEEP=1", "PEBBLE_WFE_NONCEREJECT=0", "PEBBLE_AUTHZREUSE=100", "PEBBLE_VA_ALWAYS_VALID=0"} {
		if !slices.Contains(pebbleEnv, e) {
			t.Errorf("pebbleEnv lacks %s", e)
		}
	}
}

// TestStepCAConfig: ca.json has the PKI, a badger v2 database, the
// listener and one ACME provisioner with http-01 and 90-day certificates;
// the arguments move http-01 and DNS to the tool's servers.
func TestStepCAConfig(t *testing.T) {
	b, err := json.Marshal(newStepCAConfig("127.0.0.1:9", "/d/root.crt", "/d/int.crt", "/d/int.key", "/d/db"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Root, Crt, Key, Address string
		DNSNames                []string `json:"dnsNames"`
		DB                      struct{ Type, DataSource string }
		Authority               struct {
			Provisioners []struct {
				Type, Name string
				Challenges []string
				Claims     map[string]string
			}
		}
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if c.Root != "/d/root.crt" || c.Crt != "/d/int.crt" || c.Key != "/d/int.key" || c.Address != "127.0.0.1:9" ||
		!slices.Equal(c.DNSNames, []string{"127.0.0.1", "localhost"}) || c.DB.Type != "badgerv2" || c.DB.DataSource != "/d/db" {
		t.Errorf("ca.json: %s", b)
	}
	if len(c.Authority.Provisioners) != 1 {
		t.Fatalf("provisioners: %s", b)
	}
	p := c.Authority.Provisioners[0]
	if p.Type != "ACME" || p.Name != "acme" || !slices.Equal(p.Challenges, []string{"http-01"}) ||
		p.Claims["defaultTLSCertDuration"] != "2160h" || p.Claims["maxTLSCertDuration"] != "2160h" {
		t.Errorf("provisioner: %+v", p)
	}
	args := strings.Join(stepCAArgs("/d/ca.json", "/d/pw", "127.0.0.1:53", 5002), " ")
	if args != "/d/ca.json --password-file /d/pw --resolver 127.0.0.1:53 --acme-http-port 5002 --insecure" {
		t.Errorf("args: %s", args)
	}
}

// TestEncryptPKCS8: the intermediate key decrypts (PBES2, as step-ca's
// pemutil reads it) to the key, and chains verify.
func TestEncryptPKCS8(t *testing.T) {
	root, err := newCA("root", nil)
	if err != nil {
		t.Fatal(err)
	}
	inter, err := newCA("intermediate", root)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(root.cert)
	if _, err := inter.cert.Verify(x509.VerifyOptions{Roots: pool}); err != nil {
		t.Errorf("intermediate: %v", err)
	}
	path := filepath.Join(t.TempDir(), "key")
	if err := inter.writeKey(path, []byte("secret")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "ENCRYPTED PRIVATE KEY" {
		t.Fatalf("key file: %s", b)
	}
	var info encryptedPrivateKeyInfo
	if _, err := asn1.Unmarshal(block.Bytes, &info); err != nil {
		t.Fatal(err)
	}
	kdf := info.Algorithm.Params.KDF.Params
	if !info.Algorithm.Algorithm.Equal(oidPBES2) || !kdf.PRF.Algorithm.Equal(oidHMACWithSHA256) ||
		!info.Algorithm.Params.Scheme.Algorithm.Equal(oidAES256CBC) {
		t.Fatalf("algorithms: %+v", info.Algorithm)
	}
	key, _ := pbkdf2.Key(sha256.New, "secret", kdf.Salt, kdf.IterationCount, 32)
	c, _ := aes.NewCipher(key)
	data := info.Data
	cipher.NewCBCDecrypter(c, info.Algorithm.Params.Scheme.IV).CryptBlocks(data, data)
	data = data[:len(data)-int(data[len(data)-1])]
	k, err := x509.ParsePKCS8PrivateKey(data)
	if err != nil {
		t.Fatal(err)
	}
	if ek, ok := k.(*ecdsa.PrivateKey); !ok || !ek.Equal(inter.key) || ek.Curve != elliptic.P256() {
		t.Errorf("decrypted key differs")
	}
	leaf, err := newTLSLeaf(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf.cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: "127.0.0.1"}); err != nil {
		t.Errorf("listener leaf: %v", err)
	}
}

func TestParsePeerFlags(t *testing.T) {
	for s, want := range map[string]peerSpec{
		"pebble=/b/pebble": {"pebble", "/b/pebble"}, "step-ca=/b/step-ca": {"step-ca", "/b/step-ca"},
		"pebble=": {}, "HEAD": {}, "/tmp/weir": {}, "boulder=/b": {},
	} {
		if got, ok := parsePeer(s); got != want || ok != (want.kind != "") {
			t.Errorf("parsePeer(%q) = %+v, %v", s, got, ok)
		}
	}
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"-weir", "pebble=/b/pebble"}, ""},
		{[]string{"-weir", "step-ca=/b/step-ca", "-log"}, "a peer CA runs alone"},
		{[]string{"-weir", "pebble=/b/pebble", "-redis", "private"}, "a peer CA runs alone"},
		{[]string{"-compare", "HEAD,pebble=/b/pebble"}, ""},
		{[]string{"-compare", "pebble=/b/pebble,step-ca=/b/step-ca"}, ""},
		{[]string{"-compare", "HEAD,pebble=/b/pebble+log"}, "takes no +settings"},
	} {
		_, err := parseFlags(tc.args, io.Discard)
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.err)
		}
	}
	o := forPeer(options{weir: "pebble=/b", storage: "postgres", replicas: 3, log: true, redis: "private"})
	if o.storage != "sqlite" || o.replicas != 1 || o.log || o.redis != "none" {
		t.Errorf("forPeer: %+v", o)
	}
}

// TestPrintComparePeer: a peer side is named with its version, and its
// caveats follow the table.
func TestPrintComparePeer(t *testing.T) {
	run := map[int][]runResult{8: {{Concurrency: 8, CertsPerSec: 100}}}
	a := &compareSide{Name: "HEAD", Rev: "abc1234", Runs: run}
	b := &compareSide{Name: "pebble=/b/pebble", Rev: "v2.10.3", Runs: run}
	rep := &compareReport{Storage: "sqlite", RateLimits: "off", Rounds: 1, Sides: [2]*compareSide{a, b}}
	for i := range rep.Sides {
		rep.Medians[i] = map[int]runResult{8: medianOf(run[8])}
	}
	var out bytes.Buffer
	printCompare(&out, rep, false)
	for _, want := range []string{"A = HEAD abc1234, B = pebble v2.10.3 (/b/pebble);", "pebble keeps everything in memory (no durability"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in\n%s", want, out.String())
		}
	}
}

type fixedResponse struct{ res *http.Response }

func (f fixedResponse) RoundTrip(*http.Request) (*http.Response, error) { return f.res, nil }

// TestPebbleOrderLocation: a finalize response without a Location gets
// its order's.
func TestPebbleOrderLocation(t *testing.T) {
	for _, tc := range []struct{ method, url, have, want string }{
		{http.MethodPost, "https://127.0.0.1:1/finalize-order/abc", "", "https://127.0.0.1:1/my-order/abc"},
		{http.MethodPost, "https://127.0.0.1:1/finalize-order/abc", "https://x/o", "https://x/o"},
		{http.MethodPost, "https://127.0.0.1:1/my-order/abc", "", ""},
		{http.MethodGet, "https://127.0.0.1:1/finalize-order/abc", "", ""},
	} {
		res := &http.Response{Header: http.Header{}}
		if tc.have != "" {
			res.Header.Set("Location", tc.have)
		}
		req, _ := http.NewRequest(tc.method, tc.url, nil)
		got, err := pebbleOrderLocation{fixedResponse{res}}.RoundTrip(req)
		if err != nil || got.Header.Get("Location") != tc.want {
			t.Errorf("%s %s: Location %q, %v; want %q", tc.method, tc.url, got.Header.Get("Location"), err, tc.want)
		}
	}
}

// TestPeerSmoke issues a few certificates from each peer whose binary
// $WEIR_LOAD_PEBBLE or $WEIR_LOAD_STEP_CA names (not in CI: skipped
// without them).
func TestPeerSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts peer CAs")
	}
	for kind, env := range map[string]string{"pebble": "WEIR_LOAD_PEBBLE", "step-ca": "WEIR_LOAD_STEP_CA"} {
		t.Run(kind, func(t *testing.T) {
			bin := os.Getenv(env)
			if bin == "" {
				t.Skipf("$%s names no %s binary", env, kind)
			}
			if _, err := os.Stat(bin); err != nil {
				t.Skipf("$%s: %v", env, err)
			}
			var stdout, stderr bytes.Buffer
			code := run([]string{"-weir", kind + "=" + bin, "-c", "2", "-n", "10", "-runs", "1", "-warmup", "0", "-quiet", "0", "-retries", "0", "-json"}, &stdout, &stderr)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr.String())
			}
			var rep report
			if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(rep.Weir, kind+" v") || len(rep.Levels) != 1 || rep.Levels[0].Median.Certs != 10 || rep.Levels[0].ErrorsTotal != 0 {
				t.Errorf("report: %s\n%s", stdout.String(), stderr.String())
			}
		})
	}
}
