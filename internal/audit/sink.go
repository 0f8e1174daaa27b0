// SPDX-License-Identifier: Apache-2.0

package audit

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config is where a Sink writes.
type Config struct {
	// Path is the JSON-lines file; "" writes the events to Log instead
	// (sink: log). A rotated file keeps Path's name with "-<UTC time>"
	// before its extension (rotatedName), so the files of one trail sort
	// by name in their order, the current one last.
	Path string
	// Replica names the writer in every event; replicas sharing a
	// directory each write their own Path.
	Replica string
	// MaxSize is the size in bytes past which the file is rotated before
	// the next event; 0 never rotates.
	MaxSize int64
	// Log receives the events of sink: log, and the sink's failures.
	Log *slog.Logger
	// Now nil means time.Now.
	Now func() time.Time
	// SyncEach fsyncs every event before Record returns. Without it each
	// event is written before Record returns (a killed process loses
	// none) and fsynced right after by a background goroutine, one fsync
	// for every event written meanwhile, so that a power loss can lose
	// only the events of the last fsync's time (background.go).
	SyncEach bool
}

// Sink appends events to the trail. It is safe for concurrent use: the
// events are chained in the order Record is called.
type Sink struct {
	cfg      Config
	mu       sync.Mutex
	f        *os.File // nil for sink: log
	size     int64
	prev     string
	seq      uint64
	failures atomic.Uint64
	// syncer is the background fsync of Config.SyncEach false (nil when
	// it is set, or for sink: log).
	syncer *syncer
}

