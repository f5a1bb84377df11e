package watch

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
)

// Injector sends requests of mcpflight's own to a stdio server inside
// the host's conversation, and takes the server's answers to them out of
// the conversation before the host sees them. A stdio server has one
// stream, the host's, so this is the only way to ask it something while
// a host talks to it; watch --observer uses it to read the observer.
//
// Each request goes to the server's stdin between two of the host's
// frames, never inside one, under an ID of the form
// "mcpflight-inject-RANDOM-N" that no host sends. While an answer is
// awaited, the server's stdout is forwarded a whole line at a time, and a
// line that answers an injected request is kept from the host. Neither
// the request nor its answer reaches the recording: the record is what
// the host and the server said to each other. The caller records the
// readings it makes.
//
// An answer that comes after its Call gave up, or after the host closed
// stdin, is still kept from the host for abandonedFor; the recording
// notes it. Give an Injector to one
// Stdio run (StdioConfig.Inject); once the run ended, Call fails with
// ErrInjectorClosed.
type Injector struct {
	prefix string
	next   atomic.Int64
	// watching counts the IDs whose answers are taken out (awaited or
	// abandoned): while it is 0, the server's stdout is forwarded as it
	// is read.
	watching atomic.Int32

	mu        sync.Mutex
	awaited   map[string]chan *jsonrpc.Message // by ID key
	abandoned map[string]time.Time             // by ID key: until when
	in        *serverInput
	rec       *Recorder
	closed    bool
}

// abandonedFor is how long an answer to a Call that gave up is still
// kept from the host; maxAbandoned bounds how many such IDs are kept.
const (
	abandonedFor = time.Minute
	maxAbandoned = 64
)

// ErrInjectorClosed is the error of a Call made before the Stdio run
// began or after it ended, or cut short by its end.
var ErrInjectorClosed = errors.New("the server's stdin is not open (the host closed it, or the server exited)")

// NewInjector returns an Injector for one Stdio run.
func NewInjector() *Injector {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return &Injector{prefix: "mcpflight-inject-" + hex.EncodeToString(b[:]) + "-",
		awaited: map[string]chan *jsonrpc.Message{}, abandoned: map[string]time.Time{}}
}

// Call sends the request (method, params) to the server and returns the
// server's answer to it, a result or an error response. It fails when
// ctx ends first, or when the server's stdin closes.
func (j *Injector) Call(ctx context.Context, method string, params any) (*jsonrpc.Message, error) {
	id := jsonrpc.StringID(fmt.Sprintf("%s%d", j.prefix, j.next.Add(1)))
	frame, err := jsonrpc.EncodeRequest(id, method, params)
	if err != nil {
		return nil, err
	}
	answer := make(chan *jsonrpc.Message, 1)
	j.mu.Lock()
	if j.closed || j.in == nil {
		j.mu.Unlock()
		return nil, ErrInjectorClosed
	}
	key := id.Key()
	j.awaited[key] = answer
	j.watching.Add(1)
	in := j.in
	j.mu.Unlock()

	// The ID is watched before the request is written, so that the
	// line answering it starts while the output is held a line at a
	// time.
	line := append(frame, '\n')
	if err := in.inject(line); err != nil {
		j.forget(key, false)
		return nil, err
	}
	select {
	case msg, ok := <-answer:
		if !ok {
			return nil, ErrInjectorClosed
		}
		return msg, nil
	case <-ctx.Done():
		// A request still waiting for the end of the host's frame is
		// never sent; one sent may still be answered.
		j.forget(key, !in.withdraw(line))
		return nil, ctx.Err()
	}
}

// forget stops awaiting key; abandon keeps its answer from the host for
// abandonedFor still.
func (j *Injector) forget(key string, abandon bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, ok := j.awaited[key]; !ok {
		return // answered meanwhile, or abandoned by close
	}
	delete(j.awaited, key)
	if !abandon {
		j.watching.Add(-1)
		return
	}
	j.abandonLocked(key, time.Now())
}

// abandonLocked keeps taking the answer to key, no longer awaited, out
// of the server's output for abandonedFor; the watching count carries
// over.
func (j *Injector) abandonLocked(key string, now time.Time) {
	j.expireLocked(now)
	if len(j.abandoned) >= maxAbandoned {
		j.watching.Add(-1) // the older ones are still kept; this one is not
		return
	}
	j.abandoned[key] = now.Add(abandonedFor)
}

// expireLocked drops the abandoned IDs whose time is up.
func (j *Injector) expireLocked(now time.Time) {
	for k, until := range j.abandoned {
		if now.After(until) {
			delete(j.abandoned, k)
			j.watching.Add(-1)
		}
	}
}

// attach connects the Injector to a run's server input.
func (j *Injector) attach(in *serverInput, rec *Recorder) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.in, j.rec = in, rec
}

// close ends the run: Calls waiting and to come fail. The answers to
// requests already written are still taken out of the server's output,
// which the host may go on reading after its stdin closed.
func (j *Injector) close() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return
	}
	j.closed = true
	now := time.Now()
	for k, ch := range j.awaited {
		close(ch)
		delete(j.awaited, k)
		j.abandonLocked(k, now)
	}
}

