// Package chrono is the chronology: an append-only, sequence-numbered log of
// every wire frame and harness event of one case. It is the evidence behind
// every verdict.
//
// Appending takes a short mutex and never waits on a reader or a sink:
// streaming sinks follow the log from their own goroutine (see Stream), so a
// slow sink can never block the protocol path.
package chrono

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/mcpflight/mcpflight/jsonrpc"
)

// Direction says which way a frame travelled.
type Direction string

// Directions. Out is from the harness to the target, In from the target.
const (
	Out     Direction = "out"
	In      Direction = "in"
	Harness Direction = "harness"
)

// Kind is the type of an event.
type Kind string

// Event kinds. Frame and Stderr come from the wire; the rest are harness
// events recorded in the same log.
const (
	KindFrame      Kind = "frame"
	KindStderr     Kind = "stderr"
	KindCheckpoint Kind = "checkpoint"
	KindDeadline   Kind = "deadline"
	KindExit       Kind = "exit"
	KindState      Kind = "state"
	KindDecision   Kind = "decision"
	KindNote       Kind = "note"
	KindError      Kind = "error"
	// KindHTTP is an HTTP exchange's request line or status with its
	// headers, or an SSE event that carried no JSON-RPC message.
	KindHTTP Kind = "http"
)

// TextStreamClosed begins the text of the event (KindDecision, Dir
// Harness) that records a client closing a request's response stream
// before its response: "closing the response stream of request ID: …",
// written by the checker's HTTP transport when it cancels under
// 2026-07-28 and by watch when it sees a host do so, and read by the
// rules (package monitor) and the explorer. Under 2026-07-28 Streamable
// HTTP that close is the request's cancel (CAN-43); under 2025-11-25 a
// disconnection, not a cancel (HTTP-25).
const TextStreamClosed = "closing the response stream of request "

// The observer's readings in a watched conversation (watch --observer):
// a harness note on ChannelObserver, TextObserverAsked when the read is
// sent and TextObserverRead followed by the counts
// (profile.Observation.String) when it is answered, written by watch and
// judged by the rules (package monitor), also again from a recording.
const (
	ChannelObserver   = "observer"
	TextObserverAsked = "reading the observer"
	TextObserverRead  = "observer read: "
)

// DefaultMaxRaw bounds the raw bytes kept per event.
const DefaultMaxRaw = 64 << 10

// MaxText bounds each text field of an event (Text, Channel, From, To
// and the summary's fields), which may quote the peer: a longer one is
// cut at a character boundary and marked "… (truncated, N bytes)".
const MaxText = 2 << 10

// Clip cuts s to at most n bytes, at a character boundary, with a marker
// that gives the full length: "… (truncated, N bytes)".
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (truncated, %d bytes)", len(s))
}

// clipField cuts s to MaxText with a marker.
func clipField(s string) string { return Clip(s, MaxText) }

// clipFields applies clipField to every text field of e.
func clipFields(e Event) Event {
	e.Channel, e.Text, e.From, e.To = clipField(e.Channel), clipField(e.Text), clipField(e.From), clipField(e.To)
	if s := e.Summary; s != nil && len(s.Kind)+len(s.Method)+len(s.ID)+len(s.Token)+len(s.RequestID)+len(s.Malformed) > MaxText {
		c := *s
		c.Kind, c.Method, c.ID, c.Token, c.RequestID, c.Malformed = clipField(c.Kind), clipField(c.Method), clipField(c.ID),
			clipField(c.Token), clipField(c.RequestID), clipField(c.Malformed)
		e.Summary = &c
	}
	return e
}

// Default caps of one log, so that a flooding peer cannot eat the
// machine: past DefaultMaxBytes of raw bytes events keep no raw bytes,
// and past DefaultMaxEvents events are counted, not kept. Reaching either
// cap is itself recorded, once, as an error event. The event cap is about
// 200 times what the busiest case of the catalogue records against the
// reference server (236 events), and bounds a flood to ~25 MB of events.
const (
	DefaultMaxEvents = 50_000
	DefaultMaxBytes  = 64 << 20
)

