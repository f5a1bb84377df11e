package explore

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpflight/mcpflight/chrono"
)

// later moves the events of h from sequence number seq on by d: what
// came after a pause.
func later(h *History, seq uint64, d time.Duration) *History {
	for i := range h.Events {
		if h.Events[i].Seq >= seq {
			h.Events[i].Offset += d
		}
	}
	return h
}

// TestCancelJudgedByTheControlExtension: a response read long after its
// cancel (beyond the monitor's crossing window) is judged by how the
// control extension says the call ended: written first and the cancel
// ignored (KEY/end: completed, CAN-9) is a race, not a violation; after
// an accepted cancel it is one violation, not one per engine.
func TestCancelJudgedByTheControlExtension(t *testing.T) {
	run := func(outcome string) ([]Violation, Figures) {
		h := history(TransportInProcess, 1,
			out(0, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"key":"c1","steps":1},"_meta":{"progressToken":"t"}}}`),
			out(0, `{"jsonrpc":"2.0","id":2,"method":"mcpflight/release","params":{"checkpoint":"c1/start"}}`),
			in(0, `{"jsonrpc":"2.0","id":2,"result":{}}`),
			out(0, `{"jsonrpc":"2.0","id":3,"method":"mcpflight/release","params":{"checkpoint":"c1/step/1"}}`),
			in(0, `{"jsonrpc":"2.0","id":3,"result":{}}`),
			out(0, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`),
			in(0, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`),
			out(0, `{"jsonrpc":"2.0","id":4,"method":"mcpflight/await","params":{"checkpoint":"c1/end"}}`),
			in(0, `{"jsonrpc":"2.0","id":4,"result":{"checkpoint":"c1/end","requestId":1,"outcome":"`+outcome+`"}}`))
		return Check(later(h, 7, 500*time.Millisecond), Revision20251125)
	}
	vs, figs := run("completed")
	if len(vs) != 0 || figs.Races[RaceResponseFirst] != 1 {
		t.Errorf("the response written before the cancel was read: violations %v, races %v", vs, figs.Races)
	}
	vs, _ = run("cancelled")
	if diff := cmp.Diff([]brief{{InvCancelNoResponse, "CAN-8", 7}}, briefs(vs)); diff != "" {
		t.Errorf("a response after an accepted cancel (-want +got):\n%s", diff)
	}
}

// TestReplayJudgedOnce: a resumed stream that replays another request's
// response breaks HTTP-44 once; the copy is not also a second response
// (RPC-8) nor a reused event ID (HTTP-40).
func TestReplayJudgedOnce(t *testing.T) {
	sse := func(channel, id, raw string) line {
		return line{dir: chrono.In, channel: channel, raw: raw, text: "sse id=" + id}
	}
	post := func(channel, raw string) line { return line{dir: chrono.Out, channel: channel, raw: raw} }
	vs, _ := Check(history(TransportHTTP, 1,
		post("POST #1", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"key":"a","steps":2},"_meta":{"progressToken":"t1"}}}`),
		line{dir: chrono.In, channel: "SSE POST #1", kind: chrono.KindHTTP, text: "sse id=e0 (empty data: priming)"},
		sse("SSE POST #1", "e1", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t1","progress":1}}`),
		post("POST #2", `{"jsonrpc":"2.0","id":2,"method":"ping"}`),
		line{dir: chrono.In, channel: "SSE POST #2", kind: chrono.KindHTTP, text: "sse id=f0 (empty data: priming)"},
		sse("SSE POST #2", "f1", `{"jsonrpc":"2.0","id":2,"result":{}}`),
		line{dir: chrono.Out, channel: "GET #1", kind: chrono.KindHTTP, text: "GET Accept: text/event-stream; Last-Event-Id: e1"},
		sse("SSE GET #1", "f1", `{"jsonrpc":"2.0","id":2,"result":{}}`),
		sse("SSE GET #1", "e2", `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`),
	), Revision20251125)
	if diff := cmp.Diff([]brief{{InvReplayOwnStream, "HTTP-44", 8}}, briefs(vs)); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
}

// TestReplayIsNotCounted: a copy of another request's progress that a
// resumed stream replays (HTTP-44) is no progress of that request: the
// figures count each progress notification once.
func TestReplayIsNotCounted(t *testing.T) {
	sse := func(channel, id, raw string) line {
		return line{dir: chrono.In, channel: channel, raw: raw, text: "sse id=" + id}
	}
	post := func(channel, raw string) line { return line{dir: chrono.Out, channel: channel, raw: raw} }
	vs, figs := Check(history(TransportHTTP, 1,
		post("POST #1", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"key":"a","steps":2},"_meta":{"progressToken":"t1"}}}`),
		line{dir: chrono.In, channel: "SSE POST #1", kind: chrono.KindHTTP, text: "sse id=e0 (empty data: priming)"},
		post("POST #2", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"key":"b","steps":2},"_meta":{"progressToken":"t2"}}}`),
		line{dir: chrono.In, channel: "SSE POST #2", kind: chrono.KindHTTP, text: "sse id=f0 (empty data: priming)"},
		sse("SSE POST #2", "f1", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t2","progress":1}}`),
		line{dir: chrono.Out, channel: "GET #1", kind: chrono.KindHTTP, text: "GET Accept: text/event-stream; Last-Event-Id: e0"},
		sse("SSE GET #1", "f1", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t2","progress":1}}`),
		sse("SSE GET #1", "e1", `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`),
		sse("SSE POST #2", "f2", `{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`),
	), Revision20251125)
	if diff := cmp.Diff([]brief{{InvReplayOwnStream, "HTTP-44", 7}}, briefs(vs)); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
	if got := figs.Counts[CountProgress]; got != 1 {
		t.Errorf("%d progress notifications counted; want 1 (the replayed copy is not one)", got)
	}
}

// TestFoundByBothOnce: progress for a task beyond its ticks, read after
// the task was terminal, breaks PRG-11 by the explorer's evidence (the
// ticks) and by the monitor's (the task's end): one violation.
func TestFoundByBothOnce(t *testing.T) {
	task := func(status string) string {
		return `{"taskId":"T","status":"` + status + `","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":600000}`
	}
	vs, _ := Check(history(TransportInProcess, 1,
		out(0, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"task_worker","arguments":{"key":"k","ticks":1},"task":{"ttl":600000},"_meta":{"progressToken":"t"}}}`),
		in(0, `{"jsonrpc":"2.0","id":1,"result":{"task":`+task("working")+`}}`),
		in(0, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`),
		in(0, `{"jsonrpc":"2.0","method":"notifications/tasks/status","params":`+task("completed")+`}`),
		in(0, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":2}}`),
	), Revision20251125)
	if diff := cmp.Diff([]brief{{InvProgressAfterEnd, "PRG-11", 5}}, briefs(vs)); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
}
