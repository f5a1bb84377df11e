package probe

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/profile"
)

// SlowFit is what a run learned of the profile's slow tool, shared by its
// cases: whether a call of it that asked for progress ended without any,
// sooner than a long-running tool runs (instantBelow).
// Such a tool is no long-running tool, whatever the profile says (a draft
// that guessed from a word in a description, a tool that answers at once):
// a case that needs work in flight cannot hold it, and its error or
// unexercised skip is the profile's doing, not the target's. The runner
// then skips those cases with one reason (Unfit) and says so in one line.
//
// Only a target without the control extension is judged: with it, the
// operation's pace is the checker's to set.
type SlowFit struct {
	mu sync.Mutex
	// candidates are the calls, by chronology, that ended before their
	// first progress, not yet confirmed by the end of their case.
	candidates map[*chrono.Log][]slowCall
	reason     string
}

// slowCall is one call of the slow tool that ended before its first
// progress.
type slowCall struct {
	token jsonrpc.ProgressToken
	seq   uint64 // the request's sequence number
	took  time.Duration
	how   string // "answered", or "failed with …"
}

// instantBelow is how soon a call must end, without progress, for the
// slow tool to count as one that answers at once: half the run a drafted
// profile's slow tool showed (profile.MinSlow), so that a tool kept on one
// run is not judged instant on a faster one.
const instantBelow = profile.MinSlow / 2

// NewSlowFit returns an empty SlowFit for one run.
func NewSlowFit() *SlowFit { return &SlowFit{candidates: map[*chrono.Log][]slowCall{}} }

// note records a call of the slow tool, on log, that ended before its
// first progress: took after it was sent, how it ended.
func (f *SlowFit) note(log *chrono.Log, c slowCall) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.candidates[log] = append(f.candidates[log], c)
}

// Settle judges, once its case has ended, the calls noted on log: one
// whose token never got a progress notification in the whole chronology
// (late progress is PRG-14's, which the progress cases judge) makes the
// slow tool unfit for the run. It reports the run's reason and whether the
// tool is unfit, which it may already have been.
func (f *SlowFit) Settle(log *chrono.Log, toolName string) (string, bool) {
	if f == nil {
		return "", false
	}
	f.mu.Lock()
	calls := f.candidates[log]
	delete(f.candidates, log)
	f.mu.Unlock()
	events := log.Snapshot()
	for _, c := range calls {
		if c.took >= instantBelow || slices.ContainsFunc(events, ProgressFor(c.token)) {
			// A call that ran long without progress is a long-running
			// tool whose progress is missing: the progress cases judge
			// that (PRG-*), it is not the profile's doing.
			continue
		}
		f.mu.Lock()
		if f.reason == "" {
			f.reason = fmt.Sprintf("the profile's slow tool %q %s in %v with no progress: it is no long-running tool, so the cases that need work in flight cannot run (name one that runs for a second or more and sends progress, or state lacks: [slow])",
				chrono.Sanitize(toolName, false), c.how, c.took.Round(time.Millisecond))
		}
		f.mu.Unlock()
		break
	}
	return f.Unfit()
}

// Unfit returns the reason the run found the slow tool unfit, and whether
// it did.
func (f *SlowFit) Unfit() (string, bool) {
	if f == nil {
		return "", false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reason, f.reason != ""
}
