package chrono

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpflight/mcpflight/jsonrpc"
)

func TestAppendNumbersAndSummarises(t *testing.T) {
	l := New()
	e1 := l.Frame(Out, "stdin", []byte(`{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"_meta":{"progressToken":"t0"}}}`), nil, nil)
	e2 := l.Frame(In, "stdout", []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":0,"progress":1}}`), nil, nil)
	e3 := l.Frame(In, "stdout", []byte(`garbage`), nil, nil)
	e4 := l.State("op", "running", "cancel-requested")
	if e1.Seq != 1 || e2.Seq != 2 || e3.Seq != 3 || e4.Seq != 4 {
		t.Fatalf("seqs %d %d %d %d", e1.Seq, e2.Seq, e3.Seq, e4.Seq)
	}
	if e1.Summary.ID != "0" || e1.Summary.Token != `"t0"` || e1.Summary.Method != "tools/call" {
		t.Errorf("summary 1 = %+v", e1.Summary)
	}
	if e2.Summary.Token != "0" || e2.Summary.Kind != "notification" {
		t.Errorf("summary 2 = %+v", e2.Summary)
	}
	if e3.Summary.Malformed != string(jsonrpc.ClassParse) {
		t.Errorf("summary 3 = %+v", e3.Summary)
	}
	if e2.Offset < e1.Offset {
		t.Error("offsets must not go backwards")
	}
}

func TestRawIsBoundedWithMarker(t *testing.T) {
	l := New(WithMaxRaw(8))
	e := l.Frame(In, "stdout", []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), nil, nil)
	if len(e.Raw) != 8 || !e.Truncated || e.Size != 36 {
		t.Fatalf("raw=%q truncated=%v size=%d", e.Raw, e.Truncated, e.Size)
	}
	if e.Summary.Kind != "result" {
		t.Errorf("summary must come from the whole frame, got %+v", e.Summary)
	}
	if _, err := e.Message(); err == nil {
		t.Error("a truncated event must not decode as a message")
	}
}

func TestWriteJSONL(t *testing.T) {
	l := New()
	l.Frame(Out, "stdin", []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), nil, nil)
	l.Harness(KindCheckpoint, "refserver", "slow/a/start reached")
	var buf bytes.Buffer
	if err := l.WriteJSONL(&buf); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&buf)
	var n int
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		n++
		if m["seq"].(float64) != float64(n) {
			t.Errorf("line %d seq = %v", n, m["seq"])
		}
	}
	if n != 2 {
		t.Fatalf("got %d lines", n)
	}
}

// blockingSink blocks every Write until release is closed.
type blockingSink struct {
	release chan struct{}
	entered chan struct{}
	once    sync.Once
	mu      sync.Mutex
	buf     bytes.Buffer
}

func (s *blockingSink) Write(p []byte) (int, error) {
	s.once.Do(func() { close(s.entered) })
	<-s.release
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func TestSlowSinkNeverBlocksAppend(t *testing.T) {
	l := New()
	sink := &blockingSink{release: make(chan struct{}), entered: make(chan struct{})}
	stop := l.Stream(sink)
	l.Harness(KindNote, "", "first")
	<-sink.entered // the sink is now stuck inside Write
	const n = 10000
	for i := range n {
		l.Frame(In, "stdout", []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), nil, nil)
		_ = i
	}
	// Every append returned while the sink was blocked.
	if got := l.Len(); got != n+1 {
		t.Fatalf("Len = %d, want %d", got, n+1)
	}
	close(sink.release)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Count(sink.buf.Bytes(), []byte("\n"))
	if lines != n+1 {
		t.Fatalf("sink got %d lines, want %d", lines, n+1)
	}
}

