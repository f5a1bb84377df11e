package transport

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// DefaultMaxEvent is the default limit on one SSE event's size: 4 MiB.
const DefaultMaxEvent = 4 << 20

// ErrEventTooLarge reports an SSE event over the configured limit. The
// stream cannot be resynchronised after it and is abandoned.
var ErrEventTooLarge = errors.New("SSE event exceeds the maximum event size")

// SSEEvent is one block of an event stream, parsed as the WHATWG
// "event stream interpretation" describes, with what the harness needs to
// judge it kept apart: whether an id or retry field was present at all,
// and the comments.
type SSEEvent struct {
	// ID is the value of the last id field of the block; HasID says
	// whether there was one (an empty id resets the last event ID).
	ID    string
	HasID bool
	// Event is the event type; empty means "message".
	Event string
	// Data is the data fields joined by "\n"; HasData says whether the
	// block had a data field at all. A priming event has HasData and an
	// empty Data.
	Data    string
	HasData bool
	// Retry is the reconnection time of a valid retry field; HasRetry says
	// whether there was one.
	Retry    time.Duration
	HasRetry bool
	// Comments are the comment lines of the block, without the colon.
	Comments []string
	// Size is the number of bytes the block took on the wire.
	Size int
}

// Dispatch reports whether a browser would dispatch the block as a
// message event: it had data (possibly empty data, as a priming event).
func (e SSEEvent) Dispatch() bool { return e.HasData }

// SSEReader parses an event stream. It accepts CRLF, LF and CR line
// endings and a leading byte order mark, and bounds each block.
type SSEReader struct {
	r        *bufio.Reader
	max      int
	started  bool
	pendCR   bool
	lastID   string
	hasLast  bool
	blockLen int
}

// NewSSEReader reads events of at most maxEvent bytes (DefaultMaxEvent if
// maxEvent <= 0) from r.
func NewSSEReader(r io.Reader, maxEvent int64) *SSEReader {
	if maxEvent <= 0 || maxEvent > 1<<30 {
		maxEvent = DefaultMaxEvent
	}
	return &SSEReader{r: bufio.NewReaderSize(r, 16<<10), max: int(maxEvent)}
}

// LastEventID is the last event ID the stream set, as a client would send
// it in Last-Event-ID.
func (s *SSEReader) LastEventID() (string, bool) { return s.lastID, s.hasLast }

// readLine returns one line without its ending. At the end of the stream
// it returns io.EOF; an unterminated last line is discarded, as the
// standard requires.
func (s *SSEReader) readLine() (string, error) {
	var line []byte
	for {
		b, err := s.r.ReadByte()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return "", io.EOF
			}
			return "", err
		}
		if s.pendCR {
			s.pendCR = false
			if b == '\n' {
				continue
			}
		}
		switch b {
		case '\r':
			s.pendCR = true
			return string(line), nil
		case '\n':
			return string(line), nil
		}
		line = append(line, b)
		s.blockLen++
		if s.blockLen > s.max {
			return "", fmt.Errorf("%w: more than %d bytes", ErrEventTooLarge, s.max)
		}
	}
}

// Next returns the next non-empty block: one with at least one field or
// comment. It returns io.EOF at the end of the stream; a block cut off by
// the end of the stream is not returned.
func (s *SSEReader) Next() (SSEEvent, error) {
	var ev SSEEvent
	var data bytes.Buffer
	seen := false
	s.blockLen = 0
	for {
		line, err := s.readLine()
		if err != nil {
			return SSEEvent{}, err
		}
		if !s.started {
			s.started = true
			line = strings.TrimPrefix(line, "\ufeff")
		}
		ev.Size += len(line) + 1
		if line == "" {
			if !seen {
				ev.Size = 0
				s.blockLen = 0
				continue
			}
			if ev.HasData {
				ev.Data = strings.TrimSuffix(data.String(), "\n")
			}
			return ev, nil
		}
		seen = true
		if line[0] == ':' {
			ev.Comments = append(ev.Comments, strings.TrimPrefix(line[1:], " "))
			continue
		}
		field, value, found := strings.Cut(line, ":")
		if found {
			value = strings.TrimPrefix(value, " ")
		}
		switch field {
		case "event":
			ev.Event = value
		case "data":
			ev.HasData = true
			data.WriteString(value)
			data.WriteByte('\n')
		case "id":
			if !strings.ContainsRune(value, 0) {
				ev.ID, ev.HasID = value, true
				s.lastID, s.hasLast = value, value != ""
			}
		case "retry":
			if value != "" && strings.Trim(value, "0123456789") == "" {
				if ms, err := strconv.ParseInt(value, 10, 64); err == nil && ms <= int64(time.Hour/time.Millisecond) {
					ev.Retry, ev.HasRetry = time.Duration(ms)*time.Millisecond, true
				}
			}
		}
	}
}
