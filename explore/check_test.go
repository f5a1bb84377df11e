package explore

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
)

// line is one event of a hand-written history: a frame (raw) or a
// harness event (text) of session s.
type line struct {
	s       int
	dir     chrono.Direction
	channel string
	raw     string
	kind    chrono.Kind
	text    string
}

func out(s int, raw string) line { return line{s: s, dir: chrono.Out, channel: "stdin", raw: raw} }
func in(s int, raw string) line  { return line{s: s, dir: chrono.In, channel: "stdout", raw: raw} }

// history records lines into one log per session, as the executor does,
// and merges them.
func history(transportName string, sessions int, lines ...line) *History {
	tr := &trace{start: time.Now()}
	for i := range sessions {
		tr.sessions = append(tr.sessions, &sessionTrace{label: "s" + string(rune('1'+i)), slot: i, transport: transportName,
			control: true, log: chrono.New(chrono.WithStart(tr.start))})
	}
	for _, l := range lines {
		log := tr.sessions[l.s].log
		switch {
		case l.raw != "" && l.text != "":
			// A frame with the transport's text (an SSE event's ID).
			log.Append(chrono.Event{Dir: l.dir, Channel: l.channel, Kind: chrono.KindFrame, Raw: []byte(l.raw),
				Summary: chrono.Summarize(jsonrpc.Decode([]byte(l.raw))), Text: l.text})
			continue
		case l.raw != "":
			log.Frame(l.dir, l.channel, []byte(l.raw), nil, nil)
			continue
		}
		dir := chrono.Harness
		if l.kind == chrono.KindHTTP {
			dir = l.dir // an HTTP exchange's request line or status
		}
		log.Append(chrono.Event{Dir: dir, Channel: l.channel, Kind: l.kind, Text: l.text})
	}
	return merge(tr)
}

// brief is a violation without its text, for comparisons.
type brief struct {
	Invariant, Requirement string
	Seq                    uint64
}

func briefs(vs []Violation) []brief {
	var out []brief
	for _, v := range vs {
		out = append(out, brief{v.Invariant, v.Requirement, v.Seq})
	}
	return out
}

// cancelRace is a slow call of two steps with a token, its start gate
// released and the cancel sent at once, so that the cancel races the
// first progress; then progress arrives and the end says cancelled.
func cancelRace(progress ...line) []line {
	lines := []line{
		out(0, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"key":"c1","steps":2},"_meta":{"progressToken":"t"}}}`),
		out(0, `{"jsonrpc":"2.0","id":2,"method":"mcpflight/release","params":{"checkpoint":"c1/start"}}`),
		out(0, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`),
		in(0, `{"jsonrpc":"2.0","id":2,"result":{}}`),
	}
	lines = append(lines, progress...)
	return append(lines,
		out(0, `{"jsonrpc":"2.0","id":3,"method":"mcpflight/await","params":{"checkpoint":"c1/end"}}`),
		in(0, `{"jsonrpc":"2.0","id":3,"result":{"checkpoint":"c1/end","requestId":1,"outcome":"cancelled"}}`))
}

// TestRaceWindow: progress the released gate allowed may cross an
// accepted cancel (counted, not a violation); progress beyond it may not.
func TestRaceWindow(t *testing.T) {
	p1 := in(0, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1,"total":2}}`)
	p2 := in(0, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":2,"total":2}}`)
	tests := []struct {
		name  string
		lines []line
		want  []brief
		race  string
	}{
		{"no progress: the cancel was read first", cancelRace(), nil, RaceCancelFirst},
		{"the allowed progress crossed the cancel", cancelRace(p1), nil, RaceProgressFirst},
		{"progress beyond what the release allowed", cancelRace(p1, p2), []brief{{InvCancelNoProgress, "CAN-8", 6}}, RaceProgressFirst},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vs, figs := Check(history(TransportInProcess, 1, tc.lines...), Revision20251125)
			if diff := cmp.Diff(tc.want, briefs(vs)); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
			if figs.Races[tc.race] != 1 {
				t.Errorf("races %v, want one %q", figs.Races, tc.race)
			}
		})
	}
}

