package chrono

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ErrBadJSONL is wrapped by ReadJSONL's errors for a line that is not an
// event.
var ErrBadJSONL = errors.New("chrono: not a chronology event")

// MaxJSONLLine bounds one line of a JSON Lines chronology: an event's raw
// bytes (DefaultMaxRaw, escaped up to six times) plus its other fields.
const MaxJSONLLine = 8 * DefaultMaxRaw

// UnmarshalJSON reads an event as MarshalJSON writes it, with the frame's
// bytes as the string "raw".
func (e *Event) UnmarshalJSON(data []byte) error {
	type plain Event
	var v struct {
		plain
		Raw *string `json:"raw"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*e = Event(v.plain)
	if v.Raw != nil {
		e.Raw = []byte(*v.Raw)
	}
	return nil
}

// ReadJSONL reads a chronology written by WriteJSONL or Stream: one event
// per line; blank lines are skipped. Strings are returned as written; a
// caller that prints them must sanitise them.
//
// A last line that has no newline and is not JSON is the end of a
// chronology cut off in the middle of a write (a recorder killed while
// writing a line): it is left out, and the events before it are returned
// without error.
func ReadJSONL(r io.Reader) ([]Event, error) {
	var out []Event
	err := EachJSONL(r, func(e Event) error {
		out = append(out, e)
		return nil
	})
	return out, err
}

// EachJSONL reads a chronology as ReadJSONL does, handing each event to
// f as it is read and keeping none: a capture of a million frames is
// read in the memory of one line. An error of f ends the read and is
// returned.
func EachJSONL(r io.Reader, f func(Event) error) error {
	lr := &lastByteReader{r: r}
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 0, 64<<10), MaxJSONLLine)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var e Event
		if err := json.Unmarshal(line, &e); err != nil {
			var syntax *json.SyntaxError
			if (errors.As(err, &syntax) || errors.Is(err, io.ErrUnexpectedEOF)) && !sc.Scan() && sc.Err() == nil && lr.last != '\n' {
				return nil // cut off mid-write
			}
			return fmt.Errorf("%w: line %d: %v", ErrBadJSONL, n, err)
		}
		if e.Seq == 0 || e.Kind == "" {
			return fmt.Errorf("%w: line %d has no seq or kind", ErrBadJSONL, n)
		}
		if err := f(e); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("chrono: reading JSON Lines: %w", err)
	}
	return nil
}

// lastByteReader remembers the last byte read.
type lastByteReader struct {
	r    io.Reader
	last byte
}

func (l *lastByteReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	if n > 0 {
		l.last = p[n-1]
	}
	return n, err
}
