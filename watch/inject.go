package watch

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"

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
// stdin, is still kept from the host (for the maxAbandoned latest such
// requests); the recording notes it. A Call never waits on the server's
// stdin: its request is queued, and written by the run's injection
// writer or by the host's forwarder at the end of the host's frame. Give
// an Injector to one Stdio run (StdioConfig.Inject); once the run ended,
// Call fails with ErrInjectorClosed.
type Injector struct {
	prefix string
	next   atomic.Int64
	// watching counts the IDs whose answers are taken out (awaited or
	// abandoned): while it is 0, the server's stdout is forwarded as it
	// is read.
	watching atomic.Int32

	mu      sync.Mutex
	awaited map[string]chan *jsonrpc.Message // by ID key
	// abandoned are the IDs whose answers are still kept from the host
	// though no Call awaits them, oldest first.
	abandoned []string
	in        *serverInput
	rec       *Recorder
	closed    bool
}

// maxAbandoned bounds how many IDs whose Call gave up still have their
// answers kept from the host: past it, the oldest is no longer watched.
const maxAbandoned = 64

// ErrInjectorClosed is the error of a Call made before the Stdio run
// began or after it ended, or cut short by its end.
var ErrInjectorClosed = errors.New("the server's stdin is not open (the host closed it, or the server exited)")

// NewInjector returns an Injector for one Stdio run.
func NewInjector() *Injector {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return &Injector{prefix: "mcpflight-inject-" + hex.EncodeToString(b[:]) + "-", awaited: map[string]chan *jsonrpc.Message{}}
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
	req := &injected{line: append(frame, '\n')}
	if err := in.inject(req); err != nil {
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
		// A request not written yet never will be; one written may
		// still be answered.
		j.forget(key, !req.withdraw())
		return nil, ctx.Err()
	}
}

// forget stops awaiting key; abandon keeps its answer from the host.
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
	j.abandonLocked(key)
}

// abandonLocked keeps taking the answer to key, no longer awaited, out
// of the server's output; the watching count carries over. Past
// maxAbandoned the oldest abandoned ID is no longer watched.
func (j *Injector) abandonLocked(key string) {
	if len(j.abandoned) >= maxAbandoned {
		j.abandoned = j.abandoned[1:]
		j.watching.Add(-1)
	}
	j.abandoned = append(j.abandoned, key)
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
	for k, ch := range j.awaited {
		close(ch)
		delete(j.awaited, k)
		j.abandonLocked(k)
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
	if i := slices.Index(j.abandoned, key); i >= 0 {
		j.abandoned = slices.Delete(j.abandoned, i, i+1)
		j.watching.Add(-1)
		if j.rec != nil {
			j.rec.Note(chrono.KindNote, chrono.ChannelObserver, fmt.Sprintf(
				"the server answered mcpflight's request %s after mcpflight stopped waiting for it (the read timed out, or the host closed stdin): kept from the host", msg.ID))
		}
		return true
	}
	return false
}

// injected is a request of an Injector's on its way to the server. Its
// state moves once, from queued to sent (by whoever writes it) or to
// withdrawn (by its Call giving up), so that a request is either written
// whole or never.
type injected struct {
	line  []byte
	state atomic.Int32
}

const (
	injectQueued int32 = iota
	injectSent
	injectWithdrawn
)

// withdraw takes the request back unless it was written, and reports
// whether it did.
func (r *injected) withdraw() bool { return r.state.CompareAndSwap(injectQueued, injectWithdrawn) }

// serverInput is the server's stdin, written by the host's forwarder and,
// for an Injector, by the injection writer (runInjections): injected
// requests go in only between the host's frames. A write that waits on a
// full pipe holds mu; nothing a Call does takes it.
type serverInput struct {
	w  io.Writer
	mu sync.Mutex
	// midFrame is set while the host's last bytes written end inside a
	// frame (no newline yet); pending holds injected requests waiting for
	// its end.
	midFrame bool
	pending  []*injected
	// failed is the error of a failed write: nothing more is written.
	failed error
	// queue takes injected requests to the injection writer; stopped is
	// set once nothing more may be queued.
	queue   chan *injected
	stopped atomic.Bool
}

// maxQueued bounds the injected requests waiting for the writer.
const maxQueued = 16

func newServerInput(w io.Writer) *serverInput {
	return &serverInput{w: w, queue: make(chan *injected, maxQueued)}
}

// forward writes a piece of the host's stream, with the injected requests
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
	if !s.midFrame && !s.sendPending() {
		return s.failed
	}
	if len(p) > 0 {
		if !s.write(p) {
			return s.failed
		}
		s.midFrame = p[len(p)-1] != '\n'
	}
	return nil
}

// inject queues r for the injection writer; it never waits.
func (s *serverInput) inject(r *injected) error {
	if s.stopped.Load() {
		return ErrInjectorClosed
	}
	select {
	case s.queue <- r:
		return nil
	default:
		return errInjectBusy
	}
}

// errInjectBusy is the error of a request that finds maxQueued others
// waiting for the server's stdin.
var errInjectBusy = errors.New("mcpflight's earlier requests are still waiting for the server's stdin")

// runInjections writes the queued injected requests, each now if the
// host is between frames, else at the end of its frame (forward), until
// done is closed.
func (s *serverInput) runInjections(done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case r := <-s.queue:
			s.place(r)
		}
	}
}

// place writes r now if the host is between frames, else leaves it for
// the end of the host's frame.
func (s *serverInput) place(r *injected) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed == nil {
		s.pending = append(s.pending, r)
		if !s.midFrame {
			s.sendPending()
		}
	}
}

// sendPending writes the pending requests not withdrawn, with mu held;
// false (with failed set) if a write failed.
func (s *serverInput) sendPending() bool {
	for _, r := range s.pending {
		if r.state.CompareAndSwap(injectQueued, injectSent) && !s.write(r.line) {
			return false
		}
	}
	clear(s.pending)
	s.pending = s.pending[:0]
	return true
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
// closed), and every later inject.
func (s *serverInput) stop(err error) {
	s.stopped.Store(true)
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
