package peer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
)

// fakeServer is the far end of an in-memory pipe, driven by the test.
type fakeServer struct {
	t      *testing.T
	frames *transport.FrameReader
	w      io.WriteCloser
	r      io.ReadCloser
}

func newPair(t *testing.T) (*Session, *fakeServer) {
	t.Helper()
	// OS pipes buffer, so the test goroutine can write before the far
	// end reads.
	toServerR, toServerW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	toClientR, toClientW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	log := chrono.New()
	conn := transport.NewStream(toClientR, toServerW, transport.StreamConfig{Log: log, InChannel: "stdout", OutChannel: "stdin"})
	s := New(conn, Options{Log: log})
	fs := &fakeServer{t: t, frames: transport.NewFrameReader(toServerR, 0), w: toClientW, r: toServerR}
	t.Cleanup(func() {
		toClientW.Close()
		toServerR.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Close(ctx)
	})
	return s, fs
}

func (f *fakeServer) read() *jsonrpc.Message {
	f.t.Helper()
	raw, err := f.frames.ReadFrame()
	if err != nil {
		f.t.Fatalf("fake server read: %v", err)
	}
	m, err := jsonrpc.Decode(raw)
	if err != nil {
		f.t.Fatalf("fake server decode %s: %v", raw, err)
	}
	return m
}

func (f *fakeServer) write(s string) {
	f.t.Helper()
	if _, err := f.w.Write([]byte(s + "\n")); err != nil {
		f.t.Fatalf("fake server write: %v", err)
	}
}

// testCtx is a safety net only: a busy machine must never run it out.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestRefusesToCancelInitialize(t *testing.T) {
	ctx := testCtx(t)
	s, fs := newPair(t)
	call, err := s.Start(ctx, "initialize", map[string]any{"protocolVersion": spec.V20251125})
	if err != nil {
		t.Fatal(err)
	}
	fs.read()
	if err := s.Cancel(ctx, call, "timeout"); !errors.Is(err, ErrCancelInitialize) {
		t.Fatalf("Cancel(initialize) = %v, want ErrCancelInitialize", err)
	}
	// Nothing may have been written: the next frame the server sees is ping.
	go s.Ping(ctx)
	if m := fs.read(); m.Method != "ping" {
		t.Fatalf("after refused cancel the server saw %s, want ping", m.Raw)
	}
	for _, e := range s.Log().Events() {
		if e.Summary != nil && e.Summary.Method == "notifications/cancelled" {
			t.Fatalf("a cancel for initialize reached the wire at seq %d", e.Seq)
		}
	}
}