// Summary is the parsed gist of a frame.
type Summary struct {
	Kind      string `json:"kind,omitempty"`
	Method    string `json:"method,omitempty"`
	ID        string `json:"id,omitempty"`
	Token     string `json:"progressToken,omitempty"`
	RequestID string `json:"requestId,omitempty"`
	Malformed string `json:"malformed,omitempty"`
}

// Event is one entry of the chronology.
type Event struct {
	Seq       uint64        `json:"seq"`
	Offset    time.Duration `json:"offsetNs"`
	Dir       Direction     `json:"dir"`
	Channel   string        `json:"channel,omitempty"`
	Kind      Kind          `json:"kind"`
	Raw       []byte        `json:"-"`
	Size      int           `json:"size,omitempty"`
	Truncated bool          `json:"truncated,omitempty"`
	Summary   *Summary      `json:"summary,omitempty"`
	Text      string        `json:"text,omitempty"`
	From      string        `json:"from,omitempty"`
	To        string        `json:"to,omitempty"`

	// Decoded, when set, is what jsonrpc.Decode made of Raw, kept by a
	// producer that decoded the frame anyway (KeepDecoded) so that
	// Message need not decode it again. It is not part of the
	// chronology: never written, dropped by Prepare unless Raw is kept
	// whole and unchanged, and equal to any other (Decoded.Equal).
	Decoded *Decoded `json:"-"`
}

// Decoded is a frame's decoding that an event carries for its consumers
// (Event.KeepDecoded, Event.Message): a jsonrpc.Message whose Raw is not
// used. It is shared by every consumer of the event, and read only.
type Decoded jsonrpc.Message

// Equal reports true: a decoding is a cache of what Raw says, not part of
// the event's value, so comparing events (go-cmp uses this method) does
// not look at it.
func (*Decoded) Equal(*Decoded) bool { return true }

// KeepDecoded records that the event's raw bytes decode (jsonrpc.Decode,
// without error) to m, for Message to return instead of decoding them
// again: a recorder that decoded a frame for its summary hands the
// decoding on to the event's consumers. m's Raw is not used, and m must
// not be modified afterwards; nil forgets a decoding kept.
func (e *Event) KeepDecoded(m *jsonrpc.Message) { e.Decoded = (*Decoded)(m) }

// Message decodes the event's raw bytes again, or returns what its
// producer kept of their decoding (KeepDecoded): the same message either
// way, a copy of its own for the caller, whose Raw is the event's. It
// fails for truncated or non-frame events.
func (e Event) Message() (*jsonrpc.Message, error) {
	if e.Kind != KindFrame || e.Truncated {
		return nil, errors.New("chrono: event holds no complete frame")
	}
	if e.Decoded != nil {
		m := jsonrpc.Message(*e.Decoded)
		m.Raw = e.Raw
		return &m, nil
	}
	return jsonrpc.Decode(e.Raw)
}

// MarshalJSON writes Raw as text so that JSON Lines stay readable: what
// encoding/json writes of the event's exported fields but Raw, then Raw
// as the string "raw" (omitted when empty).
func (e Event) MarshalJSON() ([]byte, error) {
	return appendEvent(nil, e, false), nil
}

// Log is one case's chronology. The zero value is not usable; call New.
type Log struct {
	mu        sync.Mutex
	start     time.Time
	maxRaw    int
	maxEvents int
	maxBytes  int
	rawBytes  int
	dropped   uint64
	capped    map[string]bool
	events    []Event
	// changed is closed at the next append once someone waits for it
	// (Changed, WaitFor), and is nil while no one does: an append then
	// allocates no channel.
	changed chan struct{}
	redact  atomic.Pointer[Redactor]
	// into, when set, is the log l records into instead (RecordInto).
	into atomic.Pointer[Log]
	// filter, when set, rewrites each event appended to l (Filter).
	filter atomic.Pointer[func(Event) Event]
}

// Option configures a Log.
type Option func(*Log)