// take reports whether line (one whole line of the server's stdout)
// answers an injected request, and delivers it if it does.
func (j *Injector) take(line []byte) bool {
	if !bytes.Contains(line, []byte(j.prefix)) {
		return false
	}
	msg, err := jsonrpc.Decode(bytes.TrimRight(line, "\r\n"))
	if err != nil || !msg.Kind.IsResponse() || !msg.ID.IsString() {
		return false
	}
	key := msg.ID.Key()
	j.mu.Lock()
	defer j.mu.Unlock()
	if ch, ok := j.awaited[key]; ok {
		delete(j.awaited, key)
		j.watching.Add(-1)
		ch <- msg
		return true
	}
	if _, ok := j.abandoned[key]; ok {
		delete(j.abandoned, key)
		j.watching.Add(-1)
		if j.rec != nil {
			j.rec.Note(chrono.KindNote, chrono.ChannelObserver, fmt.Sprintf(
				"the server answered mcpflight's request %s after mcpflight stopped waiting for it (the read timed out, or the host closed stdin): kept from the host", msg.ID))
		}
		return true
	}
	return false
}

// serverInput is the server's stdin, written by the host's forwarder and
// by an Injector: injected frames go in only between the host's frames.
type serverInput struct {
	w  io.Writer
	mu sync.Mutex
	// midFrame is set while the host's last bytes written end inside a
	// frame (no newline yet); pending holds injected frames waiting for
	// its end.
	midFrame bool
	pending  [][]byte
	// failed is the error of a failed write: nothing more is written.
	failed error
}

// forward writes a piece of the host's stream, with the injected frames
// waiting for a frame's end after the first newline in it.
func (s *serverInput) forward(p []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		return s.failed
	}
	if len(s.pending) > 0 && s.midFrame {
		if i := bytes.IndexByte(p, '\n'); i >= 0 {
			if !s.write(p[:i+1]) {
				return s.failed
			}
			p = p[i+1:]
			s.midFrame = false
		}
	}
	if !s.midFrame {
		for _, f := range s.pending {
			if !s.write(f) {
				return s.failed
			}
		}
		s.pending = s.pending[:0]
	}
	if len(p) > 0 {
		if !s.write(p) {
			return s.failed
		}
		s.midFrame = p[len(p)-1] != '\n'
	}
	return nil
}

// inject writes frame now if the host is between frames, else queues it
// for the end of the host's frame.
func (s *serverInput) inject(frame []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.failed != nil:
		return s.failed
	case s.midFrame:
		s.pending = append(s.pending, frame)
		return nil
	case !s.write(frame):
		return s.failed
	}
	return nil
}

// withdraw takes frame out of the queue if it is still waiting there,
// and reports whether it was.
func (s *serverInput) withdraw(frame []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.pending {
		if &f[0] == &frame[0] {
			s.pending = append(s.pending[:i], s.pending[i+1:]...)
			return true
		}
	}
	return false
}

// write writes p whole; false (with failed set) if it could not.
func (s *serverInput) write(p []byte) bool {
	if _, err := s.w.Write(p); err != nil {
		s.failed = err
		return false
	}
	return true
}

// stop makes every later write fail with err (the server's stdin is
// closed).
func (s *serverInput) stop(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed == nil {
		s.failed = err
	}
}

// outputFilter takes the answers to injected requests out of the
// server's stdout: while the Injector watches an ID, each line that
// begins is held until it ends (or grows past holdLimit, when it is
// passed on as it comes, since no answer of the observer's is that
// large) and then given to the Injector or passed on.
type outputFilter struct {
	j *Injector
	// lineStart is set when the next byte begins a line; held is the
	// line being held, holding whether one is.
	lineStart bool
	holding   bool
	held      []byte
}

// holdLimit bounds the bytes of one line the filter holds.
const holdLimit = 1 << 20

// pass runs p through the filter, calling emit with the pieces the host
// gets, in order.
func (f *outputFilter) pass(p []byte, emit func([]byte)) {
	if !f.holding && f.j.watching.Load() == 0 {
		if len(p) > 0 {
			emit(p)
			f.lineStart = p[len(p)-1] == '\n'
		}
		return
	}
	for len(p) > 0 {
		if !f.holding {
			if f.lineStart && f.j.watching.Load() > 0 {
				f.holding = true
				continue
			}
			i := bytes.IndexByte(p, '\n')
			if i < 0 {
				emit(p)
				f.lineStart = false
				return
			}
			emit(p[:i+1])
			p, f.lineStart = p[i+1:], true
			continue
		}
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			f.held = append(f.held, p...)
			f.lineStart = false
			if len(f.held) > holdLimit {
				emit(f.held)
				f.release()
			}
			return
		}
		f.held = append(f.held, p[:i+1]...)
		p, f.lineStart = p[i+1:], true
		if !f.j.take(f.held) {
			emit(f.held)
		}
		f.release()
	}
}

// flush passes on a line still held when the output ends.
func (f *outputFilter) flush(emit func([]byte)) {
	if f.holding && len(f.held) > 0 {
		emit(f.held)
	}
	f.release()
}

// release ends holding, keeping the buffer unless a long line grew it.
func (f *outputFilter) release() {
	f.holding = false
	if cap(f.held) > 64<<10 {
		f.held = nil
	} else {
		f.held = f.held[:0]
	}
}
