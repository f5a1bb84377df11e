// Package judge judges a conversation between a host and an MCP server,
// as it happens (mcpflight watch) or from a recording (mcpflight judge, a
// watch capture or check's chronologies), with the passive rule engine
// (monitor), and builds its report in check's format: a result per rule
// and side, the schema check of the server's messages, the requests still
// open when a session ended, and what the recording missed.
//
// It sees only the wire: it never acts on the conversation. Where the
// wire cannot decide, the result says so.
package judge

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/internal/ring"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/monitor"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
	"github.com/mcpflight/mcpflight/watch"
)

// Options configures a Judge.
type Options struct {
	// Target names what was watched (a command line, a URL, a file).
	Target string
	// Transport is "stdio" or "http" ("" is stdio).
	Transport string
	// Monitor configures the rules (revision, sides, windows, schema);
	// its Transport and Emit are the Judge's.
	Monitor monitor.Options
	// Strict turns every warn into a fail.
	Strict bool
	// Emit, when not nil, is told of each finding as it is made.
	Emit func(monitor.Finding)
}

// Judge judges one conversation. Its Event is a sink for the recorder
// (watch) or the reader of a capture; events come in sequence order.
type Judge struct {
	mu      sync.Mutex
	opts    Options
	m       *monitor.Monitor
	started time.Time
	// first and last are the offsets of the first and last events.
	first, last time.Duration
	events      int
	// keys routes an HTTP exchange's events to its session.
	keys *sessionKeys
	// deleted are the sessions the host ended with DELETE, oldest first,
	// still followed (see Event).
	deleted []string
	// recent are the last events, for the evidence of a finding; windows
	// the evidence kept per result, and pending the results whose window
	// still takes the events that follow their finding.
	recent  *ring.Ring[chrono.Event]
	windows map[string][]chrono.Event
	pending map[string]int
	// revisions are those the sessions spoke; server the serverInfo heard.
	revisions []string
	server    *results.Implementation
	open      []monitor.Open
	dropped   uint64
	// gaps counts the recording's own marks of what it lost
	// (watch.TextCaptureIncomplete), firstGap the first one's text.
	gaps     int
	firstGap string
	notes    []string
}

// Evidence bounds: the events before a finding and after it that its
// result keeps for its diagram.
const (
	evidenceBefore = 40
	evidenceAfter  = 8
)

// New returns a Judge.
func New(opts Options) *Judge {
	if opts.Transport == "" {
		opts.Transport = "stdio"
	}
	j := &Judge{opts: opts, started: time.Now(), recent: ring.New[chrono.Event](evidenceBefore), windows: map[string][]chrono.Event{}, pending: map[string]int{}}
	j.keys = newSessionKeys(opts.Transport)
	mo := opts.Monitor
	mo.Transport = opts.Transport
	mo.Emit = j.found
	j.m = monitor.New(mo)
	return j
}

// Event judges one event of the conversation, in the session its channel
// belongs to.
func (j *Judge) Event(ev chrono.Event) {
	j.note(ev)
	for _, r := range j.keys.route(ev) {
		j.m.Event(r.key, r.ev)
		j.keys.ended(r.ev)
		if r.key != noSession && sessionDeleted(r.ev) {
			j.deleted = append(j.deleted, r.key)
			if len(j.deleted) > keptDeleted {
				j.EndSession(j.deleted[0])
				j.deleted = j.deleted[1:]
			}
		}
	}
}

// keptDeleted is how many sessions ended by DELETE are still followed:
// what the proxy records of a session's last exchanges (a stream the
// host closed, noted when the connection goes) may come after the
// DELETE's answer, and belongs to the session, not to a new one.
const keptDeleted = 16

// sessionDeleted reports whether ev is the 2xx answer to a DELETE: the
// host ended its session (2025-11-25), which is judged and forgotten
// once keptDeleted later sessions were.
func sessionDeleted(ev chrono.Event) bool {
	return ev.Dir == chrono.In && ev.Kind == chrono.KindHTTP && strings.HasPrefix(ev.Channel, "DELETE #") && strings.HasPrefix(ev.Text, "HTTP 2")
}

