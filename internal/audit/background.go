// SPDX-License-Identifier: Apache-2.0

package audit

import (
	"errors"
	"os"
	"sync"
)

// The background fsync (Config.SyncEach false).
//
// Record writes each event's line before it returns, so the events of the
// certificates a client has received are in the file even if weir is
// killed; what only an fsync guards against is the loss of the page cache
// itself (a power loss, a kernel crash). An fsync per event on the request
// path cost the issuance path 17 % of its CPU per certificate and 15 % of
// its latency (docs/performance.md, "Since 865343c"). The syncer fsyncs
// as soon as an event has been written and again as long as more were
// written meanwhile: one fsync at a time covers every line written before
// it began. A failed fsync is counted and logged like a failed write.

// syncer fsyncs the sink's file in the background.
type syncer struct {
	s       *Sink
	kick    chan struct{} // one pending wake-up
	quit    chan struct{}
	done    chan struct{}
	stopped sync.Once
}

// startSyncer starts the background fsync of s.
func startSyncer(s *Sink) *syncer {
	y := &syncer{s: s, kick: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go y.run()
	return y
}

// wake asks for an fsync of what has been written; nil does nothing.
func (y *syncer) wake() {
	if y == nil {
		return
	}
	select {
	case y.kick <- struct{}{}:
	default: // one is pending already: it covers this line too
	}
}

// stop ends the background fsync once it has finished the one it is
// running; nil does nothing. The caller fsyncs what remains.
func (y *syncer) stop() {
	if y == nil {
		return
	}
	y.stopped.Do(func() { close(y.quit) })
	<-y.done
}

func (y *syncer) run() {
	defer close(y.done)
	for {
		select {
		case <-y.quit:
			return
		case <-y.kick:
		}
		y.s.mu.Lock()
		f := y.s.f
		y.s.mu.Unlock()
		if f == nil {
			continue
		}
		// A rotation may close f meanwhile: it fsyncs f itself first.
		if err := f.Sync(); err != nil && !errors.Is(err, os.ErrClosed) {
			y.s.failures.Add(1)
			y.s.cfg.Log.Error("audit: the trail could not be fsynced", "file", y.s.cfg.Path, "err", err)
		}
	}
}
