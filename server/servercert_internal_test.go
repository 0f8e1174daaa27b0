// SPDX-License-Identifier: Apache-2.0

package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// leafValid is a certificate valid over [nb, nb+life).
func leafValid(t *testing.T, nb time.Time, life time.Duration) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(nb.UnixNano()), NotBefore: nb, NotAfter: nb.Add(life), DNSNames: []string{"weir.test"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

// TestServingCertRenews: weir's own certificate is served as it is until
// a third of its life is left; the handshake after that starts one
// renewal (however many handshakes come) and the next ones get the new
// certificate; a failed renewal keeps the current one and is tried again;
// an operator's certificate (no renew) is never renewed.
func TestServingCertRenews(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		first := leafValid(t, t0, 9*time.Minute)
		var renewals atomic.Int32
		var fail atomic.Bool
		renew := func(at time.Time) (tls.Certificate, error) {
			renewals.Add(1)
			if fail.Load() {
				return tls.Certificate{}, errors.New("the CA's key is unavailable")
			}
			return leafValid(t, at, 9*time.Minute), nil
		}
		s := newServingCert(first, renew, time.Now, slog.New(slog.NewTextHandler(io.Discard, nil)))
		serves := func() *x509.Certificate {
			t.Helper()
			c, err := s.tlsConfig().GetCertificate(&tls.ClientHelloInfo{})
			if err != nil {
				t.Fatal(err)
			}
			return c.Leaf
		}
		time.Sleep(5 * time.Minute) // 4 of 9 minutes left
		if serves() != first.Leaf || renewals.Load() != 0 {
			t.Fatalf("renewed with more than a third left (%d renewals)", renewals.Load())
		}
		time.Sleep(time.Minute) // 3 left: due
		fail.Store(true)
		for range 10 {
			if serves() != first.Leaf {
				t.Fatal("a handshake while the renewal runs got another certificate than the current one")
			}
		}
		synctest.Wait()
		if renewals.Load() != 1 || serves() != first.Leaf { // that handshake tries again: a second failure
			t.Fatalf("%d renewals for 10 handshakes, want 1; a failed renewal must keep the current certificate", renewals.Load())
		}
		synctest.Wait()
		fail.Store(false)
		serves() // the third try succeeds
		synctest.Wait()
		got := serves()
		if renewals.Load() != 3 || got == first.Leaf || !got.NotAfter.Equal(t0.Add(15*time.Minute)) {
			t.Errorf("after the retry: %d renewals, serving until %s; want a new certificate until %s", renewals.Load(), got.NotAfter, t0.Add(15*time.Minute))
		}

		op := newServingCert(first, nil, time.Now, nil)
		time.Sleep(time.Hour)
		if c, _ := op.get(nil); c.Leaf != first.Leaf {
			t.Error("an operator's certificate was replaced")
		}
	})
}
