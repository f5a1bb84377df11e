package transport

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readAll(t *testing.T, in string, max int) (frames []string, errs int) {
	t.Helper()
	fr := NewFrameReader(strings.NewReader(in), max)
	for {
		f, err := fr.ReadFrame()
		if errors.Is(err, io.EOF) {
			return
		}
		if errors.Is(err, ErrFrameTooLarge) {
			errs++
			frames = append(frames, "<too large>")
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, string(f))
	}
}

func TestFrameReader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want []string
	}{
		{"simple", "a\nb\n", 10, []string{"a", "b"}},
		{"crlf", "a\r\nb\r\n", 10, []string{"a", "b"}},
		{"no final newline", "a\nb", 10, []string{"a", "b"}},
		{"empty line kept", "a\n\nb\n", 10, []string{"a", "", "b"}},
		{"exact limit", "12345\n", 5, []string{"12345"}},
		{"over limit then recovers", "123456\nok\n", 5, []string{"<too large>", "ok"}},
		{"huge frame", strings.Repeat("x", 200000) + "\nok\n", 1000, []string{"<too large>", "ok"}},
		{"huge unterminated", strings.Repeat("x", 200000), 1000, []string{"<too large>"}},
		// An unterminated final frame over the limit that fits in one
		// read, with or without the two bytes a line ending may take
		// (found by FuzzFrameReader).
		{"unterminated over limit", "ok\n" + strings.Repeat("q", 100), 17, []string{"ok", "<too large>"}},
		{"unterminated one over", "00", 1, []string{"<too large>"}},
		{"unterminated at limit", "0", 1, []string{"0"}},
		{"crlf at limit", "abcd\r\nabcde\r\n", 4, []string{"abcd", "<too large>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := readAll(t, tt.in, tt.max)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func FuzzFrameReader(f *testing.F) {
	f.Add([]byte("a\nb\r\n\n"), 4)
	f.Fuzz(func(t *testing.T, in []byte, max int) {
		max = max%64 + 1
		if max <= 0 {
			max += 64
		}
		fr := NewFrameReader(strings.NewReader(string(in)), max)
		for range len(in) + 2 {
			frame, err := fr.ReadFrame()
			if errors.Is(err, io.EOF) {
				return
			}
			if err == nil && len(frame) > max {
				t.Fatalf("frame of %d bytes passed limit %d", len(frame), max)
			}
		}
		t.Fatal("reader did not reach EOF")
	})
}
