package watch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
)

// Sink receives every event the recorder records, in order, from the
// recorder's goroutine alone: never from the forwarding path, so a slow
// sink costs the capture its completeness (the queue fills, pieces are
// dropped and counted), never the conversation its speed. The raw bytes
// of an event belong to it alone (not to a buffer the recorder reuses):
// a sink may keep the event, but must not modify its raw bytes, which
// every sink sees.
type Sink interface {
	Event(e chrono.Event)
}

// Defaults of RecorderConfig.
const (
	// DefaultQueueTaps is how many pieces (reads of a stream, heads,
	// harness events) may wait for the recorder.
	DefaultQueueTaps = 8192
	// DefaultQueueBytes is how many bytes of data may wait for the
	// recorder: the bound of the memory a fast talker or a stalled sink
	// can make the capture take.
	DefaultQueueBytes = 16 << 20
	// controlReserve is how many queue places beyond QueueTaps are kept
	// for the small events that say what happened (heads, ends, process
	// events), so that a queue full of data still records them.
	controlReserve = 1024
	// writeBatch is how many bytes of JSON Lines are gathered before a
	// write; a batch is also written whenever the queue runs empty.
	writeBatch = 64 << 10
	// batchWait is how long the recorder, having emptied the queue,
	// lets pieces gather before it takes them: while it waits, a push
	// does not wake it (unless the queue fills past an eighth of a
	// bound), so that a conversation of small frames pays no thread
	// wake-up per frame on its forwarding path, and the recorder works
	// in batches. It bounds the delay between a frame's passing and its
	// recording (a finding, a line of JSONL) to about a millisecond
	// more; the runtime's timers are about that coarse when idle.
	batchWait = time.Millisecond
)

// RecorderConfig configures a Recorder.
type RecorderConfig struct {
	// JSONL receives every event as one line of a JSON Lines chronology
	// (chrono's format: "mcpflight show" renders it). Lines are written
	// whole, in batches written when the queue runs empty or a batch
	// reaches 64 KiB, so a capture cut short (the shim SIGKILLed) ends on
	// a whole line. Nil writes none.
	JSONL io.Writer
	// Sinks receive every event after it is written.
	Sinks []Sink
	// Redactor redacts what is recorded, never what is forwarded; the
	// proxy adds to it the values of the credential headers it sees. A
	// new one when nil.
	Redactor *chrono.Redactor
	// MaxRaw bounds the raw bytes kept per event; chrono.DefaultMaxRaw
	// if zero. Event.Size gives the full size of a longer frame.
	MaxRaw int
	// QueueTaps and QueueBytes bound the queue between the forwarders
	// and the recorder: past either, data is dropped and counted
	// (Dropped). DefaultQueueTaps and DefaultQueueBytes if zero.
	QueueTaps, QueueBytes int
	// Start is the time offsets count from; the recorder's creation if
	// zero.
	Start time.Time
	// WriteEachEvent writes each line as soon as it is encoded instead of
	// in batches: slower, for a writer that must see every event at
	// once.
	WriteEachEvent bool
}

// Recorder turns what the forwarders tap off the wire into a chronology:
// it frames the bytes (stdio lines, HTTP bodies, SSE events), numbers,
// decodes, redacts and writes each event as a JSON line and hands it to
// the sinks, all on a goroutine of its own, and keeps nothing of an event
// once it is written. Forwarders hand it pieces through a bounded queue
// and never wait: when the queue is full a piece is dropped and counted
// (Dropped), and the recording says there where the capture is
// incomplete. While the conversation goes on it takes the pieces in
// batches, about a millisecond apart (batchWait), so an event reaches
// the JSONL and the sinks up to about a millisecond after it passed;
// its offset is the time it was read.
type Recorder struct {
	cfg      RecorderConfig
	redactor *chrono.Redactor
	start    time.Time
	q        queue
	done     chan struct{}

	droppedTaps  atomic.Uint64
	droppedBytes atomic.Uint64
	written      atomic.Uint64
	// drops counts the drops, and marked the drops the last mark of a
	// gap (opGap) queued covers: while drops is ahead, the next tap
	// queued must follow a mark.
	drops, marked atomic.Uint64

	closeOnce sync.Once
	// Set by the recorder goroutine before done is closed.
	err error

	// The recorder goroutine's own.
	seq      uint64
	last     time.Duration
	out      []byte
	sinkDead []bool
	// decoders are the decoders of bodies whose end has not come.
	decoders map[*decoder]struct{}
}