// WithMaxRaw sets how many raw bytes each event keeps.
func WithMaxRaw(n int) Option { return func(l *Log) { l.maxRaw = n } }

// WithCaps sets how many events the log keeps and how many raw bytes in
// all; zero or less means no cap.
func WithCaps(maxEvents, maxBytes int) Option {
	return func(l *Log) { l.maxEvents, l.maxBytes = maxEvents, maxBytes }
}

// WithRedactor makes the log redact r's secrets from every event it
// stores (see SetRedactor).
func WithRedactor(r *Redactor) Option { return func(l *Log) { l.redact.Store(r) } }

// SetRedactor makes the log redact r's secrets from every event appended
// from now on: raw bytes, texts, state names and summaries. The evidence
// then never holds a credential, whatever the target echoes back.
func (l *Log) SetRedactor(r *Redactor) {
	l.redact.Store(r)
	if t := l.into.Load(); t != nil {
		t.redact.Store(r)
	}
}

// RecordInto makes l a stand-in for to: from now on every method of l
// acts on to (appends, lengths, waits), until RecordInto(nil) gives l its
// own events back. to takes l's redactor, when l has one. A connection
// and session that cases use one after another (the runner shares a
// stdio server's session between cases that leave it as they found it)
// record into one such stand-in, and each case points it at its own
// chronology, so that every case's evidence is a log of its own, with
// sequence numbers from 1. A to that stands in for another log is taken
// as that log.
func (l *Log) RecordInto(to *Log) {
	if to != nil {
		if to = to.current(); to == l {
			to = nil
		}
	}
	if to != nil {
		if r := l.redact.Load(); r != nil {
			to.redact.Store(r)
		}
	}
	l.into.Store(to)
}

// Filter makes l pass every event appended to it through f first, and
// store what f returns in its place: the event itself, or another, such
// as a note that says what was set aside. The stand-in of a session that
// cases share (RecordInto) uses it to keep the late frames of an earlier
// case out of the chronology of the case that uses the session now. f is
// called from the appending goroutine, before the event is redacted; nil
// removes the filter.
func (l *Log) Filter(f func(Event) Event) {
	if f == nil {
		l.filter.Store(nil)
		return
	}
	l.filter.Store(&f)
}

// current is the log l's methods act on: the one it records into, or l.
func (l *Log) current() *Log {
	if t := l.into.Load(); t != nil {
		return t
	}
	return l
}

// New returns an empty log whose offsets count from now.
func New(opts ...Option) *Log {
	l := &Log{start: time.Now(), maxRaw: DefaultMaxRaw, maxEvents: DefaultMaxEvents, maxBytes: DefaultMaxBytes,
		capped: map[string]bool{}}
	for _, o := range opts {
		o(l)
	}
	return l
}

// Append adds an event, giving it the next sequence number and the offset
// since the log began, and returns it as stored.
func (l *Log) Append(e Event) Event {
	if f := l.filter.Load(); f != nil {
		e = (*f)(e)
	}
	l = l.current()
	full := l.full()
	if full {
		// Past the event cap the event is only counted below.
		e = clipFields(e)
	} else {
		e = Prepare(e, l.redact.Load(), l.maxRaw)
	}
	l.mu.Lock()
	if l.maxEvents > 0 && len(l.events) >= l.maxEvents {
		l.dropped++
		if !l.capped["events"] {
			l.capped["events"] = true
			l.appendLocked(Event{Dir: Harness, Channel: "chronology", Kind: KindError,
				Text: fmt.Sprintf("cap of %d events reached: later events are counted, not kept", l.maxEvents)})
		}
		l.mu.Unlock()
		return Event{}
	}
	if l.maxBytes > 0 && l.rawBytes+len(e.Raw) > l.maxBytes && len(e.Raw) > 0 {
		e.Raw, e.Truncated = nil, true
		if !l.capped["bytes"] {
			l.capped["bytes"] = true
			l.appendLocked(Event{Dir: Harness, Channel: "chronology", Kind: KindError,
				Text: fmt.Sprintf("cap of %d raw bytes reached: later events keep no raw bytes", l.maxBytes)})
		}
	}
	l.rawBytes += len(e.Raw)
	e = l.appendLocked(e)
	l.mu.Unlock()
	return e
}

