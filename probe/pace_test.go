package probe

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/mcp"
)

const ms = time.Millisecond

func frame(seq uint64, at time.Duration, dir chrono.Direction, s chrono.Summary) chrono.Event {
	return chrono.Event{Seq: seq, Offset: at, Dir: dir, Kind: chrono.KindFrame, Summary: &s}
}

// A chronology of a handshake, a tools/list and a slow call with three
// progress steps 200ms apart (the first 230ms after the call).
func paceEvents() []chrono.Event {
	return []chrono.Event{
		frame(1, 0, chrono.Out, chrono.Summary{Kind: "request", Method: mcp.MethodInitialize, ID: "1"}),
		frame(2, 90*ms, chrono.In, chrono.Summary{Kind: "result", ID: "1"}),
		frame(3, 100*ms, chrono.Out, chrono.Summary{Kind: "request", Method: mcp.MethodToolsList, ID: "2"}),
		frame(4, 110*ms, chrono.In, chrono.Summary{Kind: "result", ID: "2"}),
		frame(5, 120*ms, chrono.Out, chrono.Summary{Kind: "request", Method: mcp.MethodToolsCall, ID: "3", Token: "7"}),
		frame(6, 350*ms, chrono.In, chrono.Summary{Kind: "notification", Method: mcp.NotificationProgress, Token: "7"}),
		frame(7, 550*ms, chrono.In, chrono.Summary{Kind: "notification", Method: mcp.NotificationProgress, Token: "7"}),
		frame(8, 760*ms, chrono.In, chrono.Summary{Kind: "notification", Method: mcp.NotificationProgress, Token: "7"}),
		frame(9, 770*ms, chrono.In, chrono.Summary{Kind: "result", ID: "3"}),
	}
}

func TestMeasure(t *testing.T) {
	for _, tc := range []struct {
		name             string
		steps, firstSlow bool
		rtts             []roundTrip
		step             time.Duration
	}{
		// The call's own round trip is work, not pace; its first
		// progress is 230ms after it, but that includes the start of its
		// work: only the intervals between steps count.
		{"over HTTP", true, false, []roundTrip{{2, 90 * ms}, {4, 10 * ms}}, 210 * ms},
		// Over stdio the first exchange waits for the process to start.
		{"over stdio", true, true, []roundTrip{{4, 10 * ms}}, 210 * ms},
		// A controlled target's steps wait on our gates.
		{"controlled", false, false, []roundTrip{{2, 90 * ms}, {4, 10 * ms}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rtts, step := measure(paceEvents(), tc.steps, tc.firstSlow)
			if diff := cmp.Diff(tc.rtts, rtts, cmp.AllowUnexported(roundTrip{})); diff != "" || step != tc.step {
				t.Errorf("measure: step %v, want %v; round trips (-want +got):\n%s", step, tc.step, diff)
			}
		})
	}
}

func TestPaceWindow(t *testing.T) {
	p := NewPace(1200 * ms)
	if w, why := p.Window(); w != 1200*ms || !strings.Contains(why, "no step interval") {
		t.Errorf("with nothing learned: %v (%s), want the ceiling", w, why)
	}
	log := chrono.New()
	for _, ev := range paceEvents() {
		log.Append(ev)
	}
	p.Learn(log, true, false)
	p.Learn(log, true, false) // a case learning twice counts each round trip once
	if len(p.rtts) != 2 {
		t.Errorf("%d round trips kept, want 2", len(p.rtts))
	}
	// The log's own clock stamps the offsets: the step is what Append
	// recorded, so size the expectation from what was learned.
	step := p.Step()
	want := max(step+step/4+roundTrips*p.typicalRTT(), MinWindow)
	if w, _ := p.Window(); w != min(want, 1200*ms) {
		t.Errorf("window %v, want %v", w, min(want, 1200*ms))
	}
	// A long step is capped at the ceiling, a short one raised to the
	// floor.
	slow := NewPace(time.Second)
	slow.step = 5 * time.Second
	if w, _ := slow.Window(); w != time.Second {
		t.Errorf("a 5s step under a 1s ceiling gave %v", w)
	}
	fast := NewPace(time.Second)
	fast.step, fast.rtts = ms, []time.Duration{ms}
	if w, _ := fast.Window(); w != MinWindow {
		t.Errorf("a 1ms step gave %v, want the floor %v", w, MinWindow)
	}
	// The median of the round trips, not the stall of one.
	stalls := NewPace(10 * time.Second)
	stalls.step, stalls.rtts = 200*ms, []time.Duration{10 * ms, 8 * time.Second, 12 * ms}
	if got := stalls.typicalRTT(); got != 12*ms {
		t.Errorf("typical round trip %v, want the median 12ms", got)
	}
}

