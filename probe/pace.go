package probe

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/mcp"
)

// MinWindow is the shortest window sized from the evidence: a scheduler
// hiccup on a loaded machine is not the target's pace.
const MinWindow = 250 * time.Millisecond

// roundTrips is how many typical prompt round trips a window adds to the
// longest step interval: the step's frame has to travel, and the target's
// timers drift under load as much as its answers do.
const roundTrips = 4

// rttSamples is how many of the latest round trips the typical one is
// taken from.
const rttSamples = 64

// Pace is what a run has learned of its target's pace, from the
// chronologies of its cases: the round trips of requests the target
// answers without work of its own (the handshake, ping, tools/list,
// tasks/get, tasks/list), and the intervals between two successive
// progress notifications of one call. A window that watches for
// something that must not happen is sized from it (Window): long enough
// for the target's next step to show, and no longer. One Pace is shared
// by every case of a run, so a case that has seen nothing yet sizes its
// windows from the cases before it; it is safe for concurrent use.
//
// The longest step interval is kept, never an average: a window must
// cover the slowest step the target has shown. Round trips are the
// median of the latest ones: on a loaded machine one exchange can take
// seconds, and that stall says nothing about the next step.
type Pace struct {
	ceiling time.Duration

	mu   sync.Mutex
	rtts []time.Duration // ring of the latest rttSamples round trips
	next int
	seen map[rttKey]bool // round trips already counted
	step time.Duration
}

// rttKey names one exchange of one chronology, so that a case's window
// learning from its chronology twice counts each round trip once.
type rttKey struct {
	log *chrono.Log
	seq uint64
}

// NewPace returns an empty Pace whose windows are at most ceiling (the
// --grace given, or the profile's grace).
func NewPace(ceiling time.Duration) *Pace {
	return &Pace{ceiling: max(ceiling, MinWindow), seen: map[rttKey]bool{}}
}

// promptMethods are the requests a target answers at once, without work
// of its own: their round trips measure the wire and the target's
// scheduling, nothing else.
var promptMethods = map[string]bool{
	mcp.MethodInitialize:     true,
	mcp.MethodPing:           true,
	mcp.MethodToolsList:      true,
	mcp.MethodTasksGet:       true,
	mcp.MethodTasksList:      true,
	mcp.MethodServerDiscover: true,
}

// Learn reads one case's chronology. A controlled target's steps wait on
// our gates, so their intervals say nothing about its pace (steps false);
// over stdio the first exchange also waits for the process to start, so
// its round trip is left out (firstSlow).
func (p *Pace) Learn(log *chrono.Log, steps, firstSlow bool) {
	rtts, step := measure(log.Snapshot(), steps, firstSlow)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.step = max(p.step, step)
	for _, r := range rtts {
		k := rttKey{log, r.seq}
		if p.seen[k] {
			continue
		}
		p.seen[k] = true
		if len(p.rtts) < rttSamples {
			p.rtts = append(p.rtts, r.d)
		} else {
			p.rtts[p.next] = r.d
			p.next = (p.next + 1) % rttSamples
		}
	}
}

// roundTrip is one prompt exchange: the answer's sequence number and how
// long it took.
type roundTrip struct {
	seq uint64
	d   time.Duration
}

// measure returns the prompt round trips in events and the longest
// interval between two successive progress notifications of one token.
// An ID is matched within one session: a second session's exchanges on
// the same chronology (another channel) are told apart by channel prefix
// over HTTP and left out over stdio only if their IDs collide, which
// makes a round trip look shorter or longer, never lost.
func measure(events []chrono.Event, steps, firstSlow bool) (rtts []roundTrip, step time.Duration) {
	sent := map[string]time.Duration{}     // prompt request id → when it was sent
	lastStep := map[string]time.Duration{} // progress token → its last step
	first := true
	for _, ev := range events {
		if ev.Kind != chrono.KindFrame || ev.Summary == nil {
			continue
		}
		s := ev.Summary
		switch {
		case ev.Dir == chrono.Out && s.Kind == "request":
			if promptMethods[s.Method] && !(first && firstSlow) {
				sent[s.ID] = ev.Offset
			}
			first = false
			if s.Token != "" {
				delete(lastStep, s.Token) // a new call under a reused token
			}
		case ev.Dir == chrono.In && (s.Kind == "result" || s.Kind == "error"):
			if at, ok := sent[s.ID]; ok {
				rtts = append(rtts, roundTrip{ev.Seq, ev.Offset - at})
				delete(sent, s.ID)
			}
		case steps && ev.Dir == chrono.In && s.Method == mcp.NotificationProgress && s.Token != "":
			if at, ok := lastStep[s.Token]; ok {
				step = max(step, ev.Offset-at)
			}
			lastStep[s.Token] = ev.Offset
		}
	}
	return rtts, step
}

// typicalRTT is the median of the latest round trips (0: none yet).
func (p *Pace) typicalRTT() time.Duration {
	if len(p.rtts) == 0 {
		return 0
	}
	sorted := slices.Clone(p.rtts)
	slices.Sort(sorted)
	return sorted[len(sorted)/2]
}

// Window is how long to watch for something that must not happen: the
// longest step interval seen and a quarter more, plus roundTrips typical
// round trips, at least MinWindow and at most the ceiling. Until a step
// interval has been seen it is the ceiling: a target that works in steps
// has not shown how long one takes. The reason says what the window was
// sized from, for the chronology.
func (p *Pace) Window() (time.Duration, string) {
	p.mu.Lock()
	rtt, step := p.typicalRTT(), p.step
	p.mu.Unlock()
	if step == 0 {
		return p.ceiling, "no step interval learned yet"
	}
	w := step + step/4 + roundTrips*rtt
	why := fmt.Sprintf("step interval %v, round trip %v", step.Round(time.Millisecond), rtt.Round(time.Millisecond))
	if w < MinWindow {
		w = MinWindow
	}
	if w > p.ceiling {
		w = p.ceiling
	}
	return w, why
}

// RoundTrip is the typical prompt round trip learned so far (0: none).
func (p *Pace) RoundTrip() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.typicalRTT()
}

// Step is the longest progress interval learned so far (0: none).
func (p *Pace) Step() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.step
}