// NewRecorder starts a recorder. Close must be called to write the end
// of the capture.
func NewRecorder(cfg RecorderConfig) *Recorder {
	r := newRecorder(cfg)
	go r.run()
	return r
}

// newRecorder is a recorder whose goroutine is not started.
func newRecorder(cfg RecorderConfig) *Recorder {
	if cfg.MaxRaw <= 0 {
		cfg.MaxRaw = chrono.DefaultMaxRaw
	}
	if cfg.QueueTaps <= 0 {
		cfg.QueueTaps = DefaultQueueTaps
	}
	if cfg.QueueBytes <= 0 {
		cfg.QueueBytes = DefaultQueueBytes
	}
	if cfg.Redactor == nil {
		cfg.Redactor = chrono.NewRedactor()
	}
	if cfg.Start.IsZero() {
		cfg.Start = time.Now()
	}
	r := &Recorder{cfg: cfg, redactor: cfg.Redactor, start: cfg.Start, done: make(chan struct{}),
		sinkDead: make([]bool, len(cfg.Sinks)), decoders: map[*decoder]struct{}{}}
	r.q.init(cfg.QueueTaps, cfg.QueueBytes)
	return r
}

// Redactor is the redactor applied to what is recorded.
func (r *Recorder) Redactor() *chrono.Redactor { return r.redactor }

// Dropped is how many pieces were dropped because the queue was full,
// and how many bytes of data they held. Any drop makes the capture
// incomplete, which the recording says where it happened and again at
// its end.
func (r *Recorder) Dropped() (pieces, bytes uint64) {
	return r.droppedTaps.Load(), r.droppedBytes.Load()
}

// Recorded is how many events have been recorded so far.
func (r *Recorder) Recorded() uint64 { return r.written.Load() }

