package watch

import (
	"bytes"
	"fmt"
	"unicode/utf8"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
)

// redactMargin is how many bytes past MaxRaw a frame keeps, so that the
// redactor still finds whole a secret that straddles the cut
// (chrono.Redactor.RedactEvent clips to MaxRaw plus the longest secret).
const redactMargin = 4 << 10

// frameBuilder collects one frame (a stdio line, an HTTP body, the data
// of an SSE event) as it arrives in pieces, in bounded memory: it keeps
// the first bytes (up to limit) and counts the rest. A frame too long to
// keep whole is summarised from its top-level members (shapeScanner), so
// that a 100 MB response still shows its id.
type frameBuilder struct {
	limit int
	keep  []byte
	size  int
	// lost is set when bytes of the frame were dropped before they
	// reached the recorder: what is kept is then not the frame.
	lost bool
	// shape sees every byte once the frame outgrows keep.
	shape    *shapeScanner
	utf8Tail []byte // an incomplete rune carried between pieces
	utf8Bad  bool
}

func newFrameBuilder(maxRaw int) frameBuilder {
	return frameBuilder{limit: maxRaw + redactMargin}
}

// write adds p to the frame.
func (f *frameBuilder) write(p []byte) {
	if len(p) == 0 {
		return
	}
	f.size += len(p)
	if f.shape == nil {
		if room := f.limit - len(f.keep); len(p) <= room {
			f.keep = append(f.keep, p...)
			return
		}
		// The frame outgrows what is kept: from here on its shape is
		// scanned as it streams by, starting with what was kept.
		f.shape = &shapeScanner{}
		f.scan(f.keep)
		room := f.limit - len(f.keep)
		f.keep = append(f.keep, p[:room]...)
	}
	f.scan(p)
}

// scan feeds the shape scanner and the UTF-8 check.
func (f *frameBuilder) scan(p []byte) {
	f.shape.feed(p)
	if f.utf8Bad {
		return
	}
	if len(f.utf8Tail) > 0 {
		// Complete the rune carried over with the first bytes of p.
		need := min(utf8.UTFMax-len(f.utf8Tail), len(p))
		joined := append(f.utf8Tail, p[:need]...)
		r, n := utf8.DecodeRune(joined)
		if r == utf8.RuneError && n <= 1 && utf8.FullRune(joined) {
			f.utf8Bad = true
			return
		}
		if !utf8.FullRune(joined) {
			f.utf8Tail = joined
			return
		}
		p = p[n-len(f.utf8Tail):]
		f.utf8Tail = f.utf8Tail[:0]
	}
	// Hold back an incomplete rune at the end of p.
	cut := len(p)
	for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				cut = i
			}
			break
		}
	}
	if !utf8.Valid(p[:cut]) {
		f.utf8Bad = true
		return
	}
	f.utf8Tail = append(f.utf8Tail[:0], p[cut:]...)
}

// reset empties the builder for the next frame, keeping its buffer.
func (f *frameBuilder) reset() {
	f.keep, f.size, f.lost, f.shape = f.keep[:0], 0, false, nil
	f.utf8Tail, f.utf8Bad = f.utf8Tail[:0], false
}

// whole reports whether every byte of the frame is kept.
func (f *frameBuilder) whole() bool { return f.shape == nil && !f.lost }

// summary decodes the frame: exactly when it is kept whole, from its
// top-level members otherwise. note says how it was summarised, or "".
// msg is the message decoded when the frame is kept whole and is one,
// for the event to hand on (chrono.Event.KeepDecoded); its Raw is nil,
// since the bytes kept are reused for the next frame.
func (f *frameBuilder) summary() (s *chrono.Summary, msg *jsonrpc.Message, note string) {
	switch {
	case f.lost:
		return nil, nil, "part of this frame was dropped before it was recorded (the recorder's queue was full): not decoded"
	case f.shape == nil:
		m, err := jsonrpc.Decode(f.keep)
		if err == nil {
			msg, m.Raw = m, nil
		}
		return chrono.Summarize(m, err), msg, ""
	}
	note = fmt.Sprintf("frame of %d bytes, larger than the %d kept: summarised from its top-level members", f.size, f.limit-redactMargin)
	if f.utf8Bad || len(f.utf8Tail) > 0 {
		return &chrono.Summary{Malformed: string(jsonrpc.ClassInvalidUTF8)}, nil, note
	}
	return f.shape.summary(), nil, note
}

