// SPDX-License-Identifier: Apache-2.0

package server

import (
	"errors"
	"io"
	"log/slog"
	"time"
)

// Both log formats write durations the same way: an attribute KEY of a
// time.Duration becomes KEY_ms, a float of milliseconds, so that a JSON
// consumer reads the unit in the key instead of slog's bare nanoseconds
// (`"duration":160439`), and text and JSON agree.
func durationsInMilliseconds(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		return slog.Float64(a.Key+"_ms", float64(a.Value.Duration())/float64(time.Millisecond))
	}
	return a
}

// LogFailure writes err, why weir serve stops, as JSON log lines to w:
// one record per problem of a configuration (*ConfigProblems), else one.
func LogFailure(w io.Writer, err error) {
	log, _ := newLogger(LogConfig{Format: "json", Level: "error"}, w)
	lines := []string{err.Error()}
	var ps *ConfigProblems
	if errors.As(err, &ps) {
		lines = ps.Lines()
	}
	for _, l := range lines {
		log.Error("weir serve stopped", "err", l)
	}
}

// LogFormat is the log.format of the configuration file at path as far as
// it can be read, for reporting a file that does not load in its format.
func LogFormat(path string) string {
	if path == "" {
		return DefaultConfig().Log.Format
	}
	return legibleConfig(path).Log.Format
}

// Logger is the server's logger, in log.format, for its command to report
// with.
func (s *Server) Logger() *slog.Logger { return s.log }
