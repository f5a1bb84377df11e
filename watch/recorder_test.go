package watch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/transport"
)

// record runs pieces of one stream through a recorder and returns the
// events it recorded, with their numbers and offsets cleared, and the
// chronology it wrote.
func record(t *testing.T, mode streamMode, pieces [][]byte) ([]chrono.Event, []byte) {
	t.Helper()
	var jsonl bytes.Buffer
	c := newCollector()
	r := NewRecorder(RecorderConfig{JSONL: &jsonl, Sinks: []Sink{c}, MaxRaw: 64})
	s := r.newStream(chrono.In, "stdout", mode)
	if mode == modeSSE {
		s.channel = "POST #1"
	}
	at := time.Now()
	for _, p := range pieces {
		r.data(s, p, at)
	}
	r.end(s, endEOF, "end of stream", at)
	if err := r.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	events := c.all()
	written := readJSONL(t, jsonl.Bytes())
	if len(written) != len(events) {
		t.Fatalf("%d events written, %d handed to the sink", len(written), len(events))
	}
	for i := range events {
		events[i].Seq, events[i].Offset = 0, 0
	}
	return events, jsonl.Bytes()
}

// splits returns input whole, cut in two at every position (in the
// middle of a long input, at every 53rd), and in pieces of one byte.
func splits(input []byte) [][][]byte {
	out := [][][]byte{{input}}
	for i := 1; i < len(input); i++ {
		if i > 200 && i < len(input)-200 && i%53 != 0 {
			continue
		}
		out = append(out, [][]byte{input[:i], input[i:]})
	}
	var bytewise [][]byte
	for i := range input {
		bytewise = append(bytewise, input[i:i+1])
	}
	return append(out, bytewise)
}

// TestLinesFramedWhateverTheReads: a stdio stream is cut into the same
// frames however its reads fall: CRLF endings stripped and noted, blank
// lines recorded, a last line without a newline recorded and noted,
// each malformed frame summarised as such, a long one kept in part with
// its full size.
func TestLinesFramedWhateverTheReads(t *testing.T) {
	long := `{"jsonrpc":"2.0","id":3,"result":{"x":"` + strings.Repeat("q", 5000) + `"}}`
	input := []byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n\ngarbage\n" + long + "\n{\"jsonrpc\":\"2.0\",\"id\":4")
	want, _ := record(t, modeLines, [][]byte{input})
	type gist struct {
		Raw       string
		Size      int
		Truncated bool
		Kind      string
		Malformed string
		ID        string
		Text      string
	}
	var got []gist
	for _, e := range want {
		g := gist{Raw: string(e.Raw), Size: e.Size, Truncated: e.Truncated, Text: e.Text}
		if e.Summary != nil {
			g.Kind, g.Malformed, g.ID = e.Summary.Kind, e.Summary.Malformed, e.Summary.ID
		}
		got = append(got, g)
	}
	wantGist := []gist{
		{Raw: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, Size: 40, Kind: "request", ID: "1", Text: "ends in CRLF"},
		{Malformed: "parse-error", Text: "blank line"},
		{Raw: "garbage", Size: 7, Malformed: "parse-error"},
		{Raw: long[:64], Size: len(long), Truncated: true, Kind: "result", ID: "3",
			Text: fmt.Sprintf("frame of %d bytes, larger than the 64 kept: summarised from its top-level members", len(long))},
		{Raw: `{"jsonrpc":"2.0","id":4`, Size: 23, Malformed: "parse-error", Text: "no newline at the end of the stream"},
		{Text: "end of stream"},
	}
	if diff := cmp.Diff(wantGist, got); diff != "" {
		t.Fatalf("frames (-want +got):\n%s", diff)
	}
	for _, pieces := range splits(input) {
		if len(pieces) > 2 && len(pieces) != len(input) {
			continue
		}
		events, _ := record(t, modeLines, pieces)
		if diff := cmp.Diff(want, events); diff != "" {
			t.Fatalf("cut into %d pieces (first %d bytes): (-whole +cut)\n%s", len(pieces), len(pieces[0]), diff)
		}
	}
}

// sseInput is an event stream with everything a parser must handle: a
// byte order mark, CRLF, CR and LF line endings, comments, ids, a retry,
// multi-line data, a priming event, a named event, an event whose data
// is too long to keep, and an unfinished event at the end.
func sseInput() []byte {
	return []byte("\ufeff: hello\r\n\r\nid: 1\ndata:\n\n" +
		"id: 2\r\nretry: 250\r\ndata: {\"jsonrpc\":\"2.0\",\r\ndata: \"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\r\n\r\n" +
		"event: endpoint\rdata: /messages\r\r" +
		"data:{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"pad\":\"" + strings.Repeat("p", 200) + "\"}}\n\n" +
		"data: nope\n\n" +
		"id: 9\ndata: {\"unfinished\":")
}