// note keeps what the report needs of ev beyond the rules: the clock, the
// events around a finding, the server's name and the revisions spoken.
func (j *Judge) note(ev chrono.Event) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.events == 0 {
		j.first = ev.Offset
	}
	j.events++
	j.last = max(j.last, ev.Offset)
	j.recent.Push(ev)
	for id, left := range j.pending {
		j.windows[id] = append(j.windows[id], ev)
		if left <= 1 {
			delete(j.pending, id)
		} else {
			j.pending[id] = left - 1
		}
	}
	if ev.Dir == chrono.Harness && ev.Kind == chrono.KindError && strings.HasPrefix(ev.Text, watch.TextCaptureIncomplete) {
		if j.gaps == 0 {
			j.firstGap = ev.Text
		}
		j.gaps++
		j.m.Gap()
	}
	j.hear(ev)
}

// EventIn judges one event as session key's, whatever its channel says:
// a recording that is one session (one of check's chronologies).
func (j *Judge) EventIn(key string, ev chrono.Event) {
	j.note(ev)
	j.m.Event(key, ev)
}

// hear takes what the report's header names from the frames: the
// server's name (initialize, server/discover) and the revisions spoken.
func (j *Judge) hear(ev chrono.Event) {
	if ev.Kind != chrono.KindFrame || ev.Summary == nil || ev.Summary.Malformed != "" || ev.Truncated {
		return
	}
	if ev.Dir == chrono.In && ev.Summary.Kind == "result" && j.server == nil {
		var r struct {
			Result struct {
				ProtocolVersion string                             `json:"protocolVersion"`
				ServerInfo      *results.Implementation            `json:"serverInfo"`
				Meta            map[string]*results.Implementation `json:"_meta"`
			} `json:"result"`
		}
		if json.Unmarshal(ev.Raw, &r) == nil {
			switch {
			case r.Result.ServerInfo != nil && r.Result.ProtocolVersion != "":
				j.server = r.Result.ServerInfo
				j.revision(spec.V20251125)
			case r.Result.Meta[mcp.MetaServerInfo] != nil:
				j.server = r.Result.Meta[mcp.MetaServerInfo]
			}
		}
	}
	if ev.Dir == chrono.Out && ev.Summary.Kind == "request" && strings.Contains(string(ev.Raw), `"`+mcp.MetaProtocolVersion+`":"`+spec.V20260728+`"`) {
		j.revision(spec.V20260728)
	}
}

func (j *Judge) revision(rev string) {
	if !slices.Contains(j.revisions, rev) {
		j.revisions = append(j.revisions, rev)
	}
}