// A window right after another, with nothing sent or received in
// between, is not watched again; anything on the wire in between makes
// the next window count.
func TestObserveDoesNotWatchTwiceForNothing(t *testing.T) {
	// The windows run on a synctest bubble's clock.
	synctest.Test(t, func(t *testing.T) {
		p := NewPace(MinWindow)
		p.step = ms
		e := &Env{Log: chrono.New(), Pacing: p, Grace: MinWindow}
		ctx := context.Background()
		windows := func() int {
			n := 0
			for _, ev := range e.Log.Events() {
				if ev.Kind == chrono.KindDeadline {
					n++
				}
			}
			return n
		}
		if err := e.Observe(ctx); err != nil {
			t.Fatal(err)
		}
		if err := e.Observe(ctx); err != nil {
			t.Fatal(err)
		}
		if n := windows(); n != 1 {
			t.Errorf("%d windows watched for nothing new, want 1", n)
		}
		e.Log.Append(frame(0, 0, chrono.Out, chrono.Summary{Kind: "notification", Method: mcp.NotificationCancelled}))
		if err := e.Observe(ctx); err != nil {
			t.Fatal(err)
		}
		if n := windows(); n != 2 {
			t.Errorf("%d windows after a frame was sent, want 2", n)
		}
		// Without a Pace every window is watched, as before.
		careful := &Env{Log: chrono.New(), Grace: ms}
		for range 2 {
			if err := careful.Observe(ctx); err != nil {
				t.Fatal(err)
			}
		}
		n := 0
		for _, ev := range careful.Log.Events() {
			if ev.Kind == chrono.KindDeadline {
				n++
			}
		}
		if n != 2 {
			t.Errorf("the careful setting watched %d windows, want 2", n)
		}
	})
}

// TestObserveEndsWhenDecided: a paced window ends as soon as what arrived
// decides the verdict (DecidedBy), however long the window
// would have been, and later windows of the case end at once; the
// careful setting (no Pace) still watches its window to the end.
func TestObserveEndsWhenDecided(t *testing.T) {
	// In a synctest bubble: a window that did not end when the verdict
	// was decided would run its half hour on the bubble's clock, and the
	// deadline it left in the log fails the test.
	synctest.Test(t, func(t *testing.T) {
		p := NewPace(time.Hour)
		p.step = 30 * time.Minute // a window far beyond the safety net below
		e := &Env{Log: chrono.New(), Pacing: p, Grace: time.Hour}
		// The safety net: a broken early stop fails here instead of hanging.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		asked := make(chan struct{})
		var once sync.Once
		e.DecidedBy(func() bool {
			once.Do(func() { close(asked) })
			for _, ev := range e.Log.Events() {
				if ev.Dir == chrono.In {
					return true
				}
			}
			return false
		})
		go func() {
			<-asked // Observe has looked once and found nothing decided
			e.Log.Append(frame(0, 0, chrono.Out, chrono.Summary{Kind: "request", Method: mcp.MethodToolsCall, ID: "1"}))
			e.Log.Append(frame(0, 0, chrono.In, chrono.Summary{Kind: "result", ID: "1"}))
		}()
		if err := e.Observe(ctx); err != nil {
			t.Fatalf("Observe: %v (the window did not end when the verdict was decided)", err)
		}
		e.Log.Append(frame(0, 0, chrono.Out, chrono.Summary{Kind: "request", Method: mcp.MethodToolsList, ID: "2"}))
		if err := e.Observe(ctx); err != nil {
			t.Fatalf("second Observe: %v", err)
		}
		notes, deadlines := 0, 0
		for _, ev := range e.Log.Events() {
			switch {
			case ev.Kind == chrono.KindNote && strings.Contains(ev.Text, "verdict is decided"):
				notes++
			case ev.Kind == chrono.KindDeadline:
				deadlines++
			}
		}
		if notes != 1 || deadlines != 0 {
			t.Errorf("%d decision notes and %d elapsed windows, want 1 and 0:\n%v", notes, deadlines, e.Log.Events())
		}
		// Fixed windows are the careful setting: watched to their end.
		careful := &Env{Log: chrono.New(), Grace: ms}
		careful.DecidedBy(func() bool { return true })
		if err := careful.Observe(ctx); err != nil {
			t.Fatal(err)
		}
		if evs := careful.Log.Events(); len(evs) != 1 || evs[0].Kind != chrono.KindDeadline {
			t.Errorf("the careful setting: %v, want its window elapsed", evs)
		}
	})
}