// Bounds of the shape scanner: the members it remembers, and the size of
// a member's value it keeps (enough for params with a progress token).
const (
	shapeMaxMembers = 32
	shapeMaxKey     = 256
	shapeMaxValue   = 16 << 10
)

// shapeScanner follows the structure of a JSON document too large to
// keep, one byte at a time and in bounded memory, and remembers the
// top-level members of an object: each key, and its value when small
// (a large one is remembered by its type). That is enough to tell a
// request, notification or response and to read its id and method,
// whatever the size of its params or result. It checks the structure
// (brackets, strings, escapes, separators), not the spelling of numbers
// and literals, which jsonrpc.Decode checks in the skeleton it builds.
type shapeScanner struct {
	state   shapeState
	depth   int  // nesting inside the current top-level value
	inStr   bool // inside a string below the top level
	escaped bool
	first   byte // the first byte of the document
	bad     string

	key     []byte
	keyBig  bool
	value   []byte
	valBig  bool
	valType byte
	members []shapeMember
	more    bool // members past shapeMaxMembers were skipped
	// params scans the value of a top-level "params" object as a
	// document of its own, so that a request whose params are too large
	// to keep still shows its progress token (params._meta) and a
	// notification its requestId.
	params *shapeScanner
	nested bool // this scanner is the params scanner of another
}

type shapeMember struct {
	key   []byte
	value []byte
	small bool // value holds the whole value
	typ   byte // the value's first byte
}

type shapeState uint8

const (
	shapeStart      shapeState = iota // before the document
	shapeKeyOrEnd                     // after "{": a key or "}"
	shapeKey                          // inside a key string
	shapeKeyEsc                       // after a backslash in a key
	shapeColon                        // after a key
	shapeValue                        // after ":"
	shapeInValue                      // inside a member's value
	shapeCommaOrEnd                   // after a value
	shapeNextKey                      // after ",": a key
	shapeDone                         // after the closing "}"
	shapeOther                        // a document that is not an object
	shapeBad                          // a structural error was found
)

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// feed scans p.
func (s *shapeScanner) feed(p []byte) {
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch s.state {
		case shapeStart:
			if isSpace(c) {
				continue
			}
			s.first = c
			if c == '{' {
				s.state = shapeKeyOrEnd
			} else {
				s.state = shapeOther
			}
		case shapeKeyOrEnd, shapeNextKey:
			switch {
			case isSpace(c):
			case c == '"':
				s.state, s.key, s.keyBig = shapeKey, s.key[:0], false
			case c == '}' && s.state == shapeKeyOrEnd:
				s.state = shapeDone
			default:
				s.fail("expected a member name")
			}
		case shapeKey, shapeKeyEsc:
			if s.state == shapeKeyEsc {
				s.state = shapeKey
			} else if c == '"' {
				s.state = shapeColon
				continue
			} else if c == '\\' {
				s.state = shapeKeyEsc
			}
			if len(s.key) < shapeMaxKey {
				s.key = append(s.key, c)
			} else {
				s.keyBig = true
			}
		case shapeColon:
			switch {
			case isSpace(c):
			case c == ':':
				s.state = shapeValue
			default:
				s.fail("expected a colon after a member name")
			}
		case shapeValue:
			if isSpace(c) {
				continue
			}
			s.value, s.valBig, s.valType = s.value[:0], false, c
			s.depth, s.inStr, s.escaped = 0, false, false
			s.params = nil
			if !s.nested && c == '{' && string(s.key) == "params" {
				s.params = &shapeScanner{nested: true}
			}
			s.state = shapeInValue
			i-- // the value's first byte is scanned as part of it
		case shapeInValue:
			if s.scalar() {
				if s.scalarByte(c) {
					s.endValue()
					i-- // the byte that ended the scalar belongs to what follows
					continue
				}
				s.keepValue(p[i : i+1])
				continue
			}
			// Fast path through the body of a long string.
			if s.inStr && !s.escaped {
				j := bytes.IndexAny(p[i:], "\"\\")
				if j < 0 {
					s.keepValue(p[i:])
					i = len(p)
					continue
				}
				s.keepValue(p[i : i+j])
				i += j
				c = p[i]
			}
			s.nestedByte(c)
			s.keepValue(p[i : i+1])
			if s.depth == 0 && !s.inStr {
				s.endValue()
			}
		case shapeCommaOrEnd:
			switch {
			case isSpace(c):
			case c == ',':
				s.state = shapeNextKey
			case c == '}':
				s.state = shapeDone
			default:
				s.fail("expected a comma or the end of the object")
			}
		case shapeDone:
			if !isSpace(c) {
				s.fail("data after the end of the object")
			}
		case shapeOther, shapeBad:
			return
		}
	}
}