// Close records the end of the capture once everything queued before it
// is recorded (with a note of the pieces dropped, if any), writes the
// last lines, and returns the first error writing JSONL. Pieces tapped
// after Close are ignored: they are not part of the capture. If ctx ends first (a sink that does not
// return), Close returns ctx's error and leaves the recorder behind.
// Close does not close JSONL or the sinks.
func (r *Recorder) Close(ctx context.Context) error {
	r.closeOnce.Do(func() {
		r.q.close()
	})
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Note records a harness event (Dir Harness) of kind on channel, in
// order with the data tapped before it. It never waits.
func (r *Recorder) Note(kind chrono.Kind, channel, text string) {
	r.event(chrono.Event{Dir: chrono.Harness, Kind: kind, Channel: channel, Text: text}, time.Now())
}

// event queues a ready event.
func (r *Recorder) event(e chrono.Event, at time.Time) {
	r.push(tap{op: opEvent, ev: &e, at: at}, nil, true)
}

// data queues a copy of p, read from stream s at at. It never waits.
func (r *Recorder) data(s *stream, p []byte, at time.Time) {
	if len(p) == 0 {
		return
	}
	t := tap{op: opData, s: s, at: at, data: append([]byte(nil), p...)}
	r.push(t, s, false)
}

// end queues the end of stream s; text, if not empty, is recorded as a
// note (or, for an HTTP exchange, decided from what the stream carried:
// see endHow).
func (r *Recorder) end(s *stream, how endHow, text string, at time.Time) {
	r.push(tap{op: opEnd, s: s, at: at, how: how, text: text}, s, true)
}

// push queues t; control taps may use the reserve. A dropped tap is
// counted, and so are its bytes against s, whose next tap says so. The
// first tap queued after a drop is preceded by the mark of the gap, in
// the same step, so that whatever follows the lost piece in the
// conversation (a server's answer to a request whose bytes were lost, on
// another stream) comes after a notice that the record has a gap.
func (r *Recorder) push(t tap, s *stream, control bool) {
	if s != nil {
		t.lostTaps, t.lostBytes = s.lostTaps.Load(), s.lostBytes.Load()
	}
	drops := r.drops.Load()
	mark := drops > r.marked.Load()
	ok, closed := r.q.push(t, control, mark)
	if closed {
		return // after the end of the capture: not part of it
	}
	if ok {
		if mark {
			for m := r.marked.Load(); m < drops && !r.marked.CompareAndSwap(m, drops); m = r.marked.Load() {
			}
		}
		if s != nil && t.lostTaps > 0 {
			s.lostTaps.Add(-t.lostTaps)
			s.lostBytes.Add(-t.lostBytes)
		}
		return
	}
	r.dropped(t, s)
}

// dropped counts t, which was not queued, against s too.
func (r *Recorder) dropped(t tap, s *stream) {
	r.droppedTaps.Add(1)
	r.droppedBytes.Add(uint64(len(t.data)))
	if s != nil {
		s.lostTaps.Add(1)
		s.lostBytes.Add(int64(len(t.data)))
	}
	r.drops.Add(1)
}

// TextGapMarked is the text of the mark of a gap, on channel "recorder":
// it begins with TextCaptureIncomplete.
const TextGapMarked = TextCaptureIncomplete + ": the recorder's queue was full and pieces were dropped before this point (each stream's notice says how many it lost)"

// tapOp says what a tap carries.
type tapOp uint8

const (
	opData    tapOp = iota + 1 // bytes of a stream
	opEnd                      // the end of a stream
	opEvent                    // a ready event
	opReqHead                  // an HTTP request's line and headers
	opResHead                  // an HTTP response's status and headers
	opGap                      // the mark of a gap: taps were dropped before it
)

// endHow says how a stream ended.
type endHow uint8

const (
	endEOF          endHow = iota // the writer ended it
	endClientClosed               // the client stopped reading before its end
	endFailed                     // reading it failed
)

// tap is one piece handed from a forwarder to the recorder.
type tap struct {
	op   tapOp
	s    *stream
	at   time.Time
	data []byte
	ev   *chrono.Event
	head *httpHead
	how  endHow
	text string
	// lostTaps and lostBytes were dropped from s before this tap.
	lostTaps, lostBytes int64
	// plain marks data a decoder decoded from a compressed body.
	plain bool
}

// queue is the bounded queue between the forwarders and the recorder: a
// slice swapped out whole by the recorder, so that a push is a short
// critical section and the recorder takes every waiting tap at once.
//
// A push wakes the recorder only when it is parked (it found the queue
// empty twice, batchWait apart: the conversation went quiet) or when
// the queue is past its wake level; otherwise the recorder finds the
// tap when its batchWait ends. A wake-up is a futex call and another
// thread scheduled, which on a loaded machine costs as much as a pipe
// hop: paid per frame, it was most of what watch added to a round trip.
type queue struct {
	mu       sync.Mutex
	taps     []tap
	bytes    int
	maxTaps  int
	maxBytes int
	// wakeTaps and wakeBytes are the wake level: an eighth of the
	// bounds, so that a flood is taken long before it is dropped.
	wakeTaps  int
	wakeBytes int
	closed    bool
	parked    bool // the recorder waits on wake until the next push
	wake      chan struct{}
}

func (q *queue) init(maxTaps, maxBytes int) {
	q.maxTaps, q.maxBytes = maxTaps, maxBytes
	q.wakeTaps, q.wakeBytes = max(1, maxTaps/8), max(1, maxBytes/8)
	q.wake = make(chan struct{}, 1)
}

// appendLocked adds t, with q.mu held, and reports whether the recorder
// must be woken for it.
func (q *queue) appendLocked(t tap) (wake bool) {
	q.taps = append(q.taps, t)
	q.bytes += len(t.data)
	if q.parked || len(q.taps) >= q.wakeTaps || q.bytes >= q.wakeBytes {
		q.parked = false
		return true
	}
	return false
}

// signal wakes the recorder, if it is not already to wake.
func (q *queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// park marks the recorder parked, unless a tap is waiting or the queue
// is closed, and reports whether it is.
func (q *queue) park() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.parked = len(q.taps) == 0 && !q.closed
	return q.parked
}

// push adds t unless the queue is closed, full, or (for data) over its
// byte bound; with markGap, a mark of a gap first, in the reserve, or
// neither.
func (q *queue) push(t tap, control, markGap bool) (ok, closed bool) {
	q.mu.Lock()
	n := len(q.taps)
	full := n >= q.maxTaps || q.bytes+len(t.data) > q.maxBytes
	if control {
		full = n >= q.maxTaps+controlReserve
	}
	if markGap && n+1 >= q.maxTaps+controlReserve {
		full = true // the mark goes in the reserve, t after it
	}
	if q.closed || full {
		closed = q.closed
		q.mu.Unlock()
		return false, closed
	}
	wake := false
	if markGap {
		wake = q.appendLocked(tap{op: opGap, at: t.at})
	}
	wake = q.appendLocked(t) || wake
	q.mu.Unlock()
	if wake {
		q.signal()
	}
	return true, false
}

// pushInternal queues a tap the recorder makes itself (decoded bytes,
// an end that follows them): after Close too, since it belongs to what
// was queued before, and within the control reserve. A tap it cannot
// queue is counted as dropped.
func (r *Recorder) pushInternal(t tap) {
	q := &r.q
	q.mu.Lock()
	n := len(q.taps)
	ok := n < q.maxTaps+controlReserve && (t.op != opData || q.bytes+len(t.data) <= q.maxBytes)
	wake := false
	if ok {
		wake = q.appendLocked(t)
	}
	q.mu.Unlock()
	if !ok {
		r.dropped(t, t.s)
		return
	}
	if wake {
		q.signal()
	}
}

// close stops the queue taking taps and wakes the recorder.
func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

// take swaps the waiting taps for spare (emptied) and reports whether
// the queue is closed.
func (q *queue) take(spare []tap) ([]tap, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	got := q.taps
	q.taps, q.bytes = spare[:0], 0
	return got, q.closed
}

// run is the recorder's goroutine. Once it has emptied the queue it
// writes what it gathered and waits batchWait for more; if none came,
// it parks until the next push.
func (r *Recorder) run() {
	defer close(r.done)
	var batch []tap
	waited := false
	timer := time.NewTimer(batchWait)
	timer.Stop()
	for {
		var closed bool
		batch, closed = r.q.take(batch)
		if len(batch) == 0 {
			if closed {
				r.finish()
				return
			}
			r.flush()
			switch {
			case !waited:
				waited = true
				timer.Reset(batchWait)
				select {
				case <-timer.C:
				case <-r.q.wake:
					timer.Stop()
				}
			case r.q.park():
				<-r.q.wake
			}
			continue
		}
		waited = false
		for i := range batch {
			r.process(&batch[i])
			batch[i] = tap{} // keep nothing of it
		}
	}
}

// finish records the end of the capture and writes what is left. The
// decoders of bodies whose end never came (dropped) are stopped.
func (r *Recorder) finish() {
	for d := range r.decoders {
		_ = d.pw.CloseWithError(errClosedEarly)
	}
	if taps, bytes := r.Dropped(); taps > 0 {
		r.emit(chrono.Event{Dir: chrono.Harness, Kind: chrono.KindError, Channel: recorderChannel,
			Text: fmt.Sprintf("%s: %d pieces (%d bytes of data) were dropped in all because the recorder's queue was full",
				TextCaptureIncomplete, taps, bytes)}, time.Now())
	}
	r.flush()
}

// recorderChannel names the channel of the recorder's own events.
const recorderChannel = "recorder"

// emit numbers, prepares, writes and hands out one event.
func (r *Recorder) emit(e chrono.Event, at time.Time) {
	e = chrono.Prepare(e, r.redactor, r.cfg.MaxRaw)
	r.seq++
	e.Seq = r.seq
	off := at.Sub(r.start)
	if off < r.last {
		off = r.last // taps of two forwarders may reach the queue out of order
	}
	r.last, e.Offset = off, off
	if r.cfg.JSONL != nil && r.err == nil {
		var err error
		if r.out, err = chrono.AppendJSONL(r.out, e); err != nil {
			r.err = fmt.Errorf("watch: encoding event %d: %w", e.Seq, err)
		}
		if len(r.out) >= writeBatch || r.cfg.WriteEachEvent {
			r.flush()
		}
	}
	r.written.Add(1)
	for i, s := range r.cfg.Sinks {
		if !r.sinkDead[i] {
			r.toSink(i, s, e)
		}
	}
}

// toSink hands e to sink i; a sink that panics is recorded and no longer
// called, and the capture goes on.
func (r *Recorder) toSink(i int, s Sink, e chrono.Event) {
	defer func() {
		if p := recover(); p != nil {
			r.sinkDead[i] = true
			r.emit(chrono.Event{Dir: chrono.Harness, Kind: chrono.KindError, Channel: recorderChannel,
				Text: chrono.Sanitize(fmt.Sprintf("sink %d panicked on event %d and is no longer called: %v", i+1, e.Seq, p), false)}, time.Now())
		}
	}()
	s.Event(e)
}

// flush writes the lines gathered.
func (r *Recorder) flush() {
	if len(r.out) == 0 || r.err != nil {
		r.out = r.out[:0]
		return
	}
	if _, err := r.cfg.JSONL.Write(r.out); err != nil {
		r.err = fmt.Errorf("watch: writing the chronology: %w", err)
	}
	if cap(r.out) > 4*writeBatch {
		r.out = nil // a long event grew it; do not keep that
	} else {
		r.out = r.out[:0]
	}
}

// process records one tap.
func (r *Recorder) process(t *tap) {
	if t.lostTaps > 0 {
		r.lost(t)
	}
	switch t.op {
	case opEvent:
		r.emit(*t.ev, t.at)
	case opData:
		if d := t.s.decoder; d != nil && !t.plain {
			d.feed(t.data) // decoded, it comes back as plain taps
			return
		}
		t.s.write(r, t.data, t.at)
	case opEnd:
		if d := t.s.decoder; d != nil {
			// The decoded bytes are queued before the end, which is
			// queued again after them.
			d.finish(r)
			t.s.decoder = nil
			end := *t
			end.lostTaps, end.lostBytes = 0, 0
			r.pushInternal(end)
			return
		}
		t.s.finish(r, t.how, t.text, t.at)
	case opReqHead, opResHead:
		r.head(t)
	case opGap:
		r.emit(chrono.Event{Dir: chrono.Harness, Kind: chrono.KindError, Channel: recorderChannel, Text: TextGapMarked}, t.at)
	}
}

// lost records that pieces of t's stream were dropped before t: the
// frame they cut, then a notice.
func (r *Recorder) lost(t *tap) {
	t.s.dropped(r, t.at)
	r.emit(chrono.Event{Dir: chrono.Harness, Kind: chrono.KindError, Channel: t.s.channel,
		Text: fmt.Sprintf("%s: %d pieces (%d bytes) of %s were dropped here because the recorder's queue was full",
			TextCaptureIncomplete, t.lostTaps, t.lostBytes, t.s.channel)}, t.at)
}

// errClosedEarly is the end of a response stream the proxy stopped
// copying before its end: the client went away.
var errClosedEarly = errors.New("closed before its end")
