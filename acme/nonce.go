// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"container/heap"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"sync"
	"time"
)

// MemoryNonces is an in-process NonceStore for a single replica. A nonce is
// an AES-GCM sealed (counter, issue time) pair under a key made at start, so
// issuing one stores nothing. Redeemed counters are remembered up to a bound;
// when the bound is reached the oldest are forgotten and every nonce at or
// below them is refused, so memory stays bounded and no nonce redeems twice.
type MemoryNonces struct {
	aead    cipher.AEAD
	ttl     time.Duration
	maxUsed int
	now     func() time.Time

	mu      sync.Mutex
	counter uint64
	floor   uint64 // counters <= floor are refused
	used    map[uint64]struct{}
	order   counterHeap
}

// nonceLen is the decoded length: 12-byte GCM nonce || 16-byte ciphertext
// of the 16-byte plaintext || 16-byte tag.
const nonceLen = 12 + 16 + 16

// NewMemoryNonces makes a nonce store whose nonces expire after ttl and
// which remembers at most maxUsed redeemed nonces. now nil means time.Now.
func NewMemoryNonces(ttl time.Duration, maxUsed int, now func() time.Time) (*MemoryNonces, error) {
	if now == nil {
		now = time.Now
	}
	key := make([]byte, 16)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("nonces: key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("nonces: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("nonces: %w", err)
	}
	if ttl <= 0 || maxUsed <= 0 {
		return nil, fmt.Errorf("nonces: ttl and maxUsed must be positive")
	}
	return &MemoryNonces{aead: aead, ttl: ttl, maxUsed: maxUsed, now: now, used: make(map[uint64]struct{})}, nil
}

// Nonce implements NonceStore.
func (m *MemoryNonces) Nonce(context.Context) (string, error) {
	m.mu.Lock()
	m.counter++
	c := m.counter
	m.mu.Unlock()
	var buf [nonceLen]byte
	iv := buf[:12]
	// The IV is the counter itself: unique per key, as GCM requires.
	binary.BigEndian.PutUint64(iv[4:], c)
	var plain [16]byte
	binary.BigEndian.PutUint64(plain[:8], c)
	binary.BigEndian.PutUint64(plain[8:], uint64(m.now().Unix()))
	m.aead.Seal(buf[12:12], iv, plain[:], nil)
	return base64.RawURLEncoding.EncodeToString(buf[:]), nil
}

// Redeem implements NonceStore.
func (m *MemoryNonces) Redeem(_ context.Context, n string) (bool, error) {
	if base64.RawURLEncoding.DecodedLen(len(n)) != nonceLen {
		return false, nil
	}
	var buf [nonceLen]byte
	if _, err := base64.RawURLEncoding.Decode(buf[:], []byte(n)); err != nil {
		return false, nil
	}
	var plain [16]byte
	if _, err := m.aead.Open(plain[:0], buf[:12], buf[12:], nil); err != nil {
		return false, nil
	}
	c := binary.BigEndian.Uint64(plain[:8])
	issued := time.Unix(int64(binary.BigEndian.Uint64(plain[8:])), 0)
	if m.now().Sub(issued) > m.ttl {
		return false, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if c <= m.floor || c > m.counter {
		return false, nil
	}
	if _, dup := m.used[c]; dup {
		return false, nil
	}
	m.used[c] = struct{}{}
	heap.Push(&m.order, c)
	for len(m.used) > m.maxUsed {
		old := heap.Pop(&m.order).(uint64)
		delete(m.used, old)
		m.floor = old
	}
	return true, nil
}

type counterHeap []uint64

func (h counterHeap) Len() int           { return len(h) }
func (h counterHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h counterHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *counterHeap) Push(x any)        { *h = append(*h, x.(uint64)) }
func (h *counterHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
