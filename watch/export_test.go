package watch

import (
	"time"

	"github.com/mcpflight/mcpflight/chrono"
)

// SyncRecorder runs a recorder's work on the caller's goroutine, without
// its queue: each piece is copied as a forwarder's tap copies it, then
// framed, decoded, written and handed to the sinks at once, so that a
// benchmark measures the recording's CPU and allocations per frame alone.
type SyncRecorder struct {
	r             *Recorder
	stdin, stdout *stream
}

// NewSyncRecorder returns a SyncRecorder with a stdio conversation's
// streams.
func NewSyncRecorder(cfg RecorderConfig) *SyncRecorder {
	r := newRecorder(cfg)
	return &SyncRecorder{r: r, stdin: r.newStream(chrono.Out, "stdin", modeLines), stdout: r.newStream(chrono.In, "stdout", modeLines)}
}

// Host records p as read from the host (stdin).
func (s *SyncRecorder) Host(p []byte) { s.feed(s.stdin, p) }

// Server records p as read from the server (stdout).
func (s *SyncRecorder) Server(p []byte) { s.feed(s.stdout, p) }

func (s *SyncRecorder) feed(st *stream, p []byte) {
	t := tap{op: opData, s: st, at: time.Now(), data: append([]byte(nil), p...)}
	s.r.process(&t)
}

// Flush writes the lines gathered.
func (s *SyncRecorder) Flush() { s.r.flush() }