// found takes a finding from the monitor: the first of each result keeps
// the events around it as its evidence.
func (j *Judge) found(f monitor.Finding) {
	if j.opts.Emit != nil {
		j.opts.Emit(f)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	id := monitor.ResultID(f.Side, f.Rule)
	if _, kept := j.windows[id]; kept {
		return
	}
	j.windows[id] = slices.Collect(j.recent.All())
	j.pending[id] = evidenceAfter
}

// Advance tells the judge the conversation's clock has reached now (see
// monitor.Monitor.Advance).
func (j *Judge) Advance(now time.Duration) { j.m.Advance(now) }

// EndSession ends the session of key (a watched process that exited, a
// DELETE): the requests it left open are listed in the report.
func (j *Judge) EndSession(key string) {
	open := j.m.EndSession(key)
	j.mu.Lock()
	j.open = append(j.open, open...)
	j.mu.Unlock()
}

// Dropped records that the recording lost n events (a full queue): the
// report says the capture is incomplete.
func (j *Judge) Dropped(n uint64) {
	j.mu.Lock()
	j.dropped = n
	j.mu.Unlock()
}

// Note adds a sentence to the report's notes.
func (j *Judge) Note(format string, args ...any) {
	j.mu.Lock()
	j.notes = append(j.notes, fmt.Sprintf(format, args...))
	j.mu.Unlock()
}

// Report ends every session still open and returns the conversation's
// report.
func (j *Judge) Report() *results.Report {
	// The monitor's state first: it reports findings to j.found, which
	// takes j.mu, so j.mu is never held while the monitor's lock is.
	open := j.m.End()
	res := j.m.Results(nil)
	schema := j.m.Schema()
	counts := j.m.Counts()
	j.mu.Lock()
	defer j.mu.Unlock()
	j.open = append(j.open, open...)
	rep := &results.Report{Target: j.opts.Target, Transport: j.opts.Transport, Role: results.RoleConversation,
		Strict: j.opts.Strict, Started: j.started, Duration: j.last - j.first, Counts: map[verdict.Verdict]int{},
		Server: j.server, Revisions: slices.Clone(j.revisions), Results: res, Schema: schema}
	rep.Version = strings.Join(rep.Revisions, ", ")
	if rep.Version == "" {
		rep.Version = "unknown (no initialize or 2026-07-28 request seen)"
	}
	for i := range rep.Results {
		r := &rep.Results[i]
		r.Transport = j.opts.Transport
		r.Events = j.windows[r.ID]
		if j.opts.Strict && r.Outcome.Verdict == verdict.Warn {
			r.Outcome.Verdict = verdict.Fail
		}
		rep.Counts[r.Outcome.Verdict]++
	}
	rep.Teardown = results.TeardownGrade{Verdict: verdict.Skip, Summary: "not graded: the host ends its server, not mcpflight"}
	switch {
	case j.dropped > 0:
		rep.Notes = append(rep.Notes, fmt.Sprintf("%s: %d pieces were dropped when the recording fell behind, so a rule may have missed what they held", watch.TextCaptureIncomplete, j.dropped))
	case j.gaps > 0:
		rep.Notes = append(rep.Notes, fmt.Sprintf("%s: the recording marks %d gaps, so a rule may have missed what they held (first: %s)", watch.TextCaptureIncomplete, j.gaps, chrono.Sanitize(j.firstGap, false)))
	}
	if len(j.open) > 0 {
		rep.Notes = append(rep.Notes, openNote(j.open))
	}
	if n := counts[monitor.CountHandlersUndecided]; n > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the observer's readings could not tell whether the handlers of %d cancelled calls stopped: the counts fit more than one end (docs/observer.md)", n))
	}
	if n := counts[monitor.CountGapUndecided]; n > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("findings not made after the recording lost frames: %d, since their rules judge by what the record lacks (a response for an ID never sent, a token never issued), which a lost frame would fake", n))
	}
	if n := counts[monitor.CountForgotten]; n > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("answers to forgotten requests: %d responses or progress notifications named requests that ended too long before for the monitor to remember, and were not judged", n))
	}
	rep.Notes = append(rep.Notes, fmt.Sprintf("%d events judged: %d requests, %d cancels (%d crossings within the window), %d progress notifications, %d tasks",
		j.events, counts[monitor.CountRequests], counts[monitor.CountCancels], counts[monitor.CountCrossings], counts[monitor.CountProgress], counts[monitor.CountTasks]))
	rep.Notes = append(rep.Notes, j.notes...)
	return rep
}

// openNote lists the requests still open when their session ended: not
// violations (the host may have stopped its server), but never silently
// dropped.
func openNote(open []monitor.Open) string {
	var parts []string
	for i, o := range open {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(open)-5))
			break
		}
		p := fmt.Sprintf("%s's request %s (%s, #%d)", o.Side, chrono.Sanitize(o.ID, false), chrono.Sanitize(o.Method, false), o.Seq)
		if o.Cancelled {
			p += ", cancelled"
		}
		parts = append(parts, p)
	}
	return fmt.Sprintf("%d requests were still open when their session ended (not a violation): %s", len(open), strings.Join(parts, "; "))
}
