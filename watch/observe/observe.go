// Package observe reads a server's observer (docs/observer.md) during a
// watched conversation, when the user asks for it (watch --observer), and
// records each reading in the conversation's chronology, where the rules
// (package monitor, cancelled-handler-stops) judge whether a cancelled
// call's handler stopped: the one question about a cancel the wire cannot
// answer.
//
// Reading adds requests to the server that the host never sent, so it
// happens only around what needs it: once at the start (unless
// Config.AtFirstCall), once when the host starts a tools/call (the
// reading before a cancel that the rule counts from), and then every
// Interval for Grace after each cancel of a tools/call. The Poller never
// runs on the forwarding path: Observe only sets a flag.
package observe

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/monitor"
	"github.com/mcpflight/mcpflight/profile"
)

// Reader reads the observer once: on a session of mcpflight's own, or
// inside the host's (watch.Injector). An error that wraps ErrEnded says
// no read can be made any more.
type Reader func(ctx context.Context) (profile.Observation, error)

// ErrEnded is wrapped by a Reader's error when the way to the server is
// gone for good, such as the host's session a read is sent in: the
// Poller then stops at once, and says so as a note, not an error.
var ErrEnded = errors.New("the observer can no longer be read")

// Config configures a Poller.
type Config struct {
	Read Reader
	// Note records a harness note in the conversation's chronology
	// (watch.Recorder.Note).
	Note func(kind chrono.Kind, channel, text string)
	// Grace is how long after a cancel the observer is read (the
	// monitor's grace, past which a handler still running is a finding);
	// Interval the pause between reads (default a tenth of Grace).
	Grace, Interval time.Duration
	// MaxFailures is how many reads in a row may fail before the Poller
	// stops reading (default 3).
	MaxFailures int
	// AtFirstCall makes the first read wait for the host's first
	// tools/call instead of being made at once: a read inside the host's
	// session must wait until the host has opened it.
	AtFirstCall bool
	// Where says where the reads go, for Summary; "on a session of its
	// own, that the host never sees" if empty.
	Where string
}

// Poller reads the observer when the conversation needs it.
type Poller struct {
	cfg  Config
	wake chan struct{}
	mu   sync.Mutex
	// base is set when a call started and no read has been made since;
	// until is when the reads that follow the latest cancel end.
	base  bool
	until time.Time
	// reads and failures count the reads made and failed; stopped is
	// the reason the Poller gave up, "" while it reads.
	reads, failures int
	stopped         string
}

// New returns a Poller; Run reads until its context ends.
func New(cfg Config) *Poller {
	if cfg.Interval <= 0 {
		cfg.Interval = cfg.Grace / 10
	}
	if cfg.Interval <= 0 {
		cfg.Interval = 100 * time.Millisecond
	}
	if cfg.MaxFailures <= 0 {
		cfg.MaxFailures = 3
	}
	if cfg.Where == "" {
		cfg.Where = "on a session of its own, that the host never sees"
	}
	// The first read is at once, unless it must wait for the host: the
	// reading a first cancel counts from, and the session it is made on
	// opened before the host needs it.
	return &Poller{cfg: cfg, wake: make(chan struct{}, 1), base: !cfg.AtFirstCall}
}

// Observe takes what the conversation did (monitor.Options.Observe). It
// never blocks: it is called from the judge's goroutine.
func (p *Poller) Observe(a monitor.Activity) {
	if a.Side != monitor.Client || a.Method != mcp.MethodToolsCall {
		return
	}
	p.mu.Lock()
	switch a.Kind {
	case monitor.ActRequest:
		p.base = true
	case monitor.ActCancel:
		p.until = time.Now().Add(p.cfg.Grace + 2*p.cfg.Interval)
	default:
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Run reads the observer as the conversation needs until ctx ends.
func (p *Poller) Run(ctx context.Context) {
	tick := time.NewTimer(p.cfg.Interval)
	defer tick.Stop()
	for {
		if p.due() && !p.read(ctx) {
			return
		}
		tick.Reset(p.cfg.Interval)
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		case <-tick.C:
		}
	}
}

// due reports whether a read is wanted now, and takes the base request.
func (p *Poller) due() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.base {
		p.base = false
		return true
	}
	return time.Now().Before(p.until)
}

// read reads the observer once and records it; false once the Poller
// gives up.
func (p *Poller) read(ctx context.Context) bool {
	p.cfg.Note(chrono.KindNote, chrono.ChannelObserver, chrono.TextObserverAsked)
	obs, err := p.cfg.Read(ctx)
	if ctx.Err() != nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if errors.Is(err, ErrEnded) {
		p.stopped = err.Error()
		p.cfg.Note(chrono.KindNote, chrono.ChannelObserver, "the observer is no longer read: "+p.stopped)
		return false
	}
	if err != nil {
		p.failures++
		p.cfg.Note(chrono.KindError, chrono.ChannelObserver, "reading the observer failed: "+err.Error())
		if p.failures >= p.cfg.MaxFailures {
			p.stopped = fmt.Sprintf("%d reads in a row failed, the last: %v", p.failures, err)
			p.cfg.Note(chrono.KindError, chrono.ChannelObserver, "the observer is no longer read: "+p.stopped)
			return false
		}
		return true
	}
	p.failures = 0
	p.reads++
	p.cfg.Note(chrono.KindNote, chrono.ChannelObserver, chrono.TextObserverRead+obs.String())
	return true
}

// Summary says how the observer was read, for the report's notes.
func (p *Poller) Summary() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	times := "times"
	if p.reads == 1 {
		times = "time"
	}
	s := fmt.Sprintf("the observer was read %d %s (watch --observer): each read is a request of mcpflight's own, %s", p.reads, times, p.cfg.Where)
	if p.stopped != "" {
		s += "; reading stopped: " + p.stopped
	}
	return s
}
