package watch

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
)

// streamMode says how the recorder frames a stream's bytes.
type streamMode uint8

const (
	modeLines  streamMode = iota + 1 // newline-delimited JSON-RPC (stdio)
	modeStderr                       // lines of logging
	modeBody                         // one JSON-RPC message: an HTTP body
	modeOpaque                       // an HTTP body that is not JSON-RPC
	modeSSE                          // an event stream
)

// stream is one byte stream the forwarders tap: a stdio pipe, or one
// side of an HTTP exchange. Its framing state belongs to the recorder's
// goroutine; only the counters of dropped pieces are shared.
type stream struct {
	dir     chrono.Direction
	channel string
	ex      *exchange // the HTTP exchange, nil for stdio

	// Pieces dropped since the last one queued (see Recorder.push).
	lostTaps, lostBytes atomic.Int64

	// The recorder's.
	mode   streamMode
	frame  frameBuilder
	lastCR bool // the line so far ends in "\r"
	resync bool // skip to the next line end: its start was dropped
	sse    *sseState
	// decoder, when set, decompresses the stream's bytes before they are
	// framed (a gzip or deflate body).
	decoder *decoder
}

// exchange is one HTTP request and its response, as the recorder knows
// it.
type exchange struct {
	channel  string // "POST #3"
	method   string
	req, res *stream

	// The recorder's.
	reqID    string // the id of the request the body carried, if any
	answered bool   // its response has been seen
}

// newStream returns a stream framed in mode.
func (r *Recorder) newStream(dir chrono.Direction, channel string, mode streamMode) *stream {
	return &stream{dir: dir, channel: channel, mode: mode, frame: newFrameBuilder(r.cfg.MaxRaw)}
}

// write frames data read from the stream at at.
func (s *stream) write(r *Recorder, p []byte, at time.Time) {
	switch s.mode {
	case modeLines, modeStderr:
		s.writeLines(r, p, at)
	case modeSSE:
		s.sseState().feed(r, s, p, at)
	default:
		s.frame.write(p)
	}
}

// writeLines splits p into lines, recording each complete one.
func (s *stream) writeLines(r *Recorder, p []byte, at time.Time) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if s.resync {
			if i < 0 {
				return
			}
			s.resync, p = false, p[i+1:]
			continue
		}
		if i < 0 {
			s.frame.write(p)
			s.lastCR = p[len(p)-1] == '\r'
			return
		}
		if i > 0 {
			s.frame.write(p[:i])
			s.lastCR = p[i-1] == '\r'
		}
		s.emitLine(r, at, "")
		p = p[i+1:]
	}
}

// emitLine records the line collected, without its line ending.
func (s *stream) emitLine(r *Recorder, at time.Time, note string) {
	f := &s.frame
	size := f.size
	crlf := s.lastCR
	if crlf {
		size--
		if f.whole() {
			f.keep = f.keep[:len(f.keep)-1]
		}
	}
	e := chrono.Event{Dir: s.dir, Channel: s.channel, Raw: f.keep, Size: size, Truncated: size > len(f.keep) || f.lost}
	var notes []string
	if s.mode == modeStderr {
		e.Kind = chrono.KindStderr
		if f.lost {
			notes = append(notes, "part of this line was dropped before it was recorded")
		}
	} else {
		e.Kind = chrono.KindFrame
		if size == 0 && !f.lost {
			notes = append(notes, "blank line")
		}
		sum, msg, how := f.summary()
		e.Summary = sum
		e.KeepDecoded(msg)
		if how != "" {
			notes = append(notes, how)
		}
	}
	if crlf {
		notes = append(notes, "ends in CRLF")
	}
	if note != "" {
		notes = append(notes, note)
	}
	e.Text = strings.Join(notes, "; ")
	r.emit(e, at)
	f.reset()
	s.lastCR = false
}