// TestSSEFramedAsTransportReadsIt: the recorder cuts an event stream into
// the events transport.SSEReader reads from it (same ids, event types
// and data), whatever its reads, messages as frames and the others as
// HTTP events, and notes an event cut off by the end of the stream.
func TestSSEFramedAsTransportReadsIt(t *testing.T) {
	input := sseInput()
	want, _ := record(t, modeSSE, [][]byte{input})

	rd := transport.NewSSEReader(bytes.NewReader(input), 0)
	var oracle []transport.SSEEvent
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		oracle = append(oracle, ev)
	}
	var recorded []chrono.Event
	for _, e := range want {
		if e.Kind == chrono.KindFrame || e.Kind == chrono.KindHTTP {
			recorded = append(recorded, e)
		}
	}
	if len(recorded) != len(oracle) {
		t.Fatalf("%d events recorded, transport reads %d:\n%s", len(recorded), len(oracle), dump(want))
	}
	for i, ev := range oracle {
		e := recorded[i]
		if e.Channel != "SSE POST #1" || e.Dir != chrono.In {
			t.Errorf("event %d on %s %s", i, e.Dir, e.Channel)
		}
		data := string(e.Raw)
		if e.Truncated {
			data = ev.Data[:len(e.Raw)]
			if e.Size != len(ev.Data) {
				t.Errorf("event %d: size %d, data is %d bytes", i, e.Size, len(ev.Data))
			}
		}
		if data != ev.Data[:min(len(ev.Data), len(data))] || len(e.Raw) > len(ev.Data) {
			t.Errorf("event %d: data %q, transport reads %q", i, e.Raw, ev.Data)
		}
		if ev.HasID && !strings.Contains(e.Text, " id="+ev.ID) || ev.Event != "" && !strings.Contains(e.Text, " event="+ev.Event) {
			t.Errorf("event %d: text %q does not give id %q and event %q", i, e.Text, ev.ID, ev.Event)
		}
		message := ev.HasData && ev.Data != "" && (ev.Event == "" || ev.Event == "message")
		if message != (e.Kind == chrono.KindFrame) {
			t.Errorf("event %d (%q, event %q) recorded as %s", i, ev.Data, ev.Event, e.Kind)
		}
	}
	for _, want := range []string{"sse comments=1", "sse id=1 (empty data: priming)", "sse id=2 retry=250ms", "sse event=endpoint"} {
		found := false
		for _, e := range recorded {
			found = found || e.Text == want
		}
		if !found {
			t.Errorf("no event with text %q:\n%s", want, dump(recorded))
		}
	}
	if p := recorded[2].Summary; p == nil || p.Token != "1" || p.Method != "notifications/progress" {
		t.Errorf("multi-line data summarised as %+v", p)
	}
	if p := recorded[4].Summary; p == nil || p.ID != "5" || !recorded[4].Truncated {
		t.Errorf("long data: %+v truncated=%v", p, recorded[4].Truncated)
	}
	last := want[len(want)-1]
	if !strings.HasPrefix(want[len(want)-2].Text, "the stream ended inside an event") || last.Text != "end of stream" {
		t.Errorf("the end of the stream recorded as:\n%s", dump(want[len(want)-2:]))
	}

	for _, pieces := range splits(input) {
		events, _ := record(t, modeSSE, pieces)
		if diff := cmp.Diff(want, events); diff != "" {
			t.Fatalf("cut into %d pieces (first %d bytes): (-whole +cut)\n%s", len(pieces), len(pieces[0]), diff)
		}
	}
}

