package explore

import (
	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/profile"
)

// SessionInfo describes one session of a history.
type SessionInfo struct {
	// Label names the session in the history: "s2" is the first session
	// of slot 2, "s2.3" its third (after two closes).
	Label     string `json:"label"`
	Slot      int    `json:"slot"`
	Transport string `json:"transport"`
	// Control is set when the session used the control extension.
	Control bool `json:"control"`
}

// History is the chronology of one trial: the events of all its sessions
// on one clock (their logs share a start) and in one sequence. Each
// event's Channel is prefixed with its session's label ("s1 stdout"), so
// that the history renders as one sequence diagram (report.Sequence,
// mcpflight show) and reads back from JSON Lines.
type History struct {
	Events   []chrono.Event
	Sessions []SessionInfo
	// origins say, per event, which session recorded it and on which of
	// its channels.
	origins []origin
	// capped names the sessions whose chronology reached a cap.
	capped []string
	// observer is the profile's observer when the explorer read it
	// (docs/observer.md): which requests are its reads, and how their
	// answers give the counts.
	observer *profile.Observer
}

type origin struct {
	session int
	channel string
}

// merge builds the history of a trace: a k-way merge of the sessions'
// logs by offset, each log's own order kept, ties broken by session.
func merge(tr *trace) *History {
	logs := make([][]chrono.Event, len(tr.sessions))
	h := &History{observer: tr.observer}
	total := 0
	for i, st := range tr.sessions {
		logs[i] = st.log.Snapshot()
		total += len(logs[i])
		h.Sessions = append(h.Sessions, SessionInfo{Label: st.label, Slot: st.slot, Transport: st.transport, Control: st.control})
		if c := st.log.CapReached(); c != "" {
			h.capped = append(h.capped, st.label+": "+c)
		}
	}
	h.Events = make([]chrono.Event, 0, total)
	h.origins = make([]origin, 0, total)
	next := make([]int, len(logs))
	for len(h.Events) < total {
		best := -1
		for i, evs := range logs {
			if next[i] >= len(evs) {
				continue
			}
			if best < 0 || evs[next[i]].Offset < logs[best][next[best]].Offset {
				best = i
			}
		}
		e := logs[best][next[best]]
		next[best]++
		h.origins = append(h.origins, origin{session: best, channel: e.Channel})
		e.Seq = uint64(len(h.Events)) + 1
		e.Channel = tr.sessions[best].label + " " + e.Channel
		h.Events = append(h.Events, e)
	}
	return h
}

// event returns the event with sequence number seq, or false.
func (h *History) event(seq uint64) (chrono.Event, bool) {
	if seq == 0 || seq > uint64(len(h.Events)) {
		return chrono.Event{}, false
	}
	return h.Events[seq-1], true
}
