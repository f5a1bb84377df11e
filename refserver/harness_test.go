package refserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/transport"
)

// safety bounds every wait of the tests. It is never used to synchronise:
// waits end on a frame, a line or a channel; the deadline only turns a
// hang into a failure.
const safety = 5 * time.Second

// frame is one line the server wrote; msg is nil when it is not JSON-RPC.
type frame struct {
	raw []byte
	msg *jsonrpc.Message
}

// queue is an unbounded FIFO fed by one goroutine, so the server never
// blocks on a slow test.
type queue[T any] struct {
	mu     sync.Mutex
	items  []T
	closed bool
	signal chan struct{}
}

func newQueue[T any]() *queue[T] { return &queue[T]{signal: make(chan struct{}, 1)} }

func (q *queue[T]) push(v T) {
	q.mu.Lock()
	q.items = append(q.items, v)
	q.mu.Unlock()
	q.poke()
}

func (q *queue[T]) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.poke()
}

func (q *queue[T]) poke() {
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// pop returns the next item; ok is false at the end or after the safety
// deadline (timedOut).
func (q *queue[T]) pop(deadline <-chan time.Time) (v T, ok, timedOut bool) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			v = q.items[0]
			q.items = q.items[1:]
			q.mu.Unlock()
			return v, true, false
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return v, false, false
		}
		select {
		case <-q.signal:
		case <-deadline:
			return v, false, true
		}
	}
}

// lineSink collects Stderr lines and lets a test wait for one.
type lineSink struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	lines   []string
	changed chan struct{}
}

func newLineSink() *lineSink { return &lineSink{changed: make(chan struct{})} }

func (s *lineSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.buf.Write(p)
	for {
		line, err := s.buf.ReadString('\n')
		if err != nil {
			s.buf.WriteString(line)
			break
		}
		s.lines = append(s.lines, strings.TrimSuffix(line, "\n"))
	}
	ch := s.changed
	s.changed = make(chan struct{})
	s.mu.Unlock()
	close(ch)
	return len(p), nil
}

// wait blocks until a line contains sub.
func (s *lineSink) wait(t testing.TB, sub string) {
	t.Helper()
	deadline := time.After(safety)
	for {
		s.mu.Lock()
		for _, l := range s.lines {
			if strings.Contains(l, sub) {
				s.mu.Unlock()
				return
			}
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("no stderr line containing %q; have:\n%s", sub, s.text())
		}
	}
}

func (s *lineSink) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.lines, "\n")
}

// harness drives one Serve session through io.Pipe with raw lines.
type harness struct {
	t        testing.TB
	srv      *Server
	in       *io.PipeWriter
	cancel   context.CancelFunc
	served   chan error
	out      *queue[frame]
	stderr   *lineSink
	seen     []frame
	claimed  map[int]bool // indexes of seen returned by waitResponse
	nextID   int64
	serveErr error
	ended    bool
	shared   bool // another harness serves srv too (second)
}

func newHarness(t testing.TB, faults ...Fault) *harness {
	t.Helper()
	fs := FaultSet{}
	for _, f := range faults {
		fs[f] = true
	}
	return newHarnessWith(t, Options{Faults: fs})
}

// newHarnessWith is newHarness with more options; Stderr and Version are
// the harness's own.
func newHarnessWith(t testing.TB, opts Options) *harness {
	t.Helper()
	stderr := newLineSink()
	opts.Stderr, opts.Version = stderr, "test"
	return attachHarness(t, New(opts), stderr)
}

// second is another connection (another Serve) to h's server.
// Its goroutine count is not checked: the first connection's is, at its
// end, which comes after this one's (cleanups run last first).
func (h *harness) second() *harness {
	h.t.Helper()
	o := attachHarness(h.t, h.srv, h.stderr)
	o.shared = true
	return o
}