// dropped is told that pieces of the stream were dropped before the
// next one: the frame being collected is marked incomplete (a line is
// recorded at once, since its end is lost), and a line stream skips to
// the next line end, where a whole line begins again.
func (s *stream) dropped(r *Recorder, at time.Time) {
	switch s.mode {
	case modeLines, modeStderr:
		if s.frame.size > 0 && !s.resync {
			s.frame.lost = true
			s.emitLine(r, at, "")
		}
		s.resync = true
	case modeSSE:
		s.sseState().dropped()
	default:
		s.frame.lost = true
	}
}

// finish records the end of the stream: what is left of its last frame,
// then how it ended.
func (s *stream) finish(r *Recorder, how endHow, text string, at time.Time) {
	switch s.mode {
	case modeLines, modeStderr:
		if s.frame.size > 0 || s.frame.lost {
			s.emitLine(r, at, "no newline at the end of the stream")
		}
	case modeSSE:
		s.sseState().finish(r, s, at)
	case modeBody, modeOpaque:
		s.emitBody(r, at, how)
	}
	if s.ex != nil && s == s.ex.res {
		s.ex.ended(r, s, how, text, at)
		return
	}
	if text != "" {
		kind := chrono.KindNote
		if how == endFailed {
			kind = chrono.KindError
		}
		r.emit(chrono.Event{Dir: chrono.Harness, Kind: kind, Channel: s.channel, Text: text}, at)
	}
}

// emitBody records an HTTP body: one JSON-RPC frame, or (not JSON-RPC)
// an HTTP event with its first bytes. An empty body records nothing.
func (s *stream) emitBody(r *Recorder, at time.Time, how endHow) {
	f := &s.frame
	if f.size == 0 && !f.lost {
		return
	}
	e := chrono.Event{Dir: s.dir, Channel: s.channel, Raw: f.keep, Size: f.size, Truncated: f.size > len(f.keep) || f.lost}
	var notes []string
	if s.mode == modeBody {
		e.Kind = chrono.KindFrame
		sum, msg, note := f.summary()
		e.Summary = sum
		e.KeepDecoded(msg)
		if note != "" {
			notes = append(notes, note)
		}
	} else {
		e.Kind = chrono.KindHTTP
		notes = append(notes, "body")
	}
	if how != endEOF {
		notes = append(notes, "the body was cut off before its end")
	}
	e.Text = strings.Join(notes, "; ")
	r.emit(e, at)
	if s.ex != nil && s == s.ex.req && e.Summary != nil && e.Summary.Kind == jsonrpc.KindRequest.String() {
		s.ex.reqID = e.Summary.ID
	}
	s.ex.saw(s, e.Summary)
	f.reset()
}

// saw notes a frame of the exchange's response: the response to its
// request, if it is.
func (ex *exchange) saw(s *stream, sum *chrono.Summary) {
	if ex == nil || s != ex.res || sum == nil || ex.reqID == "" {
		return
	}
	if (sum.Kind == jsonrpc.KindResult.String() || sum.Kind == jsonrpc.KindError.String()) && sum.ID == ex.reqID {
		ex.answered = true
	}
}

// ended records how the exchange's response ended: for a request, a
// client that closed it before its response cancelled it.
func (ex *exchange) ended(r *Recorder, s *stream, how endHow, text string, at time.Time) {
	channel := ex.channel
	if s.mode == modeSSE {
		channel = "SSE " + ex.channel
	}
	e := chrono.Event{Dir: chrono.Harness, Kind: chrono.KindNote, Channel: channel}
	switch how {
	case endClientClosed:
		switch {
		case ex.reqID != "" && !ex.answered:
			e.Kind, e.Text = chrono.KindDecision, ClientClosedText(ex.reqID)
		case ex.reqID != "":
			e.Text = fmt.Sprintf("the client closed the response stream of request %s after its response", ex.reqID)
		default:
			e.Text = "the client closed the response stream"
		}
	case endFailed:
		e.Kind, e.Text = chrono.KindError, "the response stream failed: "+text
		if ex.reqID != "" && !ex.answered {
			e.Text += fmt.Sprintf(" (before the response to request %s)", ex.reqID)
		}
	default:
		switch {
		case s.mode != modeSSE:
			return // a body's end is its frame
		case ex.reqID != "" && !ex.answered:
			e.Text = fmt.Sprintf("the server ended the response stream of request %s before its response", ex.reqID)
		default:
			e.Text = "stream ended"
		}
	}
	r.emit(e, at)
}

