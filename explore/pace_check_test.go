package explore

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpflight/mcpflight/profile"
)

// The judgement of a response after a cancel on a target without the
// control extension (checker.uncontrolledCancel, cancelAnswered,
// observed), on hand-written histories of one session over stdio whose
// clock the test sets: which evidence makes the answer the cancel's, and
// which leaves it a crossing.

// paced is a line of a hand-written history read or written at.
type paced struct {
	line
	at time.Duration
}

func at(ms int, l line) paced { return paced{l, time.Duration(ms) * time.Millisecond} }

// pacedHistory records lines into one session without the control
// extension over stdio, each at its own offset; obs is the profile's
// observer when the session read it.
func pacedHistory(obs *profile.Observer, lines ...paced) *History {
	plain := make([]line, len(lines))
	for i, l := range lines {
		plain[i] = l.line
	}
	h := history(TransportStdio, 1, plain...)
	h.Sessions[0].Control = false
	h.observer = obs
	for i := range h.Events {
		h.Events[i].Offset = lines[i].at
	}
	return h
}

// The frames of a slow tool of four steps.
func slowCall(id int, token string) line {
	meta := ""
	if token != "" {
		meta = fmt.Sprintf(`,"_meta":{"progressToken":%q}`, token)
	}
	return out(0, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow","arguments":{"steps":4}%s}}`, id, meta))
}

func slowProgress(token string, n int) line {
	return in(0, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%q,"progress":%d,"total":4}}`, token, n))
}

func slowDone(id int) line {
	return in(0, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"done"}]}}`, id))
}

func slowCancelled(id int) line {
	return in(0, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"context canceled"}],"isError":true}}`, id))
}

func cancelOf(id int) line {
	return out(0, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`, id))
}

// completedCall is call 1, never cancelled: four progress notifications
// 100 ms apart and its result at 500 ms, the tool's pace.
func completedCall() []paced {
	return []paced{
		at(0, slowCall(1, "t1")),
		at(100, slowProgress("t1", 1)), at(200, slowProgress("t1", 2)), at(300, slowProgress("t1", 3)), at(400, slowProgress("t1", 4)),
		at(500, slowDone(1)),
	}
}

// The observer of testdata/gosdkserver's profile, and its reads.
var observeTool = &profile.Observer{Tool: "observe", Started: "/started", Completed: "/completed", Cancelled: "/cancelled"}

func observeRead(id int) line {
	return out(0, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"observe","arguments":{}}}`, id))
}

func observeAnswer(id, started, completed, cancelled int) line {
	return in(0, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[],"structuredContent":{"started":%d,"completed":%d,"cancelled":%d}}}`,
		id, started, completed, cancelled))
}

// TestCancelAnsweredByPace: a response read after a cancel is the
// cancel's answer when the call's steps left, at the pace the history
// shows, or the tool's fastest completion, say it could not be the call
// completing on its own; when the evidence fits both, it is a crossing.
func TestCancelAnsweredByPace(t *testing.T) {
	tests := []struct {
		name  string
		lines []paced
		want  bool   // a violation at the call's response
		race  string // the race counted, when none
	}{
		{"cancelled before its first progress, answered at once: four steps left", []paced{
			at(1000, slowCall(2, "t2")), at(1050, cancelOf(2)), at(1051, slowCancelled(2)),
		}, true, ""},
		{"called without a token, answered at once with an error: sooner than half the fastest completion", []paced{
			at(1000, slowCall(2, "")), at(1050, cancelOf(2)), at(1051, slowCancelled(2)),
		}, true, ""},
		{"cancelled after one progress, answered at once: three steps left", []paced{
			at(1000, slowCall(2, "t2")), at(1100, slowProgress("t2", 1)), at(1110, cancelOf(2)), at(1111, slowCancelled(2)),
		}, true, ""},
		{"every step done before the response: it crossed the cancel", []paced{
			at(1000, slowCall(2, "t2")),
			at(1100, slowProgress("t2", 1)), at(1200, slowProgress("t2", 2)), at(1300, slowProgress("t2", 3)), at(1400, slowProgress("t2", 4)),
			at(1450, cancelOf(2)), at(1500, slowDone(2)),
		}, false, RaceUncontrolled},
		{"the last steps read in a burst after a stall, then the result: every step done", []paced{
			at(1000, slowCall(2, "t2")), at(1100, slowProgress("t2", 1)), at(1200, slowProgress("t2", 2)),
			at(1210, cancelOf(2)), at(1230, slowProgress("t2", 3)), at(1231, slowProgress("t2", 4)), at(1232, slowDone(2)),
		}, false, RaceUncontrolled},
		{"without a token, an error later than half the fastest completion: it may be the tool's own end", []paced{
			at(1000, slowCall(2, "")), at(1050, cancelOf(2)), at(1400, slowCancelled(2)),
		}, false, RaceUncontrolled},
		{"without a token, a result at once: not an error, no steps to count", []paced{
			at(1000, slowCall(2, "")), at(1050, cancelOf(2)), at(1051, slowDone(2)),
		}, false, RaceUnknown},
		{"no response: nothing to judge", []paced{
			at(1000, slowCall(2, "t2")), at(1050, cancelOf(2)),
		}, false, RaceUnknownSilent},
	}
	for _, rev := range []string{Revision20251125, Revision20260728} {
		for _, tc := range tests {
			t.Run(rev+"/"+tc.name, func(t *testing.T) {
				lines := append(completedCall(), tc.lines...)
				vs, figs := Check(pacedHistory(nil, lines...), rev)
				var want []brief
				if tc.want {
					req := "CAN-8"
					if rev == Revision20260728 {
						req = "CAN-54"
					}
					want = []brief{{InvCancelNoResponse, req, uint64(len(lines))}}
				}
				if diff := cmp.Diff(want, briefs(vs)); diff != "" {
					t.Errorf("violations (-want +got):\n%s%v", diff, vs)
				}
				if tc.race != "" && figs.Races[tc.race] != 1 {
					t.Errorf("races %v, want one %q", figs.Races, tc.race)
				}
			})
		}
	}
}