// attachHarness starts one session of srv, whose Stderr is stderr.
func attachHarness(t testing.TB, srv *Server, stderr *lineSink) *harness {
	t.Helper()
	h := &harness{
		t:       t,
		stderr:  stderr,
		served:  make(chan error, 1),
		out:     newQueue[frame](),
		nextID:  1000,
		claimed: map[int]bool{},
	}
	h.srv = srv
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h.in = inW
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		defer h.out.close()
		fr := transport.NewFrameReader(outR, 0)
		for {
			raw, err := fr.ReadFrame()
			if err != nil {
				return
			}
			msg, _ := jsonrpc.Decode(raw)
			h.out.push(frame{raw: raw, msg: msg})
		}
	}()
	go func() {
		err := h.srv.Serve(ctx, inR, outW)
		_ = outW.Close()
		_ = inR.Close()
		h.served <- err
	}()
	t.Cleanup(func() {
		_ = h.in.Close()
		cancel()
		if !h.ended {
			select {
			case h.serveErr = <-h.served:
				h.ended = true
			case <-time.After(safety):
				t.Errorf("Serve did not return after input closed and context cancelled")
				return
			}
		}
		select {
		case <-readerDone:
		case <-time.After(safety):
			t.Errorf("output reader did not end")
		}
		if n := h.srv.live.Load(); n != 0 && !h.shared {
			t.Errorf("%d goroutines of Serve still running after it returned", n)
		}
	})
	return h
}

// send writes one raw line.
func (h *harness) send(line string) {
	h.t.Helper()
	if _, err := io.WriteString(h.in, line+"\n"); err != nil {
		h.t.Fatalf("writing %q: %v", line, err)
	}
}

func (h *harness) id() jsonrpc.ID {
	h.nextID++
	return jsonrpc.IntID(h.nextID)
}

func (h *harness) request(id jsonrpc.ID, method string, params any) {
	h.t.Helper()
	b, err := jsonrpc.EncodeRequest(id, method, params)
	if err != nil {
		h.t.Fatal(err)
	}
	h.send(string(b))
}

func (h *harness) notify(method string, params any) {
	h.t.Helper()
	b, err := jsonrpc.EncodeNotification(method, params)
	if err != nil {
		h.t.Fatal(err)
	}
	h.send(string(b))
}

func (h *harness) cancelReq(id jsonrpc.ID) {
	h.t.Helper()
	h.notify("notifications/cancelled", map[string]any{"requestId": id, "reason": "test"})
}

// next returns the next frame the server wrote; ok is false at the end of
// its output.
func (h *harness) next() (frame, bool) {
	h.t.Helper()
	f, ok, timedOut := h.out.pop(time.After(safety))
	if timedOut {
		h.t.Fatalf("no frame from the server within %v; frames so far:\n%s", safety, h.dump())
	}
	if ok {
		h.seen = append(h.seen, f)
	}
	return f, ok
}

// waitResponse returns the first response to id not returned before,
// reading frames as needed.
func (h *harness) waitResponse(id jsonrpc.ID) *jsonrpc.Message {
	h.t.Helper()
	i := 0
	for {
		for ; i < len(h.seen); i++ {
			f := h.seen[i]
			if f.msg != nil && f.msg.Kind.IsResponse() && !f.msg.NullID && f.msg.ID == id && !h.claimed[i] {
				h.claimed[i] = true
				return f.msg
			}
		}
		if _, ok := h.next(); !ok {
			h.t.Fatalf("output ended before the response to %s; frames:\n%s", id, h.dump())
		}
	}
}

// call sends a request with a fresh id and returns its response.
func (h *harness) call(method string, params any) *jsonrpc.Message {
	h.t.Helper()
	id := h.id()
	h.request(id, method, params)
	return h.waitResponse(id)
}

// result calls and decodes a success result into v.
func (h *harness) result(method string, params, v any) {
	h.t.Helper()
	m := h.call(method, params)
	if m.Kind != jsonrpc.KindResult {
		h.t.Fatalf("%s: got %s %+v, want a result", method, m.Kind, m.Error)
	}
	if v != nil {
		if err := json.Unmarshal(m.Result, v); err != nil {
			h.t.Fatalf("%s: decoding %s: %v", method, m.Result, err)
		}
	}
}

