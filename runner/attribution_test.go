package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// taskServer is a stdio target (in process) whose every session creates
// a task t-N for each task-augmented tools/call, and, before it answers
// a ping, reports the status of every task it created so far, with its
// related-task _meta in a notifications/message too: the late frames an
// earlier case's tasks send while a later case uses the session.
func taskServer(starts *atomic.Int32) Target {
	const initResult = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"tasks","version":"1"}}`
	const task = `"status":"working","createdAt":"2026-12-05T00:00:00Z","lastUpdatedAt":"2026-12-05T00:00:00Z","ttl":null`
	return lineServer("tasks", TransportStdio, func() func(m *jsonrpc.Message) [][]byte {
		starts.Add(1)
		var tasks []string
		return func(m *jsonrpc.Message) [][]byte {
			var frames [][]byte
			var out []byte
			switch m.Method {
			case "initialize":
				out, _ = jsonrpc.EncodeResult(m.ID, jsonRaw(initResult))
			case "tools/list":
				out, _ = jsonrpc.EncodeResult(m.ID, jsonRaw(`{"tools":[{"name":"work","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}]}`))
			case "tools/call":
				id := fmt.Sprintf("t-%d", len(tasks)+1)
				tasks = append(tasks, id)
				out, _ = jsonrpc.EncodeResult(m.ID, jsonRaw(fmt.Sprintf(`{"task":{"taskId":%q,%s}}`, id, task)))
			case "ping":
				for _, id := range tasks {
					st, _ := jsonrpc.EncodeNotification("notifications/tasks/status", jsonRaw(fmt.Sprintf(`{"taskId":%q,%s}`, id, task)))
					msg, _ := jsonrpc.EncodeNotification("notifications/message", jsonRaw(fmt.Sprintf(
						`{"level":"info","data":"working","_meta":{"io.modelcontextprotocol/related-task":{"taskId":%q}}}`, id)))
					frames = append(frames, st, msg)
				}
				out, _ = jsonrpc.EncodeResult(m.ID, map[string]any{})
			default:
				out, _ = jsonrpc.EncodeError(m.ID, &jsonrpc.Error{Code: -32601, Message: "Method not found"})
			}
			return append(frames, out)
		}
	})
}

// taskLeaver is a case that leaves tasks: it creates a task and pings,
// and fails when its chronology holds a frame about another task.
func taskLeaver(id string, created *sync.Map) probe.Case {
	return probe.Case{ID: id, Title: id, Versions: []string{spec.V20251125}, Needs: probe.Needs{Tasks: true}, LeavesTasks: true,
		Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
			var res struct {
				Task struct {
					TaskID string `json:"taskId"`
				} `json:"task"`
			}
			if err := e.S.Request(ctx, "tools/call", map[string]any{"name": "work", "arguments": map[string]any{}, "task": map[string]any{}}, &res); err != nil {
				return verdict.Errorf("tools/call: %v", err)
			}
			created.Store(id, res.Task.TaskID)
			if err := e.S.Ping(ctx); err != nil {
				return verdict.Errorf("ping: %v", err)
			}
			for _, ev := range e.Log.Events() {
				if ev.Kind != chrono.KindFrame || ev.Dir != chrono.In {
					continue
				}
				for _, t := range namedTasks(ev) {
					if t != res.Task.TaskID {
						return verdict.Outcome{Verdict: verdict.Fail, Summary: fmt.Sprintf("a frame about task %s, not this case's %s, is in its chronology (seq %d)", t, res.Task.TaskID, ev.Seq)}
					}
				}
			}
			return verdict.Passf("only frames about task %s", res.Task.TaskID)
		}}
}