// TestDroppedPiecesAreSaidAndResynchronised: pieces dropped because the
// queue is full are counted; the next piece of the stream says how many
// were lost, the frame they cut is marked incomplete, and framing
// resumes at the next line end, so that later frames are whole again.
func TestDroppedPiecesAreSaidAndResynchronised(t *testing.T) {
	var jsonl bytes.Buffer
	c := newCollector()
	held, block := make(chan struct{}), make(chan struct{})
	blocker := sinkFunc(func(e chrono.Event) {
		if e.Text == "hold" {
			close(held)
			<-block
		}
	})
	r := NewRecorder(RecorderConfig{JSONL: &jsonl, Sinks: []Sink{blocker, c}, QueueTaps: 2})
	s := r.newStream(chrono.In, "stdout", modeLines)
	at := time.Now()
	r.Note(chrono.KindNote, "test", "hold") // the recorder stops in the sink
	select {
	case <-held:
	case <-time.After(safety):
		t.Fatal("the recorder never reached the sink")
	}
	r.data(s, []byte(`{"jsonrpc":"2.0","id":1,"met`), at) // queued
	r.data(s, []byte(`hod":"ping"}`+"\n"+`{"jsonrpc":"2.0","id":2,`), at)
	r.data(s, []byte(`"method":"lost"}`+"\n"), at) // dropped: the queue holds 2
	r.data(s, []byte(`"method":"lost too"}`+"\n"), at)
	if taps, bytes := r.Dropped(); taps != 2 || bytes != 38 {
		t.Fatalf("Dropped() = %d pieces, %d bytes; want 2, 38", taps, bytes)
	}
	close(block)
	// The recorder has taken the queue once it records the first frame.
	c.waitFor(t, "frame 1", func(e chrono.Event) bool { return e.Summary != nil && e.Summary.ID == "1" })
	r.data(s, []byte(`tail of a lost line"}`+"\n"+`{"jsonrpc":"2.0","id":3,"method":"ping"}`+"\n"), at)
	r.end(s, endEOF, "", at)
	if err := r.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	events := readJSONL(t, jsonl.Bytes())
	var frames, lost []chrono.Event
	for _, e := range events {
		switch {
		case e.Kind == chrono.KindFrame:
			frames = append(frames, e)
		case strings.HasPrefix(e.Text, TextCaptureIncomplete):
			lost = append(lost, e)
		}
	}
	if len(frames) != 3 || frames[0].Summary.ID != "1" || string(frames[1].Raw) != `{"jsonrpc":"2.0","id":2,` || !frames[1].Truncated ||
		frames[1].Summary != nil || !strings.Contains(frames[1].Text, "dropped") || frames[2].Summary.ID != "3" {
		t.Errorf("frames:\n%s", dump(frames))
	}
	if len(lost) != 3 || lost[0].Text != TextGapMarked || lost[0].Seq > frames[2].Seq ||
		lost[1].Channel != "stdout" || !strings.Contains(lost[1].Text, "2 pieces (38 bytes) of stdout") ||
		lost[2].Channel != "recorder" || lost[2].Seq != uint64(len(events)) {
		t.Errorf("drop notices:\n%s", dump(lost))
	}
}