// Prepare is what a chronology stores of e, numbering aside: e with r's
// secrets redacted (RedactEvent; r may be nil), its text fields clipped
// to MaxText, and a copy of at most maxRaw of its raw bytes, Size giving
// the full length and Truncated set when bytes were cut. Log.Append
// stores this; a recorder that streams events without keeping them
// (JSON Lines written as they come) applies it to get the same events.
// The result never shares e's Raw.
//
// A decoding the event kept (KeepDecoded) is kept only when Raw is kept
// whole and as it was: not when the redactor changed it or it was cut.
func Prepare(e Event, r *Redactor, maxRaw int) Event {
	raw := e.Raw
	if !r.Empty() {
		e = r.RedactEvent(e, maxRaw)
	}
	e = clipFields(e)
	if len(e.Raw) > 0 {
		if e.Size == 0 {
			e.Size = len(e.Raw)
		}
		n := min(len(e.Raw), maxRaw)
		e.Truncated = e.Truncated || n < len(e.Raw)
		e.Raw = bytes.Clone(e.Raw[:n])
	}
	if e.Decoded != nil && (e.Truncated || !bytes.Equal(e.Raw, raw)) {
		e.Decoded = nil
	}
	return e
}

// RedactEvent replaces r's secrets in every string of e: raw bytes,
// texts, state names and summary. Raw bytes are first clipped to maxRaw
// (what the caller keeps) plus the longest secret, so that a secret
// straddling the cut is still found whole; Size keeps the full length.
// An unclipped frame's JSON is also redacted as decoded, for a secret
// written with escapes.
func (r *Redactor) RedactEvent(e Event, maxRaw int) Event {
	if len(e.Raw) > 0 {
		raw := e.Raw
		if e.Size == 0 {
			e.Size = len(e.Raw)
		}
		if limit := maxRaw + r.maxPattern(); len(e.Raw) > limit {
			e.Raw, e.Truncated = e.Raw[:limit], true
		}
		e.Raw = r.Bytes(e.Raw)
		if e.Kind == KindFrame && !e.Truncated {
			e.Raw = r.decodedJSON(e.Raw)
		}
		if e.Truncated || !bytes.Equal(e.Raw, raw) {
			e.Decoded = nil // a decoding of bytes no longer there
		}
	}
	e.Channel, e.Text, e.From, e.To = r.String(e.Channel), r.String(e.Text), r.String(e.From), r.String(e.To)
	if e.Summary != nil {
		s := *e.Summary
		s.Kind, s.Method, s.ID, s.Token, s.RequestID, s.Malformed = r.String(s.Kind), r.String(s.Method), r.String(s.ID),
			r.String(s.Token), r.String(s.RequestID), r.String(s.Malformed)
		e.Summary = &s
	}
	return e
}

// appendLocked numbers and stores e and wakes waiters; l.mu is held.
func (l *Log) appendLocked(e Event) Event {
	e.Seq = uint64(len(l.events)) + 1
	e.Offset = time.Since(l.start)
	l.events = append(l.events, e)
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
	return e
}

// Dropped is how many events were counted but not kept, past the cap.
func (l *Log) Dropped() uint64 {
	l = l.current()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dropped
}

// CapReached describes the caps this log has reached ("" for none): past
// the event cap later events were only counted, past the byte cap they
// kept no raw bytes. Either way the chronology is incomplete evidence.
func (l *Log) CapReached() string {
	l = l.current()
	l.mu.Lock()
	defer l.mu.Unlock()
	var parts []string
	if l.capped["events"] {
		parts = append(parts, fmt.Sprintf("the chronology's cap of %d events was reached (%d later events counted, not kept)", l.maxEvents, l.dropped))
	}
	if l.capped["bytes"] {
		parts = append(parts, fmt.Sprintf("the chronology's cap of %d raw bytes was reached (later events keep no raw bytes)", l.maxBytes))
	}
	return strings.Join(parts, "; ")
}

