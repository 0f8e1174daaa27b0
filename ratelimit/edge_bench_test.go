// SPDX-License-Identifier: Apache-2.0

package ratelimit

import (
	"net/netip"
	"sync/atomic"
	"testing"
	"time"
)

// benchAddrs returns n distinct client addresses, half IPv4 and half IPv6.
func benchAddrs(n int) []netip.Addr {
	out := make([]netip.Addr, n)
	for i := range out {
		if i%2 == 0 {
			out[i] = netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		} else {
			out[i] = netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 0, 0, byte(i >> 8), byte(i), 0, 0, 0, 0, 0, 0, 0, 1})
		}
	}
	return out
}

// BenchmarkGlobalAllow measures Edge.Allow with the default global limit
// (200/min, burst 20) over 4096 clients in a 65,536-entry table; the
// decisions/s metric is the throughput asked of it (at least 2M/s).
func BenchmarkGlobalAllow(b *testing.B) {
	limit := DefaultPolicy().Limits[Global]
	addrs := benchAddrs(4096)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	b.Run("serial", func(b *testing.B) {
		e, err := NewEdge(limit, 1<<16)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			e.Allow(addrs[i&4095], start+int64(i))
			i++
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
	})
	b.Run("parallel", func(b *testing.B) {
		e, err := NewEdge(limit, 1<<16)
		if err != nil {
			b.Fatal(err)
		}
		var worker atomic.Int64
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			w := int(worker.Add(1))
			i := w * 7919
			for pb.Next() {
				e.Allow(addrs[i&4095], start+int64(i))
				i++
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
	})
}