// TestTaskCasesShareAndSetAside: cases that leave tasks go on one after
// another on one stdio session, and the frames about an earlier case's
// task that come while a later case uses it (a status notification, a
// log message with related-task _meta) are set aside: the later case's
// chronology holds a note naming the earlier case instead of the frame,
// so its judges see only its own. Without the attribution the second
// and third cases fail on the first case's frames. A tidy case does not
// go on with a session on which tasks run.
func TestTaskCasesShareAndSetAside(t *testing.T) {
	prof := &profile.Profile{Task: &profile.Tool{Name: "work"}}
	var created sync.Map
	cs := []probe.Case{taskLeaver("t/1", &created), taskLeaver("t/2", &created), taskLeaver("t/3", &created), pinging("t/tidy", verdict.Passf("pinged"))}
	var starts atomic.Int32
	rep := run(t, Config{Target: taskServer(&starts), Profile: prof, Cases: cs, Jobs: 1, CaseTimeout: safetyNet, CloseTimeout: safetyNet})
	wantLane(t, rep, 3)
	if n := starts.Load(); n != 2 {
		t.Errorf("%d sessions opened, want 2: one for the three cases that leave tasks, one for the tidy case", n)
	}
	if got := rep.Results[3].ContinuedFrom; got != "" {
		t.Errorf("the tidy case continued the session %s opened, on which tasks run", got)
	}
	first, _ := created.Load("t/1")
	notes := asideNotes(rep.Results[2])
	// Each of the two pings in t/3's chronology (its own, and the
	// runner's before it hands the session on) brings the status and a
	// log message of t-1, t-2 and t-3: four frames of the earlier cases.
	if len(notes) != 8 {
		t.Fatalf("t/3's chronology has %d set-aside notes, want 8 (a status and a log message of each earlier task, twice): %q", len(notes), notes)
	}
	if !strings.Contains(notes[0], fmt.Sprintf("notifications/tasks/status, which is about case t/1, an earlier user of this session (its task %s)", first)) {
		t.Errorf("the first note %q does not name the frame, the earlier case and its task", notes[0])
	}
}