// scalar reports whether the current value is a number or a literal.
func (s *shapeScanner) scalar() bool {
	return s.valType != '"' && s.valType != '{' && s.valType != '['
}

// scalarByte follows one byte of a number or literal and reports whether
// it ends the value: a separator, a space or a closing brace, which is
// not part of it.
func (s *shapeScanner) scalarByte(c byte) (ends bool) {
	switch {
	case c == ',' || c == '}' || c == ']' || isSpace(c):
		return true
	case c == '"' || c == '{' || c == '[' || c == ':':
		s.fail("a number or literal runs into another value")
	}
	return false
}

// nestedByte follows one byte of a string, object or array value. The
// brackets are counted, not matched: "{]" passes here, and fails in
// jsonrpc.Decode when the value is small enough to be kept.
func (s *shapeScanner) nestedByte(c byte) {
	switch {
	case s.inStr:
		switch {
		case s.escaped:
			s.escaped = false
		case c == '\\':
			s.escaped = true
		case c == '"':
			s.inStr = false
		}
	case c == '"':
		s.inStr = true
	case c == '{' || c == '[':
		s.depth++
	case c == '}' || c == ']':
		s.depth--
	}
}

// keepValue keeps bytes of the current value while it is small.
func (s *shapeScanner) keepValue(b []byte) {
	if s.params != nil {
		s.params.feed(b)
	}
	if s.valBig {
		return
	}
	if len(s.value)+len(b) > shapeMaxValue {
		s.valBig, s.value = true, s.value[:0]
		return
	}
	s.value = append(s.value, b...)
}

// endValue stores the member just scanned.
func (s *shapeScanner) endValue() {
	s.state = shapeCommaOrEnd
	if len(s.members) >= shapeMaxMembers || s.keyBig {
		s.more = true
		return
	}
	m := shapeMember{key: bytes.Clone(s.key), typ: s.valType, small: !s.valBig}
	switch {
	case m.small:
		m.value = bytes.Clone(s.value)
	case s.params != nil && s.params.state == shapeDone:
		m.value, m.small = s.params.skeleton(), true
	}
	s.params = nil
	s.members = append(s.members, m)
}

func (s *shapeScanner) fail(why string) {
	if s.state != shapeBad {
		s.state, s.bad = shapeBad, why
	}
}

// summary is the frame's summary as jsonrpc.Decode would give it, read
// from a skeleton of the frame: its top-level members, each large value
// replaced by an empty one of the same type.
func (s *shapeScanner) summary() *chrono.Summary {
	switch {
	case s.state == shapeOther && s.first == '[':
		return &chrono.Summary{Malformed: string(jsonrpc.ClassBatch)}
	case s.state == shapeOther && bytes.IndexByte([]byte(`"-0123456789tfn`), s.first) >= 0:
		return &chrono.Summary{Malformed: string(jsonrpc.ClassNotObject)}
	case s.state != shapeDone:
		return &chrono.Summary{Malformed: string(jsonrpc.ClassParse)}
	}
	return chrono.Summarize(jsonrpc.Decode(s.skeleton()))
}

// skeleton is the object scanned, each large value replaced by an empty
// one of its type (a large "params" by its own skeleton).
func (s *shapeScanner) skeleton() []byte {
	skel := []byte{'{'}
	for i, m := range s.members {
		if i > 0 {
			skel = append(skel, ',')
		}
		skel = append(append(append(append(skel, '"'), m.key...), '"'), ':')
		switch {
		case m.small:
			skel = append(skel, m.value...)
		case m.typ == '{':
			skel = append(skel, "{}"...)
		case m.typ == '[':
			skel = append(skel, "[]"...)
		case m.typ == '"':
			skel = append(skel, `""`...)
		default:
			skel = append(skel, "null"...)
		}
	}
	return append(skel, '}')
}