func (h *harness) await(cp string) mcp.ControlReached {
	h.t.Helper()
	var r mcp.ControlReached
	h.result(mcp.MethodControlAwait, map[string]string{"checkpoint": cp}, &r)
	return r
}

func (h *harness) release(cp string) {
	h.t.Helper()
	h.result(mcp.MethodControlRelease, map[string]string{"checkpoint": cp}, nil)
}

func (h *harness) counters() mcp.ControlCounters {
	h.t.Helper()
	var c mcp.ControlCounters
	h.result(mcp.MethodControlCounters, map[string]any{}, &c)
	return c
}

// slow starts the slow tool with request id and, if token is non-nil,
// that raw progress token.
func (h *harness) slow(id jsonrpc.ID, token json.RawMessage, args map[string]any) {
	h.t.Helper()
	p := map[string]any{"name": ToolSlow, "arguments": args}
	if token != nil {
		p["_meta"] = map[string]any{"progressToken": token}
	}
	h.request(id, "tools/call", p)
}

// finish closes the input, waits for Serve and reads the rest of the
// output. It returns Serve's error.
func (h *harness) finish() error {
	h.t.Helper()
	_ = h.in.Close()
	return h.waitServed()
}

func (h *harness) waitServed() error {
	h.t.Helper()
	if !h.ended {
		select {
		case h.serveErr = <-h.served:
			h.ended = true
		case <-time.After(safety):
			h.t.Fatalf("Serve did not return")
		}
		if n := h.srv.live.Load(); n != 0 && !h.shared {
			h.t.Errorf("%d goroutines of Serve still running after it returned", n)
		}
	}
	for {
		if _, ok := h.next(); !ok {
			return h.serveErr
		}
	}
}

// progress is a decoded notifications/progress.
type progress struct {
	Token    json.RawMessage `json:"progressToken"`
	Progress float64         `json:"progress"`
	Total    *float64        `json:"total"`
	Message  string          `json:"message"`
}

// progressSeen returns every progress notification read so far, with its
// index in seen.
func (h *harness) progressSeen() ([]progress, []int) {
	h.t.Helper()
	var ps []progress
	var at []int
	for i, f := range h.seen {
		if f.msg == nil || f.msg.Kind != jsonrpc.KindNotification || f.msg.Method != "notifications/progress" {
			continue
		}
		var p progress
		if err := json.Unmarshal(f.msg.Params, &p); err != nil {
			h.t.Fatalf("progress params %s: %v", f.msg.Params, err)
		}
		ps = append(ps, p)
		at = append(at, i)
	}
	return ps, at
}

// responsesTo returns the indexes in seen of responses carrying id.
func (h *harness) responsesTo(id jsonrpc.ID) []int {
	var at []int
	for i, f := range h.seen {
		if f.msg != nil && f.msg.Kind.IsResponse() && !f.msg.NullID && f.msg.ID == id {
			at = append(at, i)
		}
	}
	return at
}

// indexOfResponse is the index in seen of the first response to id, or -1.
func (h *harness) indexOfResponse(id jsonrpc.ID) int {
	if at := h.responsesTo(id); len(at) > 0 {
		return at[0]
	}
	return -1
}

func (h *harness) dump() string {
	var b strings.Builder
	for i, f := range h.seen {
		b.WriteString(strings.Repeat(" ", 2))
		b.WriteString(strconv.Itoa(i))
		b.WriteString(": ")
		b.Write(f.raw)
		b.WriteByte('\n')
	}
	b.WriteString("stderr:\n" + h.stderr.text())
	return b.String()
}

// wantError checks that m is an error response with code.
func wantError(t testing.TB, m *jsonrpc.Message, code int) {
	t.Helper()
	if m.Kind != jsonrpc.KindError || m.Error == nil || m.Error.Code != code {
		t.Fatalf("got %s, want error %d", m.Raw, code)
	}
}