// sseState parses an event stream as it arrives, in bounded memory: the
// data of an event streams into a frameBuilder, the other fields are
// kept up to sseMaxField bytes. It follows the WHATWG event stream
// interpretation as transport.SSEReader does (CR, LF and CRLF line
// endings, a leading byte order mark, "data" lines joined by "\n",
// comments), but is pushed bytes instead of pulling them, and never
// gives up on a long event: it keeps its start and counts the rest.
type sseState struct {
	data    frameBuilder
	bomSeen int  // bytes of a leading byte order mark matched so far
	started bool // past the stream's first bytes
	pendCR  bool // the last line ended in "\r": a "\n" next is part of it

	// The line being read.
	field     []byte
	fieldDone bool // the colon has been seen
	fieldBig  bool
	value     []byte
	valueBig  bool
	skipSpace bool // the next value byte is the one space after the colon
	lineBytes int
	skipLine  bool // the line's start was dropped

	// The event being read.
	seen      bool
	hasData   bool
	dataLines int
	id        string
	hasID     bool
	event     string
	retry     string
	comments  int
	size      int
	lost      bool
}

const sseMaxField = 1 << 10

// utf8BOM is the byte order mark an event stream may begin with.
const utf8BOM = "\xEF\xBB\xBF"

func (s *stream) sseState() *sseState {
	if s.sse == nil {
		s.sse = &sseState{data: newFrameBuilder(s.frame.limit - redactMargin)}
	}
	return s.sse
}

// feed parses p.
func (p *sseState) feed(r *Recorder, s *stream, b []byte, at time.Time) {
	for len(b) > 0 {
		if !p.started {
			// A leading byte order mark is skipped, even split across
			// reads; bytes that only looked like its start are replayed.
			if b[0] == utf8BOM[p.bomSeen] {
				p.bomSeen++
				b = b[1:]
				if p.bomSeen == len(utf8BOM) {
					p.started = true
				}
				continue
			}
			p.started = true
			if n := p.bomSeen; n > 0 {
				p.bomSeen = 0
				p.feed(r, s, []byte(utf8BOM[:n]), at)
			}
		}
		if p.pendCR {
			p.pendCR = false
			if b[0] == '\n' {
				b = b[1:]
				continue
			}
		}
		i := bytes.IndexAny(b, "\r\n")
		if i < 0 {
			p.lineData(b)
			return
		}
		p.lineData(b[:i])
		p.pendCR = b[i] == '\r'
		p.endLine(r, s, at)
		b = b[i+1:]
	}
}

// lineData takes bytes of the current line.
func (p *sseState) lineData(b []byte) {
	if p.skipLine || len(b) == 0 {
		return
	}
	p.lineBytes += len(b)
	if !p.fieldDone {
		i := bytes.IndexByte(b, ':')
		name := b
		if i >= 0 {
			name = b[:i]
		}
		if len(p.field)+len(name) <= sseMaxField {
			p.field = append(p.field, name...)
		} else {
			p.fieldBig = true
		}
		if i < 0 {
			return
		}
		p.fieldDone, p.skipSpace = true, true
		b = b[i+1:]
		if string(p.field) == "data" && !p.fieldBig {
			p.startData()
		}
	}
	if p.skipSpace && len(b) > 0 {
		p.skipSpace = false
		if b[0] == ' ' {
			b = b[1:]
		}
	}
	if len(b) == 0 {
		return
	}
	if string(p.field) == "data" && !p.fieldBig {
		p.data.write(b)
		return
	}
	if len(p.value)+len(b) <= sseMaxField {
		p.value = append(p.value, b...)
	} else {
		p.valueBig = true
	}
}

