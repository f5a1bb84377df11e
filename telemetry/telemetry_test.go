package telemetry_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/monitor"
	"github.com/mcpflight/mcpflight/telemetry"
)

// conversation is a chronology of one stdio session, at times the test
// sets.
type conversation struct {
	events []chrono.Event
	at     time.Duration
}

func (h *conversation) frame(dir chrono.Direction, channel, raw string) *conversation {
	ev := chrono.New().Frame(dir, channel, []byte(raw), nil, nil)
	ev.Seq = uint64(len(h.events) + 1)
	ev.Offset = h.at
	h.events = append(h.events, ev)
	return h
}

// at moves the clock to d; c and s are frames the client and the server
// send.
func (h *conversation) to(d time.Duration) *conversation { h.at = d; return h }
func (h *conversation) c(raw string) *conversation       { return h.frame(chrono.Out, "stdin", raw) }
func (h *conversation) s(raw string) *conversation       { return h.frame(chrono.In, "stdout", raw) }

const ms = time.Millisecond

// scripted is a 2025-11-25 session that exercises every kind of span and
// event: an answered request; a cancelled one answered after the crossing
// window (CAN-8, on its span); an error; a task that completes and one
// left working at the end (seed 002's alert, on its span); progress for
// a token never given (PRG-7: no request, so on the conversation's
// span); a request never answered.
func scripted() *conversation {
	h := &conversation{}
	return h.c(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`).
		to(10 * ms).s(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`).
		c(`{"jsonrpc":"2.0","method":"notifications/initialized"}`).
		to(20 * ms).c(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"t1"}}}`).
		to(30 * ms).c(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`).
		to(500 * ms).s(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`).
		to(600 * ms).c(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"build","task":{"ttl":60000}}}`).
		to(650 * ms).s(`{"jsonrpc":"2.0","id":2,"result":{"task":{"taskId":"T1","status":"working"}}}`).
		to(700 * ms).c(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"deploy","task":{"ttl":60000}}}`).
		to(720 * ms).s(`{"jsonrpc":"2.0","id":3,"result":{"task":{"taskId":"T2","status":"working"}}}`).
		to(900 * ms).s(`{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"T2","status":"completed"}}`).
		to(1000 * ms).c(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope"}}`).
		to(1010 * ms).s(`{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"secret-in-error: unknown tool"}}`).
		to(1100 * ms).s(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"zz","progress":1}}`).
		to(1200 * ms).c(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"forever"}}`).
		to(1500 * ms)
}

// feed runs the chronology through a monitor wired to the exporter, as
// watch wires them, and ends the session.
func feed(h *conversation, exp *telemetry.Exporter) *monitor.Monitor {
	m := monitor.New(monitor.Options{Transport: "stdio", Window: 100 * ms, Grace: 50 * ms, Emit: exp.Finding, Observe: exp.Observe})
	for _, ev := range h.events {
		m.Event("stdio", ev)
	}
	m.Advance(h.at)
	m.End()
	return m
}