// full reports whether the event cap has been reached, so that the next
// event will only be counted.
func (l *Log) full() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.maxEvents > 0 && len(l.events) >= l.maxEvents
}

// Frame records a wire frame. msg may be nil, in which case the frame is
// decoded here for its summary; decodeErr, if set, marks it malformed.
func (l *Log) Frame(dir Direction, channel string, raw []byte, msg *jsonrpc.Message, decodeErr error) Event {
	if l.current().full() {
		// Past the event cap the frame is only counted: spare a flood
		// the decoding and copying of what is thrown away.
		return l.Append(Event{Dir: dir, Channel: channel, Kind: KindFrame})
	}
	if msg == nil && decodeErr == nil {
		msg, decodeErr = jsonrpc.Decode(raw)
	}
	return l.Append(Event{Dir: dir, Channel: channel, Kind: KindFrame, Raw: raw, Summary: Summarize(msg, decodeErr)})
}

// Harness records a harness event such as a checkpoint, deadline or decision.
func (l *Log) Harness(kind Kind, channel, text string) Event {
	return l.Append(Event{Dir: Harness, Channel: channel, Kind: kind, Text: text})
}

// State records a state change of something the harness tracks.
func (l *Log) State(channel, from, to string) Event {
	return l.Append(Event{Dir: Harness, Channel: channel, Kind: KindState, From: from, To: to})
}

// Events returns a copy of every event so far.
func (l *Log) Events() []Event {
	l = l.current()
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Event(nil), l.events...)
}

// Snapshot returns the events so far without copying them: a read-only
// view that later appends never change, since an event is never modified
// once appended. Callers must not modify it (Events returns a copy); a
// capped log of DefaultMaxEvents events is then not held twice.
func (l *Log) Snapshot() []Event {
	l = l.current()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.events[:len(l.events):len(l.events)]
}

// Since returns the events with sequence numbers greater than seq.
func (l *Log) Since(seq uint64) []Event {
	l = l.current()
	l.mu.Lock()
	defer l.mu.Unlock()
	if seq >= uint64(len(l.events)) {
		return nil
	}
	return append([]Event(nil), l.events[seq:]...)
}

// Len is the number of events so far, which is also the last sequence number.
func (l *Log) Len() uint64 {
	l = l.current()
	l.mu.Lock()
	defer l.mu.Unlock()
	return uint64(len(l.events))
}

// Changed returns a channel closed at the next Append after this call.
func (l *Log) Changed() <-chan struct{} {
	l = l.current()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changedLocked()
}

// changedLocked is Changed with l.mu held.
func (l *Log) changedLocked() chan struct{} {
	if l.changed == nil {
		l.changed = make(chan struct{})
	}
	return l.changed
}