// TestGapMarkedBeforeWhatFollowsIt: a piece lost from one stream is
// marked as a gap before anything queued after it on any stream, so that
// a server's answer to a request whose bytes were lost from stdin comes
// after the notice (the judge then makes no finding a lost frame could
// fake), not before it, as it did when only stdin's next piece said so.
func TestGapMarkedBeforeWhatFollowsIt(t *testing.T) {
	var jsonl bytes.Buffer
	held, block := make(chan struct{}), make(chan struct{})
	blocker := sinkFunc(func(e chrono.Event) {
		if e.Text == "hold" {
			close(held)
			<-block
		}
	})
	c := newCollector()
	r := NewRecorder(RecorderConfig{JSONL: &jsonl, Sinks: []Sink{blocker, c}, QueueTaps: 2})
	in := r.newStream(chrono.Out, "stdin", modeLines)
	out := r.newStream(chrono.In, "stdout", modeLines)
	at := time.Now()
	r.Note(chrono.KindNote, "test", "hold")
	select {
	case <-held:
	case <-time.After(safety):
		t.Fatal("the recorder never reached the sink")
	}
	r.data(in, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"), at)
	r.data(in, []byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n"), at)
	r.data(in, []byte(`{"jsonrpc":"2.0","id":7,"method":"ping"}`+"\n"), at) // dropped
	close(block)
	// The recorder has taken the queue once it records the first frame.
	c.waitFor(t, "frame 1", func(e chrono.Event) bool { return e.Summary != nil && e.Summary.ID == "1" })
	r.data(out, []byte(`{"jsonrpc":"2.0","id":7,"result":{}}`+"\n"), at)
	if err := r.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, e := range readJSONL(t, jsonl.Bytes()) {
		switch {
		case e.Kind == chrono.KindFrame:
			order = append(order, e.Channel+":"+e.Summary.ID)
		case strings.HasPrefix(e.Text, TextCaptureIncomplete):
			order = append(order, "gap:"+e.Channel)
		}
	}
	if want := "stdin:1 stdin:2 gap:recorder stdout:7 gap:recorder"; strings.Join(order, " ") != want {
		t.Errorf("order %v; want %s", order, want)
	}
}

type sinkFunc func(chrono.Event)

func (f sinkFunc) Event(e chrono.Event) { f(e) }

// TestSinkPanicIsContained: a sink that panics is recorded and no longer
// called; the recording and the other sinks go on.
func TestSinkPanicIsContained(t *testing.T) {
	var jsonl bytes.Buffer
	c := newCollector()
	calls := 0
	bad := sinkFunc(func(chrono.Event) { calls++; panic("boom") })
	r := NewRecorder(RecorderConfig{JSONL: &jsonl, Sinks: []Sink{bad, c}})
	r.Note(chrono.KindNote, "test", "one")
	r.Note(chrono.KindNote, "test", "two")
	if err := r.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	events := readJSONL(t, jsonl.Bytes())
	if calls != 1 || len(events) != 3 || !strings.Contains(events[1].Text, "sink 1 panicked on event 1") || len(c.all()) != 3 {
		t.Errorf("calls %d, events:\n%s\ncollected:\n%s", calls, dump(events), dump(c.all()))
	}
}

// TestQueueWakesTheRecorderOnlyWhenItMust: a push wakes the recorder
// when it is parked, or when the queue reaches its wake level (an
// eighth of either bound); any other push leaves it to find the piece
// at the end of its batch wait.
func TestQueueWakesTheRecorderOnlyWhenItMust(t *testing.T) {
	var q queue
	q.init(16, 1<<20) // wake level: 2 taps, 128 KiB
	piece := tap{op: opData, data: []byte("x")}
	woken := func() bool {
		select {
		case <-q.wake:
			return true
		default:
			return false
		}
	}
	if ok, _ := q.push(piece, false, false); !ok || woken() {
		t.Fatalf("first push: queued %v, woke the recorder %v; want queued without a wake-up", ok, !ok)
	}
	if q.push(piece, false, false); !woken() {
		t.Error("the push that reached the wake level (2 taps) did not wake the recorder")
	}
	q.take(nil)
	if q.push(tap{op: opData, data: make([]byte, 128<<10)}, false, false); !woken() {
		t.Error("the push that reached the byte wake level did not wake the recorder")
	}
	q.take(nil)
	if !q.park() {
		t.Fatal("park() on an empty queue = false")
	}
	if q.push(piece, false, false); !woken() {
		t.Error("a push did not wake the parked recorder")
	}
	q.take(nil)
	if q.push(piece, true, false); woken() {
		t.Error("a push below the wake level woke the recorder, which was no longer parked")
	}
	if q.park() {
		t.Error("park() with a tap waiting = true")
	}
}

// TestParkedRecorderRecordsTheNextPiece: once the conversation has gone
// quiet and the recorder has parked, the next piece is recorded without
// Close or any other push.
func TestParkedRecorderRecordsTheNextPiece(t *testing.T) {
	c := newCollector()
	r := NewRecorder(RecorderConfig{Sinks: []Sink{c}})
	defer r.Close(context.Background())
	s := r.newStream(chrono.In, "stdout", modeLines)
	for _, id := range []string{"1", "2"} {
		deadline := time.Now().Add(safety)
		for {
			r.q.mu.Lock()
			parked := r.q.parked
			r.q.mu.Unlock()
			if parked {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the recorder never parked")
			}
			runtime.Gosched()
		}
		r.data(s, []byte(`{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`+"\n"), time.Now())
		c.waitFor(t, "frame "+id, func(e chrono.Event) bool { return e.Summary != nil && e.Summary.ID == id })
	}
}

// TestSinkGetsTheDecoding: a sink is handed the recorder's decoding of a
// frame kept whole (Message returns it, not a new decoding), and none
// of a frame cut to MaxRaw or of one that is no message.
func TestSinkGetsTheDecoding(t *testing.T) {
	var got []chrono.Event
	r := NewSyncRecorder(RecorderConfig{MaxRaw: 80, Sinks: []Sink{sinkFunc(func(e chrono.Event) { got = append(got, e) })}})
	r.Host([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}` + "\n"))
	r.Server([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 100) + `"}]}}` + "\n"))
	r.Server([]byte("not json\n"))
	if len(got) != 3 {
		t.Fatalf("%d events, want 3", len(got))
	}
	if d := got[0].Decoded; d == nil || d.Method != "tools/call" || string(d.Params) != `{"name":"x"}` {
		t.Errorf("the request's decoding: %+v", d)
	}
	if m, err := got[0].Message(); err != nil || m.Method != "tools/call" || string(m.Raw) != string(got[0].Raw) {
		t.Errorf("Message: %+v, %v", m, err)
	}
	if got[1].Decoded != nil || !got[1].Truncated {
		t.Errorf("the result cut to MaxRaw kept a decoding: %+v", got[1])
	}
	if got[2].Decoded != nil || got[2].Summary == nil || got[2].Summary.Malformed == "" {
		t.Errorf("the line that is no message: %+v", got[2])
	}
}
