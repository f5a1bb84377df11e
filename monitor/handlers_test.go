package monitor

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/profile"
)

// read records a read of the observer that counts obs, as watch
// --observer writes it: the note that asks, then the one that answers.
func (h *history) read(started, completed, cancelled int) *history {
	note := func(text string) {
		h.events = append(h.events, chrono.Event{Seq: uint64(len(h.events) + 1), Offset: h.at, Dir: chrono.Harness, Kind: chrono.KindNote, Channel: chrono.ChannelObserver, Text: text})
	}
	note(chrono.TextObserverAsked)
	note(chrono.TextObserverRead + profile.Observation{Started: started, Completed: completed, Cancelled: cancelled}.String())
	return h
}

// TestHandlerStops: a cancelled call's handler is judged by the
// observer's readings against what the wire shows since the reading
// before the cancel: stopped, ran on (a completion the wire never
// answered), still running past the grace; and what they cannot tell is
// counted, not judged.
func TestHandlerStops(t *testing.T) {
	ms := time.Millisecond
	open := func(calls ...string) *history {
		h := init25()
		for _, id := range calls {
			h.c(call(id, `"t`+id+`"`))
		}
		return h
	}
	for _, tc := range []struct {
		name      string
		h         *history
		opts      Options
		want      []string
		undecided int
	}{
		{"stopped", open("1").read(1, 0, 0).c(cancel("1")).wait(20*ms).read(1, 0, 1), Options{}, nil, 0},
		{"ran on in silence", open("1").read(1, 0, 0).c(cancel("1")).wait(20*ms).read(1, 1, 0), Options{},
			[]string{"cancelled-handler-stops CAN-8 warn server"}, 0},
		{"ran on under 2026-07-28", (&history{}).c(call2026("1", `"t1"`)).read(1, 0, 0).c(cancel("1")).wait(20*ms).read(1, 1, 0),
			Options{Revision: "2026-07-28"}, []string{"cancelled-handler-stops CAN-48 warn server"}, 0},
		{"a closed stream's handler ran on (2026-07-28)", (&history{}).c(call2026("1", `"t1"`)).read(1, 0, 0).harness(chrono.TextStreamClosed+"1: the host gave up").wait(20*ms).read(1, 1, 0),
			Options{Revision: "2026-07-28"}, []string{"cancelled-handler-stops CAN-56 warn server"}, 0},
		{"still running past the grace", open("1").read(1, 0, 0).c(cancel("1")).wait(time.Second).read(1, 0, 0).wait(5*time.Second).read(1, 0, 0),
			Options{}, []string{"cancelled-handler-stops CAN-8 warn server"}, 0},
		{"running within the grace is waited for", open("1").read(1, 0, 0).c(cancel("1")).wait(time.Second).read(1, 0, 0), Options{}, nil, 1},
		{"another call answered explains the completion", open("1", "2").read(2, 0, 0).c(cancel("1")).s(result("2")).read(2, 1, 0).wait(6*time.Second).read(2, 1, 1),
			Options{}, nil, 0},
		{"another call still open explains one running handler, not two", open("1", "2").read(2, 0, 0).c(cancel("1")).wait(6*time.Second).read(2, 0, 0),
			Options{}, []string{"cancelled-handler-stops CAN-8 warn server"}, 0},
		{"a completion another answer may explain is undecided", open("1", "2").read(1, 0, 0).c(cancel("1")).s(result("2")).wait(6*time.Second).read(1, 1, 0),
			Options{}, nil, 1},
		{"an answered cancel is the response rules'", open("1").read(1, 0, 0).c(cancel("1")).s(result("1")).wait(6*time.Second).read(1, 1, 0),
			Options{}, nil, 0},
		{"two cancels both counted", open("1", "2").read(2, 0, 0).c(cancel("1")).c(cancel("2")).read(2, 0, 1).read(2, 1, 1), Options{},
			[]string{"cancelled-handler-stops CAN-8 warn server"}, 0},
		{"no reading before the cancel", open("1").c(cancel("1")).wait(6*time.Second).read(1, 0, 0), Options{}, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, _, m := run(tc.h, tc.opts)
			var got []string
			for _, f := range brief(fs) {
				if strings.HasPrefix(f, RuleHandlerStops) {
					got = append(got, f)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("findings %v; want %v\n%v", got, tc.want, fs)
			}
			if n := m.Counts()[CountHandlersUndecided]; n != tc.undecided {
				t.Errorf("%d undecided; want %d", n, tc.undecided)
			}
		})
	}
}

// TestHandlerStopsNeedsReadings: without the observer's readings the rule
// is a skip that says what would feed it, never a pass.
func TestHandlerStopsNeedsReadings(t *testing.T) {
	h := init25().c(call("1", `"t1"`)).c(cancel("1"))
	_, _, m := run(h, Options{})
	for _, r := range m.Results(nil) {
		if strings.HasSuffix(r.ID, RuleHandlerStops) {
			if r.Outcome.Verdict != "skip" || !strings.Contains(r.Outcome.Summary, "--observer") {
				t.Errorf("%s: %s %q; want a skip naming --observer", r.ID, r.Outcome.Verdict, r.Outcome.Summary)
			}
			return
		}
	}
	t.Errorf("no result for %s", RuleHandlerStops)
}

// TestHandlerOutlivesItsSession: a host that ends its session right after
// the cancel (DELETE) leaves the handler to the readings after it: they
// still judge it.
func TestHandlerOutlivesItsSession(t *testing.T) {
	m := New(Options{Transport: "http", Revision: "2025-11-25"})
	h := init25().c(call("1", `"t1"`)).read(1, 0, 0).c(cancel("1"))
	for _, ev := range h.events {
		m.Event("S1", ev)
	}
	m.EndSession("S1")
	later := (&history{at: 2 * time.Second}).read(1, 1, 0)
	for i, ev := range later.events {
		ev.Seq = uint64(len(h.events) + i + 1)
		m.Event("http", ev)
	}
	m.End()
	if got := brief(m.Findings()); len(got) != 1 || got[0] != "cancelled-handler-stops CAN-8 warn server" {
		t.Errorf("findings %v; want the handler that ran on after its session ended", got)
	}
}
