package transport

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func readAllSSE(t *testing.T, in string, max int64) ([]SSEEvent, error) {
	t.Helper()
	rd := NewSSEReader(strings.NewReader(in), max)
	var out []SSEEvent
	for {
		ev, err := rd.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, err
		}
		ev.Size = 0
		out = append(out, ev)
	}
}

func TestSSEReader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []SSEEvent
	}{
		{"priming event", "id: 1\ndata:\n\n", []SSEEvent{{ID: "1", HasID: true, HasData: true}}},
		{"multi-line data", "data: a\ndata: b\n\n", []SSEEvent{{Data: "a\nb", HasData: true}}},
		{"all fields CRLF", "event: message\r\nid: x-7\r\nretry: 1500\r\ndata: {}\r\n\r\n",
			[]SSEEvent{{Event: "message", ID: "x-7", HasID: true, Retry: 1500 * time.Millisecond, HasRetry: true, Data: "{}", HasData: true}}},
		{"CR line endings", "data: a\rdata: b\r\r", []SSEEvent{{Data: "a\nb", HasData: true}}},
		{"comments", ": keepalive\n: two\ndata: x\n\n", []SSEEvent{{Comments: []string{"keepalive", "two"}, Data: "x", HasData: true}}},
		{"no space after colon", "data:x\n\n", []SSEEvent{{Data: "x", HasData: true}}},
		{"two spaces keep one", "data:  x\n\n", []SSEEvent{{Data: " x", HasData: true}}},
		{"field without colon", "data\n\n", []SSEEvent{{HasData: true}}},
		{"bad retry ignored", "retry: 1.5\ndata: x\n\n", []SSEEvent{{Data: "x", HasData: true}}},
		{"retry only", "retry: 10\n\n", []SSEEvent{{Retry: 10 * time.Millisecond, HasRetry: true}}},
		{"id with NUL ignored", "id: a\x00b\ndata: x\n\n", []SSEEvent{{Data: "x", HasData: true}}},
		{"BOM stripped", "\ufeffdata: x\n\n", []SSEEvent{{Data: "x", HasData: true}}},
		{"blank lines between", "\n\n\ndata: x\n\n\n", []SSEEvent{{Data: "x", HasData: true}}},
		{"unterminated last event dropped", "data: x\n\ndata: y\n", []SSEEvent{{Data: "x", HasData: true}}},
		{"unknown field ignored", "foo: bar\ndata: x\n\n", []SSEEvent{{Data: "x", HasData: true}}},
		{"two events", "id: 1\ndata: a\n\nid: 2\ndata: b\n\n",
			[]SSEEvent{{ID: "1", HasID: true, Data: "a", HasData: true}, {ID: "2", HasID: true, Data: "b", HasData: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAllSSE(t, tt.in, 0)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSSEReaderLastEventID(t *testing.T) {
	rd := NewSSEReader(strings.NewReader("id: 5\ndata: a\n\ndata: b\n\n"), 0)
	for range 2 {
		if _, err := rd.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if id, ok := rd.LastEventID(); id != "5" || !ok {
		t.Errorf("LastEventID = %q, %v; want 5, true", id, ok)
	}
}

func TestSSEReaderEventTooLarge(t *testing.T) {
	_, err := readAllSSE(t, "data: "+strings.Repeat("x", 100)+"\n\n", 50)
	if !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("err = %v, want ErrEventTooLarge", err)
	}
	// A big stream of small events is fine.
	_, err = readAllSSE(t, strings.Repeat("data: "+strings.Repeat("x", 30)+"\n\n", 100), 50)
	if err != nil {
		t.Fatalf("small events: %v", err)
	}
}

// FuzzSSEReader checks that the parser never panics, never returns an
// event over the limit and that every event's data has no CR.
func FuzzSSEReader(f *testing.F) {
	for _, s := range []string{"id: 1\ndata:\n\n", "data: a\r\ndata: b\r\n\r\n", ": c\nretry: 10\n\n", "\ufeffdata\n\n", "data: x\rid: \x00\r\r"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		rd := NewSSEReader(strings.NewReader(string(in)), 256)
		for range len(in) + 1 {
			ev, err := rd.Next()
			if err != nil {
				return
			}
			if len(ev.Data) > 256 {
				t.Fatalf("event of %d bytes passed a 256-byte limit", len(ev.Data))
			}
			if strings.ContainsAny(ev.Data, "\r") || strings.ContainsAny(ev.ID, "\r\n\x00") {
				t.Fatalf("line ending leaked into %+v", ev)
			}
		}
		t.Fatalf("more events than input bytes")
	})
}