// startData begins a data line: lines after the first are joined with
// "\n".
func (p *sseState) startData() {
	if p.dataLines > 0 {
		p.data.write([]byte{'\n'})
	}
	p.dataLines++
	p.hasData = true
}

// endLine interprets the line just read.
func (p *sseState) endLine(r *Recorder, s *stream, at time.Time) {
	defer func() {
		p.field, p.value = p.field[:0], p.value[:0]
		p.fieldDone, p.fieldBig, p.valueBig, p.skipSpace, p.skipLine = false, false, false, false, false
		p.lineBytes = 0
	}()
	if p.skipLine {
		return
	}
	p.size += p.lineBytes + 1
	if p.lineBytes == 0 {
		p.dispatch(r, s, at)
		return
	}
	p.seen = true
	if p.fieldBig {
		return
	}
	switch name, value := string(p.field), string(p.value); {
	case p.fieldDone && name == "":
		p.comments++
	case name == "data":
		if !p.fieldDone {
			p.startData() // "data" with no colon: an empty data line
		}
	case p.valueBig:
	case name == "event":
		p.event = value
	case name == "id":
		if !strings.ContainsRune(value, 0) {
			p.id, p.hasID = value, true
		}
	case name == "retry":
		p.retry = value
	}
}

// dispatch records the event read, if any: its data as a frame when it
// is a message, as an HTTP event otherwise (a priming event, a named
// event, a comment).
func (p *sseState) dispatch(r *Recorder, s *stream, at time.Time) {
	defer p.resetEvent()
	if !p.seen {
		p.size = 0
		return
	}
	channel := "SSE " + s.channel
	text := "sse"
	if p.hasID {
		text += " id=" + p.id
	}
	if p.event != "" {
		text += " event=" + p.event
	}
	if p.retry != "" {
		if ms, err := strconv.ParseInt(p.retry, 10, 64); err == nil && ms >= 0 && strings.Trim(p.retry, "0123456789") == "" {
			text += " retry=" + strconv.FormatInt(ms, 10) + "ms"
		}
	}
	if p.comments > 0 {
		text += fmt.Sprintf(" comments=%d", p.comments)
	}
	if p.lost {
		text += "; part of this event was dropped before it was recorded"
	}
	f := &p.data
	e := chrono.Event{Dir: s.dir, Channel: channel, Raw: f.keep, Size: f.size, Truncated: f.size > len(f.keep) || f.lost}
	if p.hasData && f.size > 0 && (p.event == "" || p.event == "message") {
		e.Kind = chrono.KindFrame
		sum, msg, note := f.summary()
		e.Summary = sum
		e.KeepDecoded(msg)
		if note != "" {
			text += "; " + note
		}
	} else {
		e.Kind = chrono.KindHTTP
		if p.hasData && f.size == 0 {
			text += " (empty data: priming)"
		}
	}
	e.Text = chrono.Sanitize(text, false)
	r.emit(e, at)
	s.ex.saw(s, e.Summary)
}

func (p *sseState) resetEvent() {
	p.data.reset()
	p.seen, p.hasData, p.dataLines, p.hasID, p.id, p.event, p.retry, p.comments, p.size, p.lost =
		false, false, 0, false, "", "", "", 0, 0, false
}

// dropped marks the event being read incomplete and skips the rest of
// the current line.
func (p *sseState) dropped() {
	p.lost, p.seen = true, true
	p.data.lost = true
	p.skipLine = true
}

// finish records an event cut off by the end of the stream, which a
// client does not dispatch, as a note.
func (p *sseState) finish(r *Recorder, s *stream, at time.Time) {
	if p.lineBytes > 0 {
		p.seen = true
		p.size += p.lineBytes
	}
	if p.seen {
		r.emit(chrono.Event{Dir: chrono.Harness, Kind: chrono.KindNote, Channel: "SSE " + s.channel,
			Text: fmt.Sprintf("the stream ended inside an event: %d bytes of an unfinished event were not dispatched", p.size)}, at)
	}
	p.resetEvent()
}