// TestTaskSightingsByLastUpdatedAt: a sighting that arrives late but
// carries an older lastUpdatedAt (another stream read later) is not a
// change of a terminal task; a newer one with another status is.
func TestTaskSightingsByLastUpdatedAt(t *testing.T) {
	task := func(status, at string) string {
		return `{"taskId":"T","status":"` + status + `","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:0` + at + `Z","ttl":600000}`
	}
	base := []line{
		out(0, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"task_worker","arguments":{"key":"t1","ticks":1},"task":{"ttl":600000}}}`),
		in(0, `{"jsonrpc":"2.0","id":1,"result":{"task":`+task("working", "0")+`}}`),
		in(0, `{"jsonrpc":"2.0","method":"notifications/tasks/status","params":`+task("completed", "2")+`}`),
		in(0, `{"jsonrpc":"2.0","method":"notifications/tasks/status","params":`+task("working", "1")+`}`),
	}
	if vs, _ := Check(history(TransportHTTP, 1, base...), Revision20251125); len(vs) != 0 {
		t.Errorf("a stale sighting was taken for a change: %v", vs)
	}
	changed := append(base, in(0, `{"jsonrpc":"2.0","method":"notifications/tasks/status","params":`+task("cancelled", "3")+`}`))
	vs, _ := Check(history(TransportHTTP, 1, changed...), Revision20251125)
	if diff := cmp.Diff([]brief{{InvTaskTerminalStable, "TSK-31", 5}}, briefs(vs)); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
}

// TestAcrossSessions: a response carrying an ID only another session
// sent is named as that session's; the request it should have answered
// is then unanswered.
func TestAcrossSessions(t *testing.T) {
	vs, _ := Check(history(TransportInProcess, 2,
		out(0, `{"jsonrpc":"2.0","id":10000001,"method":"ping"}`),
		in(1, `{"jsonrpc":"2.0","id":10000001,"result":{}}`),
	), Revision20251125)
	want := []brief{{InvOneResponse, "PNG-1", 1}, {InvOneResponse, "RPC-8", 2}}
	if diff := cmp.Diff(want, briefs(vs)); diff != "" {
		t.Fatalf("violations (-want +got):\n%s", diff)
	}
	if !strings.Contains(vs[1].Text, "an id of session s1") {
		t.Errorf("the stray response is not named as s1's: %s", vs[1].Text)
	}
	if v, _ := Primary(vs); v.Requirement != "RPC-8" {
		t.Errorf("the primary violation is %s, want the response that happened (RPC-8) before the absence", v.Requirement)
	}
}

// TestNullIDErrorOverHTTP: an error without an id in the body of a
// request's POST refused with 404 (a session that is gone) answers no
// notification; in the body of a notification's POST it does (RPC-15),
// and the POST's 200 is no 202 (HTTP-11).
func TestNullIDErrorOverHTTP(t *testing.T) {
	post := func(s int, dir chrono.Direction, channel, raw string) line {
		return line{s: s, dir: dir, channel: channel, raw: raw}
	}
	status := func(channel string, code int) line {
		return line{dir: chrono.In, channel: channel, kind: chrono.KindHTTP, text: fmt.Sprintf("HTTP %d Content-Type: application/json", code)}
	}
	nullErr := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Not Found"}}`
	vs, _ := Check(history(TransportHTTP, 1,
		post(0, chrono.Out, "POST #2", `{"jsonrpc":"2.0","id":5,"method":"ping"}`),
		status("POST #2", 404),
		post(0, chrono.In, "POST #2", nullErr),
		post(0, chrono.Out, "POST #3", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`),
		status("POST #3", 200),
		post(0, chrono.In, "POST #3", nullErr),
	), Revision20251125)
	want := []brief{{InvOneResponse, "PNG-1", 1}, {InvNoNotificationReply, "HTTP-11", 5}, {InvNoNotificationReply, "RPC-15", 6}}
	if diff := cmp.Diff(want, briefs(vs)); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
}

// TestDirections: a cancel from the server may name a request it sent,
// never one the explorer sent (CAN-1).
func TestDirections(t *testing.T) {
	vs, _ := Check(history(TransportInProcess, 1,
		in(0, `{"jsonrpc":"2.0","id":7,"method":"ping"}`),
		out(0, `{"jsonrpc":"2.0","id":7,"result":{}}`),
		in(0, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`),
		out(0, `{"jsonrpc":"2.0","id":8,"method":"ping"}`),
		in(0, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":8}}`),
		in(0, `{"jsonrpc":"2.0","id":8,"result":{}}`),
	), Revision20251125)
	if diff := cmp.Diff([]brief{{InvCancelTarget, "CAN-1", 5}}, briefs(vs)); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
}

// TestInvariantsCiteTheRegistry: every requirement an invariant cites
// exists in the registry, for every revision it holds for.
func TestInvariantsCiteTheRegistry(t *testing.T) {
	for _, inv := range Invariants() {
		if len(inv.Cites) == 0 {
			t.Errorf("%s holds for no revision", inv.ID)
		}
		for rev, reqs := range inv.Cites {
			for _, r := range reqs {
				if level(r) == "" {
					t.Errorf("%s cites %s for %s, which the registry does not have", inv.ID, r, rev)
				}
			}
		}
	}
}
