// SPDX-License-Identifier: Apache-2.0

package web

import (
	"context"
	"sync"
)

// Warn is a readiness warning: a condition an operator should fix that
// does not make the process unready (a Redis without persistence, a
// limiter deciding in process). It returns "" when there is nothing to
// say. It must be fast; it runs on every /readyz.
type Warn func(ctx context.Context) string

// healthWarnings are the warnings of a Health, added after NewHealth.
type healthWarnings struct {
	mu    sync.Mutex
	warns map[string]Warn
}

// AddWarning adds the warning name, shown in the /readyz body's warnings
// while it has something to say. It may be called at any time.
func (h *Health) AddWarning(name string, w Warn) {
	h.warnings.mu.Lock()
	defer h.warnings.mu.Unlock()
	if h.warnings.warns == nil {
		h.warnings.warns = map[string]Warn{}
	}
	h.warnings.warns[name] = w
}

// warn returns what the warnings have to say, nil when nothing.
func (h *Health) warn(ctx context.Context) map[string]string {
	h.warnings.mu.Lock()
	ws := make(map[string]Warn, len(h.warnings.warns))
	for k, w := range h.warnings.warns {
		ws[k] = w
	}
	h.warnings.mu.Unlock()
	var out map[string]string
	for k, w := range ws {
		if s := w(ctx); s != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = s
		}
	}
	return out
}