func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// TestExportToCollector drives an Exporter with a real monitor fed a
// scripted conversation, exports to the OpenTelemetry Collector's OTLP
// receiver, and checks what arrived: a span per request with its
// attributes and duration, a span per task, each finding as an event on
// the right span with its requirement, the alert on its task's span, and
// the counters.
func TestExportToCollector(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the OpenTelemetry Collector's receiver (testdata/otlpreceiver) is the full suite's; TestCallbacksNeverWaitOnTheNetwork exports to a test endpoint here")
	}
	col := startCollector(t)
	start := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	h := scripted()
	// The conversation's clock ends at h.at, past its last frame: what is
	// still open ends there.
	exp, err := telemetry.New(telemetry.Config{Endpoint: col.URL, Start: start, Version: "test", Clock: func() time.Duration { return h.at }})
	if err != nil {
		t.Fatal(err)
	}
	m := feed(h, exp)
	if err := exp.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	recs := col.Stop(t)

	var spans, points []record
	for _, r := range recs {
		switch r.Signal {
		case "span":
			spans = append(spans, r)
		case "metric":
			points = append(points, r)
		}
	}
	for _, r := range recs {
		if b := fmt.Sprint(r); strings.Contains(b, "secret-in-error") || strings.Contains(b, "slow") {
			t.Errorf("a message body reached the collector: %s", b)
		}
	}

	var root record
	requests := map[string]record{} // by request ID
	tasks := map[string]record{}    // by task ID
	for _, s := range spans {
		switch s.Name {
		case telemetry.SpanConversation:
			root = s
		case telemetry.SpanTask:
			tasks[str(s.Attributes[string(telemetry.AttrTaskID)])] = s
		default:
			requests[str(s.Attributes[string(telemetry.AttrRequestID)])] = s
		}
		if s.Resource["service.name"] != telemetry.ServiceName || s.Scope != telemetry.InstrumentationName {
			t.Errorf("span %s: resource %v, scope %q", s.Name, s.Resource, s.Scope)
		}
	}
	if root.SpanID == "" {
		t.Fatalf("no %s span among %d spans", telemetry.SpanConversation, len(spans))
	}
	if !root.start().Equal(start) || !root.end().Equal(start.Add(h.at)) {
		t.Errorf("conversation span %v–%v, want %v–%v", root.start(), root.end(), start, start.Add(h.at))
	}
	if len(requests) != 6 || len(tasks) != 2 {
		t.Fatalf("request spans %v, task spans %v; want 6 and 2", slices.Sorted(mapsKeys(requests)), slices.Sorted(mapsKeys(tasks)))
	}

	// Each request: its method, side, session, duration and what its
	// answer said.
	session := telemetry.Session("stdio")
	for _, tc := range []struct {
		id         string
		from, to   time.Duration
		attrs      map[string]string
		statusCode string
	}{
		{"0", 0, 10 * ms, map[string]string{"mcp.method.name": "initialize"}, "Unset"},
		{"1", 20 * ms, 500 * ms, map[string]string{"mcp.method.name": "tools/call", "mcpflight.cancelled": "true", "mcpflight.seq": "4", "mcpflight.response.seq": "6"}, "Unset"},
		{"2", 600 * ms, 650 * ms, map[string]string{"mcp.task.id": "T1"}, "Unset"},
		{"4", 1000 * ms, 1010 * ms, map[string]string{"rpc.response.status_code": "-32602"}, "Error"},
		{"5", 1200 * ms, 1500 * ms, map[string]string{"mcpflight.open_at_end": "true"}, "Unset"},
	} {
		s := requests[tc.id]
		if !s.start().Equal(start.Add(tc.from)) || !s.end().Equal(start.Add(tc.to)) {
			t.Errorf("request %s: span %v–%v, want %v–%v", tc.id, s.start().Sub(start), s.end().Sub(start), tc.from, tc.to)
		}
		want := map[string]string{"mcpflight.side": "client", "mcpflight.session": session}
		for k, v := range tc.attrs {
			want[k] = v
		}
		for k, v := range want {
			if got := str(s.Attributes[k]); got != v {
				t.Errorf("request %s: %s = %q, want %q (attributes %v)", tc.id, k, got, v, s.Attributes)
			}
		}
		if s.StatusCode != tc.statusCode || s.ParentSpanID != root.SpanID || s.TraceID != root.TraceID {
			t.Errorf("request %s: status %s, parent %s trace %s; want %s, the conversation's %s %s", tc.id, s.StatusCode, s.ParentSpanID, s.TraceID, tc.statusCode, root.SpanID, root.TraceID)
		}
	}
	if _, open := requests["5"].Attributes["mcpflight.open_at_end"]; !open {
		t.Error("request 5, never answered, is not marked open at the end")
	}
	if _, open := requests["4"].Attributes["mcpflight.open_at_end"]; open {
		t.Error("request 4, answered, is marked open at the end")
	}

	// The tasks: created by their request, T2 until completed, T1 left
	// working until the end.
	for _, tc := range []struct {
		id, creator, status string
		from, to            time.Duration
		open                bool
	}{
		{"T1", "2", "working", 650 * ms, 1500 * ms, true},
		{"T2", "3", "completed", 720 * ms, 900 * ms, false},
	} {
		s := tasks[tc.id]
		_, open := s.Attributes["mcpflight.open_at_end"]
		if str(s.Attributes["mcp.task.status"]) != tc.status || str(s.Attributes["jsonrpc.request.id"]) != tc.creator || open != tc.open ||
			s.ParentSpanID != requests[tc.creator].SpanID {
			t.Errorf("task %s: attributes %v, parent %s; want status %s, request %s, open at end %v, parent the request's %s",
				tc.id, s.Attributes, s.ParentSpanID, tc.status, tc.creator, tc.open, requests[tc.creator].SpanID)
		}
		if !s.start().Equal(start.Add(tc.from)) || !s.end().Equal(start.Add(tc.to)) {
			t.Errorf("task %s: span %v–%v, want %v–%v", tc.id, s.start().Sub(start), s.end().Sub(start), tc.from, tc.to)
		}
	}

	// Every finding the monitor made is one event, on the span of what it
	// is about, with its rule, requirement and verdict.
	findings := m.Findings()
	if len(findings) != 3 {
		t.Fatalf("the monitor found %d findings, want 3 (CAN-8, PRG-7, the alert): %+v", len(findings), findings)
	}
	onSpan := map[string]string{monitor.RuleCancelNoResponse: "request 1", monitor.RuleTokenKnown: "conversation", monitor.RuleTaskStillWorking: "task T1"}
	where := map[string]record{"request 1": requests["1"], "conversation": root, "task T1": tasks["T1"]}
	events := 0
	for _, s := range spans {
		for _, ev := range s.Events {
			if ev.Name == telemetry.EventFinding {
				events++
			}
		}
	}
	if events != len(findings) {
		t.Errorf("%d finding events, want %d", events, len(findings))
	}
	for _, f := range findings {
		s := where[onSpan[f.Rule]]
		found := false
		for _, ev := range s.Events {
			if ev.Name != telemetry.EventFinding || str(ev.Attributes["mcpflight.rule"]) != f.Rule {
				continue
			}
			found = true
			if str(ev.Attributes["mcpflight.requirement"]) != f.Requirement || str(ev.Attributes["mcpflight.verdict"]) != string(f.Verdict) ||
				str(ev.Attributes["mcpflight.seq"]) != fmt.Sprint(f.Seq) || str(ev.Attributes["mcpflight.side"]) != string(f.Side) {
				t.Errorf("finding %s on the %s span: %v; want requirement %q, verdict %s, seq %d, side %s", f.Rule, onSpan[f.Rule], ev.Attributes, f.Requirement, f.Verdict, f.Seq, f.Side)
			}
		}
		if !found {
			t.Errorf("finding %s (%s) is not an event of the %s span", f.Rule, f.Requirement, onSpan[f.Rule])
		}
	}
	if f := findings[0]; f.Rule != monitor.RuleCancelNoResponse || f.Requirement != "CAN-8" {
		t.Errorf("first finding %+v, want CAN-8", f)
	}
	for _, ev := range tasks["T1"].Events {
		if ev.Name == telemetry.EventFinding && (str(ev.Attributes["mcp.task.id"]) != "T1" || str(ev.Attributes["mcpflight.request_ids"]) != "[2]") {
			t.Errorf("the alert on task T1: %v; want the task and its request", ev.Attributes)
		}
	}
	if evs := requests["1"].Events; len(evs) < 1 || evs[0].Name != telemetry.EventCancel || !time.Unix(0, evs[0].TimeUnixNano).Equal(start.Add(30*ms)) {
		t.Errorf("request 1's events %+v; want its cancel first, at 30ms", evs)
	}

	// The counters, as the monitor counted.
	sums := map[string]float64{}
	byRule := map[string]float64{}
	for _, p := range points {
		if p.Type != "Sum" || !p.Monotonic {
			t.Errorf("metric %s is a %s (monotonic %v), want a counter", p.Name, p.Type, p.Monotonic)
		}
		sums[p.Name] += p.Value
		if p.Name == telemetry.MetricFindings {
			byRule[str(p.Attributes["mcpflight.rule"])+" "+str(p.Attributes["mcpflight.verdict"])] += p.Value
		}
	}
	counts := m.Counts()
	want := map[string]float64{telemetry.MetricRequests: float64(counts[monitor.CountRequests]), telemetry.MetricCancels: float64(counts[monitor.CountCancels]),
		telemetry.MetricTasks: float64(counts[monitor.CountTasks]), telemetry.MetricFindings: float64(len(findings))}
	for name, v := range want {
		if sums[name] != v || v == 0 {
			t.Errorf("counter %s = %v, want %v (all: %v)", name, sums[name], v, sums)
		}
	}
	for _, f := range findings {
		if byRule[f.Rule+" "+string(f.Verdict)] != 1 {
			t.Errorf("findings counter by rule and verdict %v, want one %s %s", byRule, f.Rule, f.Verdict)
		}
	}
}

