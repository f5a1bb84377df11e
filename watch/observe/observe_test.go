package observe

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/monitor"
	"github.com/mcpflight/mcpflight/profile"
)

// notes records what a Poller writes in the chronology.
type notes struct {
	mu    sync.Mutex
	lines []string
}

func (n *notes) note(kind chrono.Kind, channel, text string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.lines = append(n.lines, string(kind)+" "+channel+" "+text)
}

func (n *notes) count(prefix string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := 0
	for _, l := range n.lines {
		if strings.HasPrefix(l, prefix) {
			c++
		}
	}
	return c
}

// run runs p until stop is called, which returns once Run has; done is
// closed when Run returns.
func run(p *Poller) (stop func(), done <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan struct{})
	go func() { p.Run(ctx); close(ended) }()
	return func() { cancel(); <-ended }, ended
}

var (
	call   = monitor.Activity{Kind: monitor.ActRequest, Side: monitor.Client, Method: "tools/call"}
	cancel = monitor.Activity{Kind: monitor.ActCancel, Side: monitor.Client, Method: "tools/call"}
)

// TestPollerReadsWhatTheRuleNeeds: the observer is read once at the
// start, once when a call starts, every interval for the grace after a
// cancel, and not at all otherwise (a ping, a quiet conversation); each
// read is recorded as the note that asks and the note with the counts.
func TestPollerReadsWhatTheRuleNeeds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := &notes{}
		reads := 0
		p := New(Config{Grace: time.Second, Interval: 100 * time.Millisecond, Note: n.note,
			Read: func(context.Context) (profile.Observation, error) {
				reads++
				return profile.Observation{Started: reads}, nil
			}})
		stop, _ := run(p)
		p.Observe(monitor.Activity{Kind: monitor.ActRequest, Side: monitor.Client, Method: "ping"})
		time.Sleep(time.Minute)
		synctest.Wait()
		if reads != 1 {
			t.Fatalf("%d reads by the end of a quiet minute with a ping; want 1, at the start", reads)
		}
		p.Observe(call)
		synctest.Wait()
		if reads != 2 {
			t.Fatalf("%d reads after a call started; want 2", reads)
		}
		p.Observe(cancel)
		time.Sleep(5 * time.Second)
		synctest.Wait()
		// The cancel's read, then one per interval for the grace and two
		// intervals more: 12 or 13 by where the ticks fall.
		if after := reads - 2; after < 12 || after > 13 {
			t.Errorf("%d reads after the cancel; want 12 or 13 (a second of grace, 100ms apart)", after)
		}
		if a, r := n.count("note observer "+chrono.TextObserverAsked), n.count("note observer "+chrono.TextObserverRead); a != reads || r != reads {
			t.Errorf("%d asked and %d read notes for %d reads", a, r, reads)
		}
		stop()
		if s := p.Summary(); !strings.Contains(s, "read 14 times") && !strings.Contains(s, "read 15 times") {
			t.Errorf("summary %q", s)
		}
	})
}

// TestPollerGivesUp: reads that keep failing are recorded as errors, and
// after MaxFailures in a row the Poller stops and says why.
func TestPollerGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := &notes{}
		p := New(Config{Grace: time.Second, Note: n.note, MaxFailures: 3,
			Read: func(context.Context) (profile.Observation, error) {
				return profile.Observation{}, errors.New("401 Unauthorized")
			}})
		_, done := run(p)
		p.Observe(cancel)
		<-done
		if got := n.count("error observer reading the observer failed: 401"); got != 3 {
			t.Errorf("%d failed reads recorded; want 3:\n%s", got, strings.Join(n.lines, "\n"))
		}
		if s := p.Summary(); !strings.Contains(s, "3 reads in a row failed, the last: 401 Unauthorized") {
			t.Errorf("summary %q", s)
		}
	})
}

// TestPollerAtFirstCall: a Poller that reads inside the host's session
// makes no read before the host's first tools/call, then reads as one
// that starts at once does; its summary says where the reads went.
func TestPollerAtFirstCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := &notes{}
		reads := 0
		p := New(Config{Grace: time.Second, AtFirstCall: true, Where: "inside the host's stream", Note: n.note,
			Read: func(context.Context) (profile.Observation, error) {
				reads++
				return profile.Observation{}, nil
			}})
		stop, _ := run(p)
		time.Sleep(time.Minute)
		synctest.Wait()
		if reads != 0 {
			t.Fatalf("%d reads before the host's first call; want none", reads)
		}
		p.Observe(call)
		synctest.Wait()
		if reads != 1 {
			t.Fatalf("%d reads after the first call; want 1", reads)
		}
		stop()
		if s := p.Summary(); !strings.Contains(s, "read 1 time ") || !strings.Contains(s, "inside the host's stream") {
			t.Errorf("summary %q", s)
		}
	})
}

// TestPollerStopsWhenEnded: a read whose way to the server is gone for
// good (ErrEnded) stops the Poller at once, with a note, not an error.
func TestPollerStopsWhenEnded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := &notes{}
		reads := 0
		p := New(Config{Grace: time.Second, Note: n.note,
			Read: func(context.Context) (profile.Observation, error) {
				reads++
				return profile.Observation{}, fmt.Errorf("%w: the host closed stdin", ErrEnded)
			}})
		_, done := run(p)
		p.Observe(cancel)
		<-done
		if reads != 1 || n.count("error ") != 0 || n.count("note observer the observer is no longer read: the observer can no longer be read: the host closed stdin") != 1 {
			t.Errorf("%d reads; notes:\n%s", reads, strings.Join(n.lines, "\n"))
		}
		if s := p.Summary(); !strings.Contains(s, "reading stopped: the observer can no longer be read: the host closed stdin") {
			t.Errorf("summary %q", s)
		}
	})
}