func TestWaitFor(t *testing.T) {
	// In a synctest bubble: a WaitFor that missed the event would sleep
	// out its safety net on the bubble's clock and fail at once.
	synctest.Test(t, func(t *testing.T) {
		l := New()
		got := make(chan Event, 1)
		ready := make(chan struct{})
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			close(ready)
			e, err := l.WaitFor(ctx, 0, func(e Event) bool { return e.Kind == KindExit })
			if err != nil {
				t.Error(err)
			}
			got <- e
		}()
		<-ready
		l.Harness(KindNote, "", "not yet")
		l.Harness(KindExit, "process", "exit 0")
		if e := <-got; e.Seq != 2 {
			t.Fatalf("WaitFor returned seq %d", e.Seq)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := l.WaitFor(ctx, 2, func(Event) bool { return true }); err == nil {
			t.Fatal("WaitFor must honour a done context")
		}
	})
}

func TestSanitize(t *testing.T) {
	tests := map[string]string{
		"plain":               "plain",
		"red \x1b[31mx":       `red \u001b[31mx`,
		"line\nbreak":         `line\u000abreak`,
		"bidi \u202eevil":     `bidi \u202eevil`,
		"bad \xff utf8":       "bad \ufffd utf8",
		"bell\a":              `bell\u0007`,
		"emoji 😀 ok, ünïcode": "emoji 😀 ok, ünïcode",
	}
	for in, want := range tests {
		if got := Sanitize(in, false); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Sanitize("a\nb\x1b", true); got != "a\nb\\u001b" {
		t.Errorf("keepNewlines: %q", got)
	}
}

func BenchmarkFrame(b *testing.B) {
	l := New()
	raw := []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok-1","progress":3,"total":10}}`)
	b.ReportAllocs()
	for b.Loop() {
		l.Frame(In, "stdout", raw, nil, nil)
	}
}

func TestJSONLRoundTrip(t *testing.T) {
	l := New()
	l.Frame(Out, "stdin", []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), nil, nil)
	l.Frame(In, "stdout", []byte("not json \x1b[2J"), nil, nil)
	l.Harness(KindDeadline, "runner", "deadline")
	l.State("request 1", "pending", "done")
	l.Append(Event{Dir: In, Channel: "stderr", Kind: KindStderr, Raw: []byte("warn\n")})
	var buf bytes.Buffer
	if err := l.WriteJSONL(&buf); err != nil {
		t.Fatal(err)
	}
	buf.WriteString("\n")
	got, err := ReadJSONL(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(l.Events(), got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if _, err := ReadJSONL(strings.NewReader("{\"seq\":1,\"kind\":\"frame\"}\n[1]\n")); !errors.Is(err, ErrBadJSONL) || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad line: %v", err)
	}
	if _, err := ReadJSONL(strings.NewReader(`{"hello":1}`)); !errors.Is(err, ErrBadJSONL) {
		t.Errorf("not an event: %v", err)
	}
}

func TestCapsBoundTheLog(t *testing.T) {
	l := New(WithCaps(10, 500))
	frame := []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`)
	for range 100 {
		l.Frame(In, "stdout", frame, nil, nil)
	}
	evs := l.Events()
	if len(evs) != 11 { // the cap, plus the note that it was reached
		t.Fatalf("kept %d events, want 11", len(evs))
	}
	var notes, frames, rawBytes int
	for i, e := range evs {
		if e.Seq != uint64(i+1) {
			t.Fatalf("sequence numbers must stay gapless: event %d has seq %d", i, e.Seq)
		}
		switch {
		case e.Kind == KindError && e.Channel == "chronology":
			notes++
		case e.Kind == KindFrame:
			frames++
			rawBytes += len(e.Raw)
			if len(e.Raw) == 0 && !e.Truncated {
				t.Errorf("seq %d lost its raw bytes without a truncation mark", e.Seq)
			}
		}
	}
	if notes != 2 {
		t.Errorf("%d cap notes, want one per cap", notes)
	}
	if rawBytes > 500 {
		t.Errorf("%d raw bytes kept, over the cap of 500", rawBytes)
	}
	if got := l.Dropped(); got != uint64(100-frames) {
		t.Errorf("Dropped = %d, want %d", got, 100-frames)
	}
	if c := l.CapReached(); !strings.Contains(c, "cap of 10 events") || !strings.Contains(c, "cap of 500 raw bytes") {
		t.Errorf("CapReached = %q, want both caps named", c)
	}
	if c := New().CapReached(); c != "" {
		t.Errorf("CapReached of an empty log = %q", c)
	}
}

// TestSnapshotIsStable: a snapshot does not see later appends, and needs
// no copy.
func TestSnapshotIsStable(t *testing.T) {
	l := New()
	l.Harness(KindNote, "t", "one")
	snap := l.Snapshot()
	for range 100 {
		l.Harness(KindNote, "t", "more")
	}
	if len(snap) != 1 || snap[0].Text != "one" || len(l.Snapshot()) != 101 {
		t.Errorf("snapshot %d events (%q), log %d", len(snap), snap[0].Text, len(l.Snapshot()))
	}
	if cap(snap) != len(snap) {
		t.Errorf("a snapshot must not be appendable into the log's array")
	}
}

// TestSummarizeSkipsOnlyWhatCannotMatch checks that the summary finds a
// token or request ID under every name encoding/json matches, so that
// skipping the decoding of params that hold neither changes nothing.
func TestSummarizeSkipsOnlyWhatCannotMatch(t *testing.T) {
	tests := map[string]Summary{
		`{"progressToken":"a","progress":1}`:         {Kind: "notification", Method: "m", Token: `"a"`},
		`{"PROGRESSTOKEN":7}`:                        {Kind: "notification", Method: "m", Token: `7`},
		`{"progress\u0054oken":8}`:                   {Kind: "notification", Method: "m", Token: `8`},
		`{"progreſſToken":9}`:                        {Kind: "notification", Method: "m", Token: `9`},
		`{"_meta":{"progressToken":"m"},"name":"x"}`: {Kind: "notification", Method: "m", Token: `"m"`},
		`{"RequestId":5,"reason":"r"}`:               {Kind: "notification", Method: "m", RequestID: `5`},
		`{"name":"slow","arguments":{"steps":2}}`:    {Kind: "notification", Method: "m"},
		`{"name":"progresstoken-less"}`:              {Kind: "notification", Method: "m"},
	}
	for params, want := range tests {
		raw := []byte(`{"jsonrpc":"2.0","method":"m","params":` + params + `}`)
		msg, err := jsonrpc.Decode(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if diff := cmp.Diff(&want, Summarize(msg, nil)); diff != "" {
			t.Errorf("Summarize(%s) (-want +got):\n%s", params, diff)
		}
	}
}

// TestRecordInto: a stand-in log records into the log it points at, every
// method acting there (the runner's shared stdio sessions), and gets its
// own events back with RecordInto(nil); a redactor set on the stand-in
// reaches the log it records into.
func TestRecordInto(t *testing.T) {
	stand := New()
	first, second := New(), New()
	stand.RecordInto(first)
	stand.Harness(KindDecision, "t", "one")
	stand.RecordInto(second)
	r := NewRedactor()
	r.Add("s3cret")
	stand.SetRedactor(r)
	ch := second.Changed()
	stand.Harness(KindDecision, "t", "two s3cret")
	select {
	case <-ch:
	default:
		t.Fatal("an append through the stand-in did not wake the waiters of the log it records into")
	}
	if got := first.Len(); got != 1 {
		t.Fatalf("first log has %d events, want 1 (only what came before the switch)", got)
	}
	if got := stand.Len(); got != 1 || second.Len() != 1 {
		t.Fatalf("stand-in Len %d, second Len %d: want both 1 (the stand-in reads the log it records into)", got, second.Len())
	}
	ev := second.Events()[0]
	if ev.Seq != 1 || strings.Contains(ev.Text, "s3cret") {
		t.Fatalf("second log's event %+v: want sequence 1 and the secret redacted", ev)
	}
	if _, err := stand.WaitFor(t.Context(), 0, func(e Event) bool { return e.Seq == 1 }); err != nil {
		t.Fatal(err)
	}
	third := New()
	third.RecordInto(stand) // a stand-in is taken as the log it records into
	third.Harness(KindDecision, "t", "three")
	if second.Len() != 2 {
		t.Fatalf("second log has %d events, want 2: a log recording into a stand-in records where the stand-in does", second.Len())
	}
	stand.RecordInto(nil)
	stand.Harness(KindDecision, "t", "own")
	if stand.Len() != 1 || second.Len() != 2 {
		t.Fatalf("after RecordInto(nil): stand-in %d events, second %d; want 1 and 2", stand.Len(), second.Len())
	}
}

// TestFilter: a stand-in's filter sees every event appended through it
// and stores what it returns in the log the stand-in records into, before
// the redactor runs; a nil filter stores events as they come again.
func TestFilter(t *testing.T) {
	stand, into := New(), New()
	stand.RecordInto(into)
	r := NewRedactor()
	r.Add("s3cret")
	stand.SetRedactor(r)
	var seen []string
	stand.Filter(func(e Event) Event {
		if e.Kind == KindFrame {
			e.Text = e.Summary.Method
		}
		seen = append(seen, e.Text)
		if strings.HasPrefix(e.Text, "aside") {
			return Event{Dir: Harness, Channel: "runner", Kind: KindNote, Text: "set aside: " + e.Text}
		}
		return e
	})
	stand.Harness(KindDecision, "t", "kept")
	stand.Frame(In, "stdout", []byte(`{"jsonrpc":"2.0","method":"aside frame"}`), nil, nil)
	got := stand.Harness(KindDecision, "t", "aside s3cret")
	if got.Seq != 3 || got.Kind != KindNote || got.Text != "set aside: aside [redacted]" {
		t.Fatalf("the set-aside event was stored as %+v, want the filter's note, redacted, at sequence 3", got)
	}
	stand.Filter(nil)
	stand.Harness(KindDecision, "t", "aside again")
	texts := []string{}
	for _, e := range into.Events() {
		texts = append(texts, e.Text)
	}
	want := []string{"kept", "set aside: aside frame", "set aside: aside [redacted]", "aside again"}
	if !slices.Equal(texts, want) {
		t.Fatalf("the log holds %q, want %q", texts, want)
	}
	if !slices.Equal(seen, []string{"kept", "aside frame", "aside s3cret"}) {
		t.Fatalf("the filter saw %q, want the three events appended while it was set", seen)
	}
}

// TestAppendJSONLMatchesWriteJSONL: a line built by AppendJSONL is the
// line WriteJSONL writes for the same event, escapes included (HTML
// characters, C1 controls, invalid UTF-8 in raw bytes), and reads back.
func TestAppendJSONLMatchesWriteJSONL(t *testing.T) {
	l := New()
	l.Frame(In, "stdout", []byte("{\"jsonrpc\":\"2.0\",\"method\":\"<x>&\u009b\u202e\",\"params\":{\"b\":\"\xff\"}}"), nil, nil)
	l.Harness(KindNote, "stderr\u0085", "a <note> & \u2066more")
	var want bytes.Buffer
	if err := l.WriteJSONL(&want); err != nil {
		t.Fatal(err)
	}
	var got []byte
	for _, e := range l.Events() {
		var err error
		if got, err = AppendJSONL(got, e); err != nil {
			t.Fatal(err)
		}
	}
	if string(got) != want.String() {
		t.Fatalf("AppendJSONL wrote\n%s\nWriteJSONL wrote\n%s", got, want.Bytes())
	}
	back, err := ReadJSONL(bytes.NewReader(got))
	if err != nil || len(back) != 2 || back[1].Text != "a <note> & \u2066more" {
		t.Fatalf("read back %+v, %v", back, err)
	}
}

// TestPrepareIsWhatAppendStores: Prepare redacts, clips text, caps and
// copies raw bytes exactly as Append does, numbering aside.
func TestPrepareIsWhatAppendStores(t *testing.T) {
	r := NewRedactor()
	r.Add("sekret-value")
	l := New(WithMaxRaw(16), WithRedactor(r))
	raw := []byte(`{"jsonrpc":"2.0","id":1,"result":{"k":"sekret-value"}}`)
	e := Event{Dir: In, Channel: "stdout", Kind: KindFrame, Raw: raw, Text: "sekret-value " + strings.Repeat("x", MaxText)}
	stored := l.Append(e)
	prepared := Prepare(e, r, 16)
	stored.Seq, stored.Offset = 0, 0
	if diff := cmp.Diff(stored, prepared); diff != "" {
		t.Errorf("Prepare differs from Append (-append +prepare):\n%s", diff)
	}
	if strings.Contains(string(prepared.Raw)+prepared.Text, "sekret") || prepared.Size != len(raw) || !prepared.Truncated || len(prepared.Raw) != 16 {
		t.Errorf("prepared %+v", prepared)
	}
	prepared.Raw[0] = 'X'
	if raw[0] != '{' {
		t.Error("Prepare's raw bytes share the caller's")
	}
}

// TestReadJSONLCutOffMidWrite: a chronology whose writer was killed in
// the middle of a line reads up to its last whole line; a bad line
// anywhere else, or a whole last line that is not an event, is still an
// error.
func TestReadJSONLCutOffMidWrite(t *testing.T) {
	l := New()
	l.Frame(Out, "stdin", []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), nil, nil)
	l.Frame(In, "stdout", []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), nil, nil)
	var buf bytes.Buffer
	if err := l.WriteJSONL(&buf); err != nil {
		t.Fatal(err)
	}
	whole := buf.String()
	second := strings.Index(whole, "\n") + 1
	for cut := second + 1; cut < len(whole)-1; cut++ {
		events, err := ReadJSONL(strings.NewReader(whole[:cut]))
		if err != nil || len(events) != 1 || events[0].Seq != 1 {
			t.Fatalf("cut at %d of %d: %d events, %v", cut, len(whole), len(events), err)
		}
	}
	if _, err := ReadJSONL(strings.NewReader(whole[:second+5] + "\n" + whole[second:])); !errors.Is(err, ErrBadJSONL) {
		t.Errorf("a torn line before the last: %v, want ErrBadJSONL", err)
	}
	if _, err := ReadJSONL(strings.NewReader(whole + whole[:second+5] + "\n")); !errors.Is(err, ErrBadJSONL) {
		t.Errorf("a bad last line with its newline: %v, want ErrBadJSONL", err)
	}
}

// TestKeptDecodingFollowsRaw: a decoding kept with an event is what
// Message returns (a copy of its own, with the event's raw bytes), and
// Prepare keeps it only while the raw bytes are kept whole and as they
// were: not once the redactor changed them or they were cut.
func TestKeptDecodingFollowsRaw(t *testing.T) {
	raw := []byte(`{"jsonrpc":"2.0","id":7,"result":{"k":"sekret-value"}}`)
	decode := func() *jsonrpc.Message {
		m, err := jsonrpc.Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		m.Method = "marker" // tells the kept decoding from a fresh one
		return m
	}
	frame := func() Event {
		e := Event{Dir: In, Channel: "stdout", Kind: KindFrame, Raw: raw}
		e.KeepDecoded(decode())
		return e
	}
	r := NewRedactor()
	r.Add("unrelated")
	kept := Prepare(frame(), r, DefaultMaxRaw)
	m, err := kept.Message()
	if err != nil || m.Method != "marker" || string(m.Raw) != string(raw) || &m.Raw[0] != &kept.Raw[0] || m.ID.String() != "7" {
		t.Fatalf("kept decoding: %+v, %v", m, err)
	}
	m.Method = "changed"
	if again, _ := kept.Message(); again.Method != "marker" {
		t.Error("Message's result shares the kept decoding")
	}
	r.Add("sekret-value")
	for name, e := range map[string]Event{"redacted": Prepare(frame(), r, DefaultMaxRaw), "cut": Prepare(frame(), nil, 16)} {
		if e.Decoded != nil {
			t.Errorf("%s: the decoding was kept", name)
		}
		if m, err := e.Message(); err == nil && m.Method == "marker" {
			t.Errorf("%s: Message returned the decoding of bytes no longer there", name)
		}
	}
}