func mapsKeys(m map[string]record) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// closedPort is a loopback URL nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()
	return url
}

// TestUnreachableEndpoint: with nothing listening, the conversation is
// followed as usual and Close says why nothing arrived, naming the
// endpoint; calls after Close do nothing.
func TestUnreachableEndpoint(t *testing.T) {
	url := closedPort(t)
	exp, err := telemetry.New(telemetry.Config{Endpoint: url, CloseTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	feed(scripted(), exp)
	err = exp.Close(context.Background())
	if err == nil || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), strings.TrimPrefix(url, "http://")) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Close = %q, want the refused connection to %s, on one line", err, url)
	}
	t.Logf("Close: %v", err)
	exp.Observe(monitor.Activity{Kind: monitor.ActRequest, Session: "stdio", Side: monitor.Client, ID: "9", Method: "ping"})
	exp.Finding(monitor.Finding{Rule: monitor.RuleTokenKnown})
	if err := exp.Close(context.Background()); err != nil {
		t.Errorf("a second Close = %v, want nil", err)
	}
}

// TestCallbacksNeverWaitOnTheNetwork: while the collector holds an
// export unanswered, the callbacks take far more spans than the queue
// holds and return (the excess is dropped); Close returns within its
// bound with the export's failure. Were a callback to wait on the
// network, the feeding would never end while the export is held, and the
// test would time out.
func TestCallbacksNeverWaitOnTheNetwork(t *testing.T) {
	held := make(chan struct{}, 1)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case held <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	var once sync.Once
	unhold := func() { once.Do(func() { close(release) }) }
	t.Cleanup(func() { unhold(); srv.Close() })

	exp, err := telemetry.New(telemetry.Config{Endpoint: srv.URL, CloseTimeout: 200 * ms})
	if err != nil {
		t.Fatal(err)
	}
	send := func(from, to int) {
		for i := from; i < to; i++ {
			id := fmt.Sprint(i)
			at := time.Duration(i) * time.Microsecond
			exp.Observe(monitor.Activity{Kind: monitor.ActRequest, Session: "stdio", Side: monitor.Client, ID: id, Method: "ping", Seq: uint64(2 * i), At: at, Sent: at})
			exp.Finding(monitor.Finding{Rule: monitor.RuleCancelNoResponse, Session: "stdio", Side: monitor.Server, Seq: uint64(2*i + 1)})
			exp.Observe(monitor.Activity{Kind: monitor.ActResponse, Session: "stdio", Side: monitor.Client, ID: id, Method: "ping", Seq: uint64(2*i + 1), At: at, Sent: at})
		}
	}
	// A full batch makes the processor export, and the collector holds it.
	send(0, 1024)
	<-held
	// Three queues' worth while it is held.
	send(1024, 1024+3*4096)
	began := time.Now()
	err = exp.Close(context.Background())
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Close = %q, want the deadline of its bound, on one line", err)
	}
	t.Logf("Close returned after %v: %v", time.Since(began).Round(ms), err)
}

// TestEndpoint: an endpoint that is no base URL, or that carries
// credentials, is refused before anything is sent, and the credentials
// are not repeated.
func TestEndpoint(t *testing.T) {
	for _, tc := range []struct{ endpoint, want string }{
		{"localhost:4318", "want an http:// or https:// URL"},
		{"ftp://collector", "want an http:// or https:// URL"},
		{"http://", "want an http:// or https:// URL"},
		{"http://user:hunter2@collector:4318", "OTEL_EXPORTER_OTLP_HEADERS"},
		{"http://collector:4318/?token=x", "no query"},
	} {
		exp, err := telemetry.New(telemetry.Config{Endpoint: tc.endpoint})
		if err == nil {
			exp.Close(context.Background())
			t.Errorf("New(%q) accepted it", tc.endpoint)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("New(%q) = %v, want %q and no password", tc.endpoint, err, tc.want)
		}
	}
}