func TestInitializeHandshake(t *testing.T) {
	ctx := testCtx(t)
	s, fs := newPair(t)
	errc := make(chan error, 1)
	go func() {
		_, err := s.Initialize(ctx, InitOptions{})
		errc <- err
	}()
	req := fs.read()
	if req.Method != "initialize" {
		t.Fatalf("first frame %s", req.Raw)
	}
	fs.write(`{"jsonrpc":"2.0","id":` + req.ID.String() + `,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"experimental":{"x":{"v":1}}},"serverInfo":{"name":"fake","version":"1"}}}`)
	if m := fs.read(); m.Method != "notifications/initialized" || m.Kind != jsonrpc.KindNotification {
		t.Fatalf("after initialize got %s", m.Raw)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	srv := s.Server()
	if srv.ServerInfo.Name != "fake" || !srv.HasCapability("tools") || srv.HasCapability("logging") {
		t.Errorf("server = %+v", srv)
	}
	if _, ok := srv.Experimental("x"); !ok {
		t.Error("experimental capability x not found")
	}
}

func TestInitializeRejectsUnknownVersion(t *testing.T) {
	ctx := testCtx(t)
	s, fs := newPair(t)
	errc := make(chan error, 1)
	go func() {
		_, err := s.Initialize(ctx, InitOptions{})
		errc <- err
	}()
	req := fs.read()
	fs.write(`{"jsonrpc":"2.0","id":` + req.ID.String() + `,"result":{"protocolVersion":"1999-01-01","capabilities":{},"serverInfo":{"name":"fake","version":"1"}}}`)
	if err := <-errc; !errors.Is(err, ErrVersionMismatch) {
		t.Fatalf("err = %v, want ErrVersionMismatch", err)
	}
}

func TestIDsAndTokensAreSeparateNamespaces(t *testing.T) {
	ctx := testCtx(t)
	s, fs := newPair(t)
	// Request ID 1 carries the string token "1"; request ID "1" carries token 1.
	a, err := s.Start(ctx, "tools/call", map[string]any{"name": "a"}, WithID(jsonrpc.IntID(1)), WithProgressToken(jsonrpc.StringToken("1")))
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Start(ctx, "tools/call", map[string]any{"name": "b"}, WithID(jsonrpc.StringID("1")), WithProgressToken(jsonrpc.IntToken(1)))
	if err != nil {
		t.Fatal(err)
	}
	fs.read()
	fs.read()
	fs.write(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`)
	fs.write(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"1","progress":0.5,"total":1.5}}`)
	fs.write(`{"jsonrpc":"2.0","id":"1","result":{}}`)
	fs.write(`{"jsonrpc":"2.0","id":1,"result":{"which":"a"}}`)
	if _, err := b.Await(ctx); err != nil {
		t.Fatal(err)
	}
	ra, err := a.Await(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if string(ra.Result) != `{"which":"a"}` {
		t.Errorf("integer id 1 got %s", ra.Result)
	}
	got := []float64{}
	for _, p := range a.ProgressSeen() {
		got = append(got, p.Progress)
	}
	for _, p := range b.ProgressSeen() {
		got = append(got, p.Progress)
	}
	if d := cmp.Diff([]float64{0.5, 1}, got); d != "" {
		t.Errorf("progress routing (-want +got):\n%s", d)
	}
	if tot := a.ProgressSeen()[0].Total; tot == nil || *tot != 1.5 {
		t.Errorf("fractional total lost: %v", tot)
	}
	if len(s.Strays()) != 0 {
		t.Errorf("strays: %+v", s.Strays())
	}
}

func TestProgressValidation(t *testing.T) {
	ctx := testCtx(t)
	s, fs := newPair(t)
	c, err := s.Start(ctx, "tools/call", nil, WithProgressToken(jsonrpc.IntToken(0)))
	if err != nil {
		t.Fatal(err)
	}
	req := fs.read()
	fs.write(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":0,"progress":2}}`)
	fs.write(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":0,"progress":2}}`)
	fs.write(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"0","progress":3}}`)
	fs.write(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1.5,"progress":3}}`)
	fs.write(`{"jsonrpc":"2.0","id":` + req.ID.String() + `,"result":{}}`)
	fs.write(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":0,"progress":9}}`)
	if _, err := c.Await(ctx); err != nil {
		t.Fatal(err)
	}
	// A ping round trip orders everything the server wrote before it.
	go func() {
		m := fs.read()
		fs.write(`{"jsonrpc":"2.0","id":` + m.ID.String() + `,"result":{}}`)
	}()
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	var rules []ViolationRule
	for _, v := range c.Violations() {
		rules = append(rules, v.Rule)
	}
	if d := cmp.Diff([]ViolationRule{RuleNotIncreasing, RuleAfterResponse}, rules); d != "" {
		t.Errorf("violations (-want +got):\n%s", d)
	}
	var kinds []StrayKind
	for _, st := range s.Strays() {
		kinds = append(kinds, st.Kind)
	}
	if d := cmp.Diff([]StrayKind{StrayUnknownToken, StrayBadProgress}, kinds); d != "" {
		t.Errorf("strays (-want +got):\n%s", d)
	}
}

func TestCancelThenLateResponse(t *testing.T) {
	ctx := testCtx(t)
	s, fs := newPair(t)
	c, err := s.Start(ctx, "tools/call", nil, WithID(jsonrpc.IntID(0)))
	if err != nil {
		t.Fatal(err)
	}
	fs.read()
	if err := s.Cancel(ctx, c, "user"); err != nil {
		t.Fatal(err)
	}
	n := fs.read()
	if n.Method != "notifications/cancelled" || string(n.Params) != `{"reason":"user","requestId":0}` {
		t.Fatalf("cancel frame %s", n.Raw)
	}
	if err := s.Cancel(ctx, c, "again"); !errors.Is(err, ErrNotPending) {
		t.Errorf("second cancel = %v, want ErrNotPending", err)
	}
	fs.write(`{"jsonrpc":"2.0","id":0,"result":{}}`)
	if _, err := c.Await(ctx); err != nil {
		t.Fatal(err)
	}
	if !c.LateResponse() {
		t.Error("response after cancel must be flagged late (CAN-10)")
	}
}

func TestServerRequestsAnswered(t *testing.T) {
	ctx := testCtx(t)
	s, fs := newPair(t)
	_ = s
	fs.write(`{"jsonrpc":"2.0","id":"srv-1","method":"ping"}`)
	if m := fs.read(); m.Kind != jsonrpc.KindResult || m.ID != jsonrpc.StringID("srv-1") || string(m.Result) != `{}` {
		t.Errorf("ping answer %s", m.Raw)
	}
	fs.write(`{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{}}`)
	if m := fs.read(); m.Kind != jsonrpc.KindError || m.Error.Code != jsonrpc.CodeMethodNotFound || m.ID != jsonrpc.IntID(7) {
		t.Errorf("unknown method answer %s", m.Raw)
	}
	_ = ctx
}

func TestConnectionCloseFailsPending(t *testing.T) {
	ctx := testCtx(t)
	s, fs := newPair(t)
	c, err := s.Start(ctx, "tools/call", nil)
	if err != nil {
		t.Fatal(err)
	}
	fs.read()
	fs.w.Close()
	if _, err := c.Await(ctx); !errors.Is(err, ErrConnectionClosed) {
		t.Fatalf("Await = %v, want ErrConnectionClosed", err)
	}
	if _, err := s.Start(ctx, "ping", nil); !errors.Is(err, ErrConnectionClosed) {
		t.Fatalf("Start after close = %v", err)
	}
}

func TestDuplicateIDsAndTokensRefused(t *testing.T) {
	ctx := testCtx(t)
	s, fs := newPair(t)
	if _, err := s.Start(ctx, "x", nil, WithID(jsonrpc.IntID(5)), WithProgressToken(jsonrpc.StringToken("t"))); err != nil {
		t.Fatal(err)
	}
	fs.read()
	if _, err := s.Start(ctx, "x", nil, WithID(jsonrpc.IntID(5))); !errors.Is(err, ErrDuplicateID) {
		t.Errorf("dup id: %v", err)
	}
	if _, err := s.Start(ctx, "x", nil, WithProgressToken(jsonrpc.StringToken("t"))); !errors.Is(err, ErrDuplicateToken) {
		t.Errorf("dup token: %v", err)
	}
	if _, err := s.Start(ctx, "x", nil, WithID(jsonrpc.StringID("5"))); err != nil {
		t.Errorf(`"5" beside 5 must be allowed: %v`, err)
	}
}

func TestAwaitDeadlineIsRecorded(t *testing.T) {
	s, fs := newPair(t)
	c, err := s.Start(context.Background(), "slow", nil)
	if err != nil {
		t.Fatal(err)
	}
	fs.read()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Await(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Await = %v", err)
	}
	evs := s.Log().Events()
	if last := evs[len(evs)-1]; last.Kind != chrono.KindDeadline {
		t.Errorf("last event %+v, want a deadline", last)
	}
}

func TestRefusesNotificationCancelForTaskAugmentedRequest(t *testing.T) {
	ctx := testCtx(t)
	s, fs := newPair(t)
	call, err := s.Start(ctx, "tools/call", TaskParams(map[string]any{"name": "w"}, 1000))
	if err != nil {
		t.Fatal(err)
	}
	fs.read()
	if !call.TaskAugmented {
		t.Fatal("a tools/call with a task member must be marked task-augmented")
	}
	if err := s.Cancel(ctx, call, "stop"); !errors.Is(err, ErrTaskAugmented) {
		t.Fatalf("Cancel = %v, want ErrTaskAugmented (CAN-4)", err)
	}
	plain, err := s.Start(ctx, "tools/call", map[string]any{"name": "w"})
	if err != nil {
		t.Fatal(err)
	}
	fs.read()
	if err := s.Cancel(ctx, plain, "stop"); err != nil {
		t.Fatalf("a plain request must be cancellable: %v", err)
	}
	if m := fs.read(); m.Method != "notifications/cancelled" || !strings.Contains(string(m.Params), `"requestId":`+plain.ID.String()) {
		t.Fatalf("the first cancel on the wire is %s", m.Raw)
	}
}

func TestListToolsFollowsCursors(t *testing.T) {
	ctx := testCtx(t)
	s, fs := newPair(t)
	go func() {
		m := fs.read()
		fs.write(`{"jsonrpc":"2.0","id":` + m.ID.String() + `,"result":{"tools":[{"name":"a","execution":{"taskSupport":"required"}}],"nextCursor":"p2"}}`)
		m = fs.read()
		if !strings.Contains(string(m.Params), `"cursor":"p2"`) {
			fs.write(`{"jsonrpc":"2.0","id":` + m.ID.String() + `,"error":{"code":-32602,"message":"no cursor"}}`)
			return
		}
		fs.write(`{"jsonrpc":"2.0","id":` + m.ID.String() + `,"result":{"tools":[{"name":"b"}]}}`)
	}()
	tools, err := s.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tool := range tools {
		got = append(got, tool.Name+":"+tool.Execution.TaskSupport)
	}
	if d := cmp.Diff([]string{"a:required", "b:"}, got); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
}

// TestFloodsStayBounded sends more progress notifications and strays than
// a session keeps: the first are kept, all are counted, and the progress
// rules are still checked on every notification, kept or not.
func TestFloodsStayBounded(t *testing.T) {
	ctx := testCtx(t)
	s, fs := newPair(t)
	call, err := s.Start(ctx, "tools/call", map[string]any{"name": "slow"}, WithProgressToken(jsonrpc.IntToken(9)))
	if err != nil {
		t.Fatal(err)
	}
	req := fs.read()
	n := MaxProgressKept + 500
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":9,"progress":%d}}`+"\n", i)
	}
	// One step back past the kept ones must still be caught (PRG-4).
	fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":9,"progress":%d}}`+"\n", n)
	for i := range MaxStraysPerKind + 7 {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":"never-%d","result":{}}`+"\n", i)
	}
	for i := range MaxNotifications + 3 {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":%d}}`+"\n", i)
	}
	b.WriteString("not json\n")
	written := make(chan error, 1)
	go func() {
		_, err := fs.w.Write([]byte(b.String() + `{"jsonrpc":"2.0","id":` + req.ID.String() + `,"result":{}}` + "\n"))
		written <- err
	}()
	if _, err := call.Await(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-written; err != nil {
		t.Fatalf("fake server write: %v", err)
	}
	if got := len(call.ProgressSeen()); got != MaxProgressKept {
		t.Errorf("kept %d progress notifications, want %d", got, MaxProgressKept)
	}
	if got := call.ProgressCount(); got != n+1 {
		t.Errorf("ProgressCount = %d, want %d", got, n+1)
	}
	if last, ok := call.LastProgress(); !ok || last.Progress != float64(n) {
		t.Errorf("LastProgress = %+v, %v", last, ok)
	}
	if v := call.Violations(); len(v) != 1 || v[0].Rule != RuleNotIncreasing {
		t.Errorf("violations = %+v, want one PRG-4", v)
	}
	if got := len(s.Notifications()); got != MaxNotifications || s.NotificationsDropped() != 3 {
		t.Errorf("kept %d notifications, dropped %d; want %d kept, 3 dropped", got, s.NotificationsDropped(), MaxNotifications)
	}
	strays := s.Strays()
	kinds := map[StrayKind]int{}
	for _, st := range strays {
		kinds[st.Kind]++
	}
	if kinds[StrayUnknownResponse] != MaxStraysPerKind || kinds[StrayMalformed] != 1 || s.StraysDropped() != 7 {
		t.Errorf("strays by kind %v, dropped %d; want %d unknown, 1 malformed (kept past the other kind's flood), 7 dropped",
			kinds, s.StraysDropped(), MaxStraysPerKind)
	}
}

// TestUndecodableResultNamesTheField checks that a result of the wrong
// shape is reported in the message's terms (the member and the JSON
// types), never with Go's type names, and wraps ErrUndecodable.
func TestUndecodableResultNamesTheField(t *testing.T) {
	var out struct {
		ServerInfo Implementation `json:"serverInfo"`
	}
	err := decodeError("the initialize result", json.Unmarshal([]byte(`{"serverInfo":{"name":7}}`), &out))
	if !errors.Is(err, ErrUndecodable) {
		t.Fatalf("%v does not wrap ErrUndecodable", err)
	}
	want := "peer: the initialize result does not have the shape the schema gives it: at serverInfo.name, a number where a string belongs"
	if err.Error() != want {
		t.Errorf("got  %q\nwant %q", err, want)
	}
	for _, goText := range []string{"Go struct", "cannot unmarshal", "Implementation"} {
		if strings.Contains(err.Error(), goText) {
			t.Errorf("%q leaks Go's wording %q", err, goText)
		}
	}
}

// TestHandOver: a session goes on for another case only with nothing in
// flight; the next chapter starts with no strays, notifications or
// observers of the last, and IDs stay spent (RPC-6).
func TestHandOver(t *testing.T) {
	ctx := testCtx(t)
	s, fs := newPair(t)
	observed := 0
	s.OnNotification(func(*jsonrpc.Message) { observed++ })
	c, err := s.Start(ctx, "tools/call", nil)
	if err != nil {
		t.Fatal(err)
	}
	req := fs.read()
	if err := s.HandOver(false); !errors.Is(err, ErrBusy) {
		t.Fatalf("HandOver with a request in flight = %v, want ErrBusy", err)
	}
	fs.write(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`)
	fs.write(`{"jsonrpc":"2.0","id":999,"result":{}}`)
	fs.write(`{"jsonrpc":"2.0","id":` + req.ID.String() + `,"result":{}}`)
	if _, err := c.Await(ctx); err != nil {
		t.Fatal(err)
	}
	if len(s.Notifications()) != 1 || len(s.Strays()) != 1 || observed != 1 {
		t.Fatalf("before the hand-over: %d notifications, %d strays, %d observed; want 1 each", len(s.Notifications()), len(s.Strays()), observed)
	}
	if err := s.HandOver(false); err != nil {
		t.Fatalf("HandOver with nothing in flight: %v", err)
	}
	if len(s.Notifications()) != 0 || len(s.Strays()) != 0 {
		t.Fatalf("after the hand-over: %d notifications, %d strays; want none", len(s.Notifications()), len(s.Strays()))
	}
	if _, err := s.Start(ctx, "ping", nil, WithID(req.ID)); !errors.Is(err, ErrDuplicateID) {
		t.Fatalf("reusing the last chapter's ID %s = %v, want ErrDuplicateID", req.ID, err)
	}
	fs.write(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"y"}}`)
	pinged := make(chan error, 1)
	go func() { pinged <- s.Ping(ctx) }()
	ping := fs.read()
	if ping.ID.Key() == req.ID.Key() {
		t.Fatalf("the next chapter's ping reused ID %s", req.ID)
	}
	fs.write(`{"jsonrpc":"2.0","id":` + ping.ID.String() + `,"result":{}}`)
	if err := <-pinged; err != nil {
		t.Fatal(err)
	}
	if observed != 1 || len(s.Notifications()) != 1 {
		t.Fatalf("the last chapter's observer saw %d notifications (want 1: it is gone); the new chapter has %d (want 1)", observed, len(s.Notifications()))
	}
	// A second response to the last chapter's request is that chapter's
	// stray, not this one's; one to this chapter's ping is this one's.
	// The answer to a third ping, written after them, is read after them.
	go func() { pinged <- s.Ping(ctx) }()
	third := fs.read()
	fs.write(`{"jsonrpc":"2.0","id":` + req.ID.String() + `,"result":{}}`)
	fs.write(`{"jsonrpc":"2.0","id":` + ping.ID.String() + `,"result":{}}`)
	fs.write(`{"jsonrpc":"2.0","id":` + third.ID.String() + `,"result":{}}`)
	if err := <-pinged; err != nil {
		t.Fatal(err)
	}
	strays := s.Strays()
	if len(strays) != 1 || !strings.Contains(strays[0].Detail, "second response for "+ping.ID.String()) {
		t.Fatalf("after two second responses, one to each chapter's request: strays %+v; want only this chapter's", strays)
	}
}

// TestHandOverLeavingCancelled: a request we cancelled need not be
// answered (CAN-9), so with leaveCancelled it does not keep the session
// from the next chapter, while one not cancelled still does; its late
// response, when it comes, ends it and is no stray of the next chapter.
func TestHandOverLeavingCancelled(t *testing.T) {
	ctx := testCtx(t)
	s, fs := newPair(t)
	c, err := s.Start(ctx, "tools/call", nil)
	if err != nil {
		t.Fatal(err)
	}
	req := fs.read()
	if err := s.HandOver(true); !errors.Is(err, ErrBusy) {
		t.Fatalf("HandOver(true) with a request in flight, not cancelled = %v, want ErrBusy", err)
	}
	if err := s.Cancel(ctx, c, "test"); err != nil {
		t.Fatal(err)
	}
	fs.read() // the notifications/cancelled
	if err := s.HandOver(false); !errors.Is(err, ErrBusy) {
		t.Fatalf("HandOver(false) with a cancelled request in flight = %v, want ErrBusy", err)
	}
	if err := s.HandOver(true); err != nil {
		t.Fatalf("HandOver(true) with only a cancelled request in flight: %v", err)
	}
	fs.write(`{"jsonrpc":"2.0","id":` + req.ID.String() + `,"result":{}}`)
	if _, err := c.Await(ctx); err != nil {
		t.Fatal(err)
	}
	if strays := s.Strays(); len(strays) != 0 {
		t.Fatalf("the cancelled request's late response left strays %+v", strays)
	}
}