// TestAttributionOfRequestsAndTokens: after a session changes hands, the
// response to an earlier user's request, a progress notification for its
// token, the peer's cancellation of a request the peer sent it and the
// session's record of its request's state are set aside; the new user's
// own frames, and frames that name nothing known, are kept (a
// cancellation that comes in names the peer's requests, never ours, so
// one whose requestId spells an ID we sent is not set aside for that). A frame that came while the session waited between
// cases is named as such when it is set aside later.
func TestAttributionOfRequestsAndTokens(t *testing.T) {
	a := newAttribution("t/1")
	stand, log := chrono.New(), chrono.New()
	stand.RecordInto(log)
	stand.Filter(a.filter)
	frame := func(dir chrono.Direction, s string) {
		stand.Frame(dir, "stdio", []byte(s), nil, nil)
	}
	frame(chrono.Out, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"p1"}}}`)
	frame(chrono.In, `{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{}}`)
	a.begin("")
	frame(chrono.In, `{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"gap-task","status":"working"}}`)
	a.begin("t/2")
	frame(chrono.Out, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	frame(chrono.In, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":1}}`)
	frame(chrono.In, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
	stand.State("request 1", "cancel-requested", "answered")
	frame(chrono.In, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s1"}}`)
	frame(chrono.In, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	frame(chrono.In, `{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"gap-task","status":"completed"}}`)
	frame(chrono.In, `{"jsonrpc":"2.0","id":2,"result":{}}`)
	stand.State("request 2", "pending", "answered")
	frame(chrono.In, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`)
	var got []string
	for _, ev := range log.Events() {
		switch {
		case setAside(ev):
			got = append(got, "aside: "+ev.Text)
		case ev.Kind == chrono.KindFrame:
			got = append(got, fmt.Sprintf("%s %s %s", ev.Dir, ev.Summary.Method, ev.Summary.ID))
		default:
			got = append(got, "state "+ev.Channel)
		}
	}
	want := []string{
		"out tools/call 1",
		"in sampling/createMessage \"s1\"",
		"in notifications/tasks/status ",
		"out ping 2",
		"aside: set aside: stdio notifications/progress, which is about case t/1, an earlier user of this session (its progress token \"p1\")",
		"aside: set aside: stdio result, which is about case t/1, an earlier user of this session (the response to its request 1)",
		"aside: set aside: request 1 went from cancel-requested to answered; it is about case t/1, an earlier user of this session",
		"aside: set aside: stdio notifications/cancelled, which is about case t/1, an earlier user of this session (the peer's request \"s1\" to it)",
		"in notifications/cancelled ",
		"aside: set aside: stdio notifications/tasks/status, which is about no case: the session first heard of it while it waited between cases (its task gap-task)",
		"in  2",
		"state request 2",
		"in notifications/message ",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the later user's chronology (-want +got):\n%s", d)
	}
}

// cancelServer is a stdio target (in process) that never answers a
// tools/call by itself: it sends one progress for it, and before it
// answers a ping it sends another and then the response, late, for every
// call held but the last: the work an earlier case cancelled, going on
// while a later case uses the session.
func cancelServer(starts *atomic.Int32) Target {
	return scriptedCancels(starts, 1)
}

// scriptedCancels is cancelServer, whose ping brings the second progress
// and the late response of every call but the last keep: keep 0 is a
// server that goes on with every cancelled call, the current case's too.
func scriptedCancels(starts *atomic.Int32, keep int) Target {
	return lineServer("cancels", TransportStdio, func() func(m *jsonrpc.Message) [][]byte {
		starts.Add(1)
		type held struct {
			id    jsonrpc.ID
			token json.RawMessage
		}
		var calls []held
		progress := func(token json.RawMessage, n int) []byte {
			b, _ := jsonrpc.EncodeNotification("notifications/progress", jsonRaw(fmt.Sprintf(`{"progressToken":%s,"progress":%d}`, token, n)))
			return b
		}
		return func(m *jsonrpc.Message) [][]byte {
			var out []byte
			switch m.Method {
			case "initialize":
				out, _ = jsonrpc.EncodeResult(m.ID, jsonRaw(bareInit))
			case "tools/call":
				var p struct {
					Meta struct {
						Token json.RawMessage `json:"progressToken"`
					} `json:"_meta"`
				}
				_ = json.Unmarshal(m.Params, &p)
				calls = append(calls, held{m.ID, p.Meta.Token})
				return [][]byte{progress(p.Meta.Token, 1)}
			case "ping":
				var frames [][]byte
				for len(calls) > keep {
					c := calls[0]
					calls = calls[1:]
					late, _ := jsonrpc.EncodeResult(c.id, map[string]any{"content": []any{}})
					frames = append(frames, progress(c.token, 2), late)
				}
				pong, _ := jsonrpc.EncodeResult(m.ID, map[string]any{})
				return append(frames, pong)
			default:
				out, _ = jsonrpc.EncodeError(m.ID, &jsonrpc.Error{Code: -32601, Message: "Method not found"})
			}
			return [][]byte{out}
		}
	})
}

// cancelLeaver is a case that leaves a cancelled request: it calls the
// tool with a progress token, cancels the call at its first progress
// and ends without its response; before it does, it pings, and fails
// when its chronology holds a frame about a request or token that is
// not its own.
func cancelLeaver(id string) probe.Case {
	return probe.Case{ID: id, Title: id, Versions: []string{spec.V20251125}, LeavesCancelled: true,
		Run: func(ctx context.Context, e *probe.Env) verdict.Outcome {
			call, err := e.S.Start(ctx, "tools/call", map[string]any{"name": "slow"}, peer.WithProgress())
			if err != nil {
				return verdict.Errorf("tools/call: %v", err)
			}
			if _, err := e.Log.WaitFor(ctx, call.SentSeq, probe.ProgressFor(call.Token)); err != nil {
				return verdict.Errorf("no progress: %v", err)
			}
			if err := e.S.Cancel(ctx, call, "test"); err != nil {
				return verdict.Errorf("cancel: %v", err)
			}
			if err := e.S.Ping(ctx); err != nil {
				return verdict.Errorf("ping: %v", err)
			}
			ownToken, _ := call.Token.MarshalJSON()
			sent := map[string]bool{}
			for _, ev := range e.Log.Events() {
				if ev.Kind != chrono.KindFrame || ev.Summary == nil {
					continue
				}
				s := ev.Summary
				switch {
				case ev.Dir == chrono.Out && s.Kind == "request":
					sent[s.ID] = true
				case ev.Dir == chrono.In && (s.Token != "" && s.Token != string(ownToken) || s.Kind == "result" && !sent[s.ID]):
					return verdict.Outcome{Verdict: verdict.Fail, Summary: fmt.Sprintf("a frame about another case's request is in its chronology (seq %d)", ev.Seq)}
				}
			}
			return verdict.Passf("only frames about its own requests")
		}}
}

// TestCancelCasesShareAndSetAside: cases that leave cancelled requests
// go on one after another on one stdio session (the cancelled request
// still in flight does not keep it from the next case), and the late
// progress and response of an earlier case's cancelled request that
// come while a later case uses it are set aside in that case's
// chronology and are no stray of its session. Without the attribution
// the second case fails on the first case's frames.
func TestCancelCasesShareAndSetAside(t *testing.T) {
	cs := []probe.Case{cancelLeaver("c/1"), cancelLeaver("c/2"), cancelLeaver("c/3")}
	var starts atomic.Int32
	rep := run(t, Config{Target: cancelServer(&starts), Cases: cs, Jobs: 1, CaseTimeout: safetyNet, CloseTimeout: safetyNet})
	wantLane(t, rep, 3)
	if n := starts.Load(); n != 1 {
		t.Errorf("%d sessions opened for three cases that leave cancelled requests, want 1", n)
	}
	notes := asideNotes(rep.Results[1])
	// c/2's ping brings c/1's second progress and late response, and the
	// session's record that the request was answered.
	if len(notes) != 3 || !strings.Contains(notes[0], "notifications/progress, which is about case c/1") ||
		!strings.Contains(notes[1], "result, which is about case c/1") || !strings.Contains(notes[2], "request 2 went from cancel-requested to completed") {
		t.Errorf("c/2's set-aside notes %q: want c/1's progress, its late response and its request's state", notes)
	}
}

// cancelIgnored is cancelLeaver against a server that goes on with the
// cancelled call: when its ping brings its own call's second progress,
// the case finds req broken, as the cancel cases find CAN-8 against a
// server that ignores a cancel.
func cancelIgnored(id, req string) probe.Case {
	c := cancelLeaver(id)
	c.Reqs = []string{req}
	inner := c.Run
	c.Run = func(ctx context.Context, e *probe.Env) verdict.Outcome {
		o := inner(ctx, e)
		if o.Verdict != verdict.Pass {
			return o
		}
		for _, ev := range e.Log.Events() {
			if ev.Dir == chrono.In && ev.Summary != nil && ev.Summary.Method == "notifications/progress" && strings.Contains(string(ev.Raw), `"progress":2`) {
				return verdict.Broken(spec.V20251125, verdict.Req(req), []string{"no progress after the cancel"}, "progress 2", ev.Seq)
			}
		}
		return verdict.Passf("the server stopped")
	}
	return c
}

// TestCancelLaneGoesOnAfterIgnoredCancel: on a cancel lane, a case that
// finds the server went on with its cancelled call (CAN-8) hands the
// session on, as that work names only the case's own request; a warn
// under any other rule may have left work that names nothing, and the
// session is closed: each case then opens its own.
func TestCancelLaneGoesOnAfterIgnoredCancel(t *testing.T) {
	for _, tc := range []struct {
		req      string
		sessions int32
	}{
		{"CAN-8", 1},
		{"CAN-14", 3},
	} {
		t.Run(tc.req, func(t *testing.T) {
			cs := []probe.Case{cancelIgnored("c/1", tc.req), cancelIgnored("c/2", tc.req), cancelIgnored("c/3", tc.req)}
			var starts atomic.Int32
			rep := run(t, Config{Target: scriptedCancels(&starts, 0), Cases: cs, Jobs: 1, CaseTimeout: safetyNet, CloseTimeout: safetyNet})
			for _, r := range rep.Results {
				if r.Outcome.Verdict != verdict.Warn || r.Outcome.Requirement != tc.req {
					t.Errorf("%s: %s %s %s, want warn %s", r.ID, r.Outcome.Verdict, r.Outcome.Requirement, r.Outcome.Summary, tc.req)
				}
			}
			if n := starts.Load(); n != tc.sessions {
				t.Errorf("%d sessions opened for three cases that warn %s, want %d", n, tc.req, tc.sessions)
			}
		})
	}
}

// wantLane fails t unless every result passed and the first n went on
// one lane: the first opened its session and the others continued it.
func wantLane(t *testing.T, rep *results.Report, n int) {
	t.Helper()
	for _, r := range rep.Results {
		if r.Outcome.Verdict != verdict.Pass {
			t.Errorf("%s: %s %s", r.ID, r.Outcome.Verdict, r.Outcome.Summary)
		}
	}
	first := rep.Results[0].ID
	for i, r := range rep.Results[:n] {
		want := first
		if i == 0 {
			want = ""
		}
		if r.ContinuedFrom != want {
			t.Errorf("%s continued from %q, want %q", r.ID, r.ContinuedFrom, want)
		}
	}
}

// asideNotes are the texts of the notes that stand for set-aside frames
// in r's chronology.
func asideNotes(r results.Result) []string {
	var notes []string
	for _, ev := range r.Events {
		if setAside(ev) {
			notes = append(notes, ev.Text)
		}
	}
	return notes
}
