package chrono

import (
	"encoding/json"
	"testing"
	"time"
)

// marshalled is what encoding/json writes of e as MarshalJSON documents
// it (the reflection-based encoding appendEvent replaces), and, with
// safe, after SafeJSON: the reference appendEvent is held to.
func marshalled(t testing.TB, e Event, safe bool) string {
	type plain Event
	b, err := json.Marshal(struct {
		plain
		Raw string `json:"raw,omitempty"`
	}{plain(e), string(e.Raw)})
	if err != nil {
		t.Fatal(err)
	}
	if safe {
		b = SafeJSON(b)
	}
	return string(b)
}

// nasty holds the characters encoding/json and SafeJSON escape, and
// what they leave alone around them.
var nasty = []string{"", "plain", `q"b\s/`, "\b\f\n\r\t\x00\x01\x1f\x7f", "<a href='x'>&amp;</a>",
	"\u0080\u0085\u009b\u009f\u00a0", "\u2028\u2029\u202a\u202e\u2066\u2069\u200e\u200f\u061c\u200d",
	"bad \xff\xfe utf8 \xc3", "cut \xe2\x80", "é日本😀", "\xed\xa0\x80 surrogate", "\U0010ffff\uffff\ufffd"}

// TestAppendEventAsMarshalled: every field, empty and set, and every
// kind of character, encoded as encoding/json encodes them, with and
// without SafeJSON's escapes.
func TestAppendEventAsMarshalled(t *testing.T) {
	events := []Event{{}, {Seq: 1, Offset: -5, Dir: In, Kind: KindFrame}}
	for i, s := range nasty {
		events = append(events, Event{Seq: uint64(i) << 60, Offset: time.Duration(i) * time.Hour, Dir: Direction(s), Channel: s, Kind: Kind(s),
			Raw: []byte(s), Size: -i, Truncated: i%2 == 0, Text: s, From: s, To: s})
		events = append(events, Event{Dir: Out, Kind: KindFrame, Raw: []byte("{" + s + "}"), Size: i,
			Summary: &Summary{Kind: s, Method: s, ID: s, Token: s, RequestID: s, Malformed: s}})
		events = append(events, Event{Summary: &Summary{Method: s}}, Event{Summary: &Summary{Malformed: s}}, Event{Summary: &Summary{}})
	}
	for _, e := range events {
		for _, safe := range []bool{false, true} {
			if got, want := string(appendEvent(nil, e, safe)), marshalled(t, e, safe); got != want {
				t.Errorf("safe=%v: appendEvent wrote\n%s\nencoding/json wrote\n%s", safe, got, want)
			}
		}
	}
}

// FuzzAppendEvent: appendEvent writes what encoding/json writes, for any
// strings and numbers.
func FuzzAppendEvent(f *testing.F) {
	for _, s := range nasty {
		f.Add(uint64(1), int64(2), s, s, 3, true, s)
	}
	f.Fuzz(func(t *testing.T, seq uint64, off int64, text, raw string, size int, trunc bool, method string) {
		e := Event{Seq: seq, Offset: time.Duration(off), Dir: Direction(method), Channel: text, Kind: Kind(raw), Raw: []byte(raw),
			Size: size, Truncated: trunc, Text: text, From: method, To: raw}
		if trunc {
			e.Summary = &Summary{Kind: raw, Method: method, ID: text, Token: method, RequestID: raw}
		}
		for _, safe := range []bool{false, true} {
			if got, want := string(appendEvent(nil, e, safe)), marshalled(t, e, safe); got != want {
				t.Fatalf("safe=%v: appendEvent wrote\n%s\nencoding/json wrote\n%s", safe, got, want)
			}
		}
	})
}

// BenchmarkAppendJSONL: encoding one recorded frame as a line.
func BenchmarkAppendJSONL(b *testing.B) {
	e := Event{Seq: 12345, Offset: 987654321, Dir: In, Channel: "stdout", Kind: KindFrame, Size: 36,
		Raw: []byte(`{"jsonrpc":"2.0","id":12,"result":{}}`), Summary: &Summary{Kind: "result", ID: "12"}}
	b.ReportAllocs()
	var out []byte
	for b.Loop() {
		out, _ = AppendJSONL(out[:0], e)
	}
}