// TestCancelAnsweredNeedsEvidence: without a call of the tool that
// completed on its own, or when the tool's own calls end in errors,
// nothing says how soon the call could have ended: a quick error after
// the cancel is counted, never judged.
func TestCancelAnsweredNeedsEvidence(t *testing.T) {
	cancelled := []paced{at(1000, slowCall(2, "")), at(1050, cancelOf(2)), at(1051, slowCancelled(2))}
	for _, tc := range []struct {
		name  string
		lines []paced
	}{
		{"no call completed", cancelled},
		{"a call never cancelled ended with an error", append([]paced{at(0, slowCall(1, "")), at(20, slowCancelled(1)),
			at(30, slowCall(3, "")), at(530, slowDone(3))}, cancelled...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs, figs := Check(pacedHistory(nil, tc.lines...), Revision20260728)
			if len(vs) > 0 {
				t.Errorf("violations %+v", vs)
			}
			if figs.Races[RaceUnknown] != 1 {
				t.Errorf("races %v, want one %q", figs.Races, RaceUnknown)
			}
		})
	}
}

// TestCancelAnsweredByObserver: the observer, read when the session
// opened and at its drain, counts a handler stopped by its cancel that
// no unanswered call accounts for: the answer read after that cancel
// answered it, however the timing looks (a result, no token, no pace).
func TestCancelAnsweredByObserver(t *testing.T) {
	// Call 2 is cancelled and answered at once with a result: no pace
	// rule can weigh it (no token, not an error).
	calls := []paced{
		at(0, observeRead(10)), at(1, observeAnswer(10, 0, 0, 0)),
		at(10, slowCall(1, "")), at(510, slowDone(1)),
		at(1000, slowCall(2, "")), at(1050, cancelOf(2)),
	}
	for _, tc := range []struct {
		name      string
		answer    []paced
		completed int
		cancelled int
		want      bool
	}{
		{"answered, and counted stopped by its cancel", []paced{at(1051, slowDone(2))}, 1, 1, true},
		{"answered, and counted completed: it crossed the cancel", []paced{at(1051, slowDone(2))}, 2, 0, false},
		{"counted stopped, and never answered", nil, 1, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines := append(append(calls[:len(calls):len(calls)], tc.answer...),
				at(2000, observeRead(11)), at(2001, observeAnswer(11, 2, tc.completed, tc.cancelled)))
			vs, _ := Check(pacedHistory(observeTool, lines...), Revision20260728)
			var want []brief
			if tc.want {
				want = []brief{{InvCancelNoResponse, "CAN-54", 7}}
			}
			if diff := cmp.Diff(want, briefs(vs)); diff != "" {
				t.Errorf("violations (-want +got):\n%s%+v", diff, vs)
			}
		})
	}
	// Counts of handlers this session never started are another
	// session's (a server shared over one stdio command): not judged.
	lines := append(calls[:len(calls):len(calls)], at(1051, slowDone(2)),
		at(2000, observeRead(11)), at(2001, observeAnswer(11, 9, 5, 4)))
	if vs, _ := Check(pacedHistory(observeTool, lines...), Revision20260728); len(vs) > 0 {
		t.Errorf("counts beyond the session's calls: violations %+v", vs)
	}
}