// Open opens the trail of cfg and continues its chain from its last line.
// A torn last line (a process killed while writing it) is cut off and
// that fact is the first event written.
func Open(cfg Config) (*Sink, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Sink{cfg: cfg}
	if cfg.Path == "" {
		return s, nil
	}
	if err := os.MkdirAll(filepath.Dir(cfg.Path), 0o700); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	f, err := os.OpenFile(cfg.Path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	torn, err := s.resume(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("audit: %s: %w", cfg.Path, err)
	}
	s.f = f
	if !cfg.SyncEach {
		s.syncer = startSyncer(s)
	}
	if torn > 0 {
		err := s.Record(Event{Type: TypeTruncated, Actor: Actor{Kind: "system", ID: cfg.Replica},
			Data: map[string]any{"file": cfg.Path, "bytes": torn,
				"why": "the last line was torn (the process stopped while writing it); it was cut off"}})
		if err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// resume cuts a torn last line off f and reads the chain's state from its
// last line, or from the newest rotated file's when f is empty. It
// returns how many bytes it cut off.
func (s *Sink) resume(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	last, complete, err := lastLine(f, st.Size())
	if err != nil {
		return 0, err
	}
	var torn int64
	if !complete {
		torn = int64(len(last))
		if err := f.Truncate(st.Size() - torn); err != nil {
			return 0, err
		}
		if err := f.Sync(); err != nil {
			return 0, err
		}
		if last, _, err = lastLine(f, st.Size()-torn); err != nil {
			return 0, err
		}
	}
	s.size = st.Size() - torn
	if len(last) == 0 {
		if last, err = s.lastRotatedLine(); err != nil || len(last) == 0 {
			return torn, err
		}
	}
	pl, err := parseLine(last)
	if err != nil {
		return 0, fmt.Errorf("its last line cannot continue the chain (%v); move the file aside to start a new one", err)
	}
	s.prev, s.seq = pl.Hash, pl.Seq
	return torn, nil
}

// lastRotatedLine is the last line of the newest rotated file, if any.
func (s *Sink) lastRotatedLine() ([]byte, error) {
	rotated := RotatedFiles(s.cfg.Path)
	if len(rotated) == 0 {
		return nil, nil
	}
	f, err := os.Open(rotated[len(rotated)-1])
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	last, _, err := lastLine(f, st.Size())
	return last, err
}

// lastLine returns the last line of the first size bytes of f, without
// its newline, and whether it had one (false: a torn line).
func lastLine(f *os.File, size int64) ([]byte, bool, error) {
	if size == 0 {
		return nil, true, nil
	}
	const chunk = 64 << 10
	var buf []byte
	end := size
	for end > 0 {
		start := max(0, end-chunk)
		b := make([]byte, end-start)
		if _, err := f.ReadAt(b, start); err != nil && !errors.Is(err, io.EOF) {
			return nil, false, err
		}
		buf = append(b, buf...)
		end = start
		body := buf
		if start+int64(len(buf)) == size && len(body) > 0 && body[len(body)-1] == '\n' {
			body = body[:len(body)-1]
		}
		if i := strings.LastIndexByte(string(body), '\n'); i >= 0 || end == 0 {
			complete := buf[len(buf)-1] == '\n'
			return append([]byte{}, body[i+1:]...), complete, nil
		}
	}
	return nil, true, nil
}

// RotatedFiles are the rotated files of the trail at path, oldest first.
func RotatedFiles(path string) []string {
	ext := filepath.Ext(path)
	base := strings.TrimSuffix(path, ext)
	matches, _ := filepath.Glob(base + "-*" + ext)
	var out []string
	for _, m := range matches {
		stamp := strings.TrimSuffix(strings.TrimPrefix(m, base+"-"), ext)
		if _, err := time.Parse(rotatedLayout, stamp); err == nil {
			out = append(out, m)
		}
	}
	sort.Strings(out)
	return out
}

// rotatedLayout names a rotated file by the time it was rotated.
const rotatedLayout = "20060102T150405.000000000Z"

// rotatedName is the name of the trail at path rotated at t.
func rotatedName(path string, t time.Time) string {
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "-" + t.UTC().Format(rotatedLayout) + ext
}

// Record appends ev to the trail (and fsyncs it, or has it fsynced right
// after: Config.SyncEach) or logs it (sink: log).
// A failure is logged, counted (Failures) and returned; the chain stays
// whole: a line that failed is cut off again.
func (s *Sink) Record(ev Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.record(ev)
	if err != nil {
		s.failures.Add(1)
		s.cfg.Log.Error("audit: the event could not be written", "type", ev.Type, "err", err)
	}
	return err
}

func (s *Sink) record(ev Event) error {
	r := record{Time: s.cfg.Now().UTC(), Replica: s.cfg.Replica, Seq: s.seq + 1, Event: ev, Prev: s.prev}
	line, hash, err := encodeLine(r)
	if err != nil {
		return err
	}
	if s.f == nil {
		s.cfg.Log.Info("audit", "event", string(line))
		s.prev, s.seq = hash, r.Seq
		return nil
	}
	if s.cfg.MaxSize > 0 && s.size > 0 && s.size+int64(len(line))+1 > s.cfg.MaxSize {
		if err := s.rotate(); err != nil {
			return fmt.Errorf("rotating %s: %w", s.cfg.Path, err)
		}
	}
	line = append(line, '\n')
	if _, err := s.f.Write(line); err != nil {
		s.f.Truncate(s.size)
		return err
	}
	if s.syncer == nil {
		if err := s.f.Sync(); err != nil {
			s.f.Truncate(s.size)
			return err
		}
	}
	s.size += int64(len(line))
	s.prev, s.seq = hash, r.Seq
	s.syncer.wake()
	return nil
}

// rotate renames the full file aside and starts an empty one; the chain
// goes on into it.
func (s *Sink) rotate() error {
	to := rotatedName(s.cfg.Path, s.cfg.Now())
	if err := os.Rename(s.cfg.Path, to); err != nil {
		return err
	}
	f, err := os.OpenFile(s.cfg.Path, os.O_RDWR|os.O_CREATE|os.O_APPEND|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if d, err := os.Open(filepath.Dir(s.cfg.Path)); err == nil {
		d.Sync()
		d.Close()
	}
	s.f.Sync() // what the background fsync has not reached yet
	s.f.Close()
	s.f, s.size = f, 0
	return nil
}

// Failures is the number of events that could not be written.
func (s *Sink) Failures() uint64 { return s.failures.Load() }

// Close stops the background fsync, fsyncs the file and closes it.
func (s *Sink) Close() error {
	s.syncer.stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	err := errors.Join(s.f.Sync(), s.f.Close())
	s.f = nil
	return err
}