// WaitFor blocks until an event after sequence number after satisfies match,
// or ctx ends. match sees each event once, in order, and runs without the
// log's lock held.
func (l *Log) WaitFor(ctx context.Context, after uint64, match func(Event) bool) (Event, error) {
	l = l.current()
	for {
		// Take the pending events and the wake-up channel together, then
		// match outside the lock so that match may use the log itself.
		l.mu.Lock()
		pending := l.events[min(after, uint64(len(l.events))):]
		after = uint64(len(l.events))
		ch := l.changedLocked()
		l.mu.Unlock()
		for _, e := range pending {
			if match(e) {
				return e, nil
			}
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}

// WriteJSONL writes every event as one JSON object per line, terminal
// safe (SafeJSON).
func (l *Log) WriteJSONL(w io.Writer) error {
	enc := newLineEncoder(w)
	for _, e := range l.Snapshot() {
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	return nil
}

// lineEncoder writes values as JSON Lines through SafeJSON.
type lineEncoder struct {
	w   io.Writer
	buf bytes.Buffer
	enc *json.Encoder
}

func newLineEncoder(w io.Writer) *lineEncoder {
	le := &lineEncoder{w: w}
	le.enc = json.NewEncoder(&le.buf)
	return le
}

// AppendJSONL appends e to dst as one line of a JSON Lines chronology,
// byte for byte as WriteJSONL and Stream write it (terminal safe,
// newline-terminated), so that a recorder can batch whole lines into
// one write: a file cut off between two writes still ends on a whole
// line that ReadJSONL reads.
func AppendJSONL(dst []byte, e Event) ([]byte, error) {
	// What MarshalJSON writes (compact, HTML escaped), with SafeJSON's
	// escapes made as it is written: no second pass.
	return append(appendEvent(dst, e, true), '\n'), nil
}

// Encode writes v as one line.
func (le *lineEncoder) Encode(v any) error {
	le.buf.Reset()
	if err := le.enc.Encode(v); err != nil {
		return err
	}
	_, err := le.w.Write(SafeJSON(le.buf.Bytes()))
	return err
}

// Stream copies events to w as JSON Lines from a goroutine of its own, as
// they are appended. Append never waits for w. stop ends the stream after
// everything appended so far has been written, and returns the first write
// error.
func (l *Log) Stream(w io.Writer) (stop func() error) {
	l = l.current()
	done := make(chan struct{})
	finished := make(chan error, 1)
	go func() {
		enc := newLineEncoder(w)
		var written uint64
		var werr error
		for {
			ch := l.Changed()
			for _, e := range l.Since(written) {
				if werr == nil {
					werr = enc.Encode(e)
				}
				written = e.Seq
			}
			select {
			case <-ch:
			case <-done:
				for _, e := range l.Since(written) {
					if werr == nil {
						werr = enc.Encode(e)
					}
				}
				finished <- werr
				return
			}
		}
	}()
	var once sync.Once
	var err error
	return func() error {
		once.Do(func() {
			close(done)
			err = <-finished
		})
		return err
	}
}

// Summarize extracts the method, id and progress token of a decoded frame.
func Summarize(msg *jsonrpc.Message, decodeErr error) *Summary {
	if decodeErr != nil {
		var de *jsonrpc.DecodeError
		if errors.As(decodeErr, &de) {
			return &Summary{Malformed: string(de.Class)}
		}
		return &Summary{Malformed: decodeErr.Error()}
	}
	if msg == nil {
		return nil
	}
	s := &Summary{Kind: msg.Kind.String(), Method: msg.Method}
	if msg.ID.IsValid() {
		s.ID = msg.ID.String()
	} else if msg.NullID {
		s.ID = "null"
	}
	if len(msg.Params) > 0 && mayHoldTokenOrRequestID(msg.Params) {
		var p struct {
			Meta struct {
				Token json.RawMessage `json:"progressToken"`
			} `json:"_meta"`
			Token     json.RawMessage `json:"progressToken"`
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(msg.Params, &p) == nil {
			switch {
			case p.Token != nil:
				s.Token = string(p.Token)
			case p.Meta.Token != nil:
				s.Token = string(p.Meta.Token)
			}
			if p.RequestID != nil {
				s.RequestID = string(p.RequestID)
			}
		}
	}
	return s
}

// mayHoldTokenOrRequestID reports whether params may have a member that
// encoding/json matches to progressToken or requestId (names match
// without regard to case, escaped, or with Unicode letters that fold to
// ASCII ones): false only when params is ASCII without escapes and holds
// neither name in any case, so that Summarize can skip decoding it.
func mayHoldTokenOrRequestID(params []byte) bool {
	for _, c := range params {
		if c >= utf8.RuneSelf || c == '\\' {
			return true
		}
	}
	return containsFoldASCII(params, "progresstoken") || containsFoldASCII(params, "requestid")
}

// containsFoldASCII reports whether b holds lower, a lower-case ASCII
// word, in any case.
func containsFoldASCII(b []byte, lower string) bool {
	for i := 0; i+len(lower) <= len(b); i++ {
		j := 0
		for j < len(lower) && b[i+j]|0x20 == lower[j] {
			j++
		}
		if j == len(lower) {
			return true
		}
	}
	return false
}
