package runner

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/peer"
)

// Cases share a stdio session one after another (sharing.go), and those
// that leave tasks or cancelled requests behind (probe.Case.LeavesTasks,
// LeavesCancelled) leave work running on it, so a late frame of an earlier
// case may come while a later case uses the session. Each such frame names
// what it is about: a response its request's ID, a progress notification
// its token, a task's status or a related-task _meta its task ID. An
// attribution learns, from the frames that pass through the session's
// stand-in log, which use of the session sent each request ID and progress
// token and first heard of each task, and sets aside an inbound frame that
// names an earlier use's: the chronology of the case that uses the session
// now gets a note in its place, naming the frame and the case it belongs
// to, so that no judge of that case takes it for its own. A frame that
// names nothing known is the current use's, as it would be on a session of
// its own.

// asideChannel is the channel of the notes that stand for set-aside
// frames.
const asideChannel = "set-aside"

// attribution tells which use of a shared session each frame is about.
type attribution struct {
	mu sync.Mutex
	// users holds the case of each use of the session, in order; "" for
	// a wait between two cases.
	users []string
	// ids, tokens and tasks map the request IDs and progress tokens the
	// session sent and the task IDs it heard of, as their summary spells
	// them, to the use that did; peerIDs the IDs of the requests the
	// peer sent, to the use they came in.
	ids, tokens, tasks, peerIDs map[string]int
}

// newAttribution returns the attribution of a session opened by the case
// named first.
func newAttribution(first string) *attribution {
	return &attribution{users: []string{first}, ids: map[string]int{}, tokens: map[string]int{}, tasks: map[string]int{}, peerIDs: map[string]int{}}
}

// begin starts the next use of the session: by the case named caseID, or
// a wait between cases when caseID is "".
func (a *attribution) begin(caseID string) {
	a.mu.Lock()
	a.users = append(a.users, caseID)
	a.mu.Unlock()
}

// filter is the stand-in's chrono.Log filter: it learns from every frame
// and returns a note in place of an inbound frame about an earlier use.
func (a *attribution) filter(e chrono.Event) chrono.Event {
	if e.Dir == chrono.Harness && e.Kind == chrono.KindState {
		return a.filterState(e)
	}
	if e.Kind != chrono.KindFrame || e.Summary == nil || e.Summary.Malformed != "" {
		return e
	}
	s := e.Summary
	a.mu.Lock()
	defer a.mu.Unlock()
	now := len(a.users) - 1
	if e.Dir == chrono.Out {
		if s.Kind == jsonrpc.KindRequest.String() && s.ID != "" {
			a.ids[s.ID] = now
		}
		if s.Token != "" {
			a.tokens[s.Token] = now
		}
		return e
	}
	if e.Dir != chrono.In {
		return e
	}
	// A notifications/cancelled that comes in names a request the peer
	// sent (CAN-1), so its requestId is of the peer's requests.
	owner, by := -1, ""
	if u, ok := a.ids[s.ID]; ok && s.ID != "" && s.Kind != jsonrpc.KindRequest.String() {
		owner, by = u, "the response to its request "+s.ID
	} else if u, ok := a.tokens[s.Token]; ok && s.Token != "" {
		owner, by = u, "its progress token "+s.Token
	} else if u, ok := a.peerIDs[s.RequestID]; ok && s.RequestID != "" {
		owner, by = u, "the peer's request "+s.RequestID+" to it"
	}
	named := namedTasks(e)
	for _, t := range named {
		if u, ok := a.tasks[t]; ok && owner < 0 {
			owner, by = u, "its task "+t
		}
	}
	if owner < 0 {
		owner = now
	}
	if s.Kind == jsonrpc.KindRequest.String() && s.ID != "" {
		a.peerIDs[s.ID] = owner
	}
	for _, t := range named {
		if _, ok := a.tasks[t]; !ok {
			a.tasks[t] = owner
		}
	}
	if owner == now {
		return e
	}
	return chrono.Event{Dir: chrono.Harness, Channel: asideChannel, Kind: chrono.KindNote, Text: fmt.Sprintf(
		"set aside: %s, which is about %s (%s)", describeEvent(e), a.user(owner), by)}
}

// user names use i of the session, for a note; a.mu is held.
func (a *attribution) user(i int) string {
	if a.users[i] == "" {
		return "no case: the session first heard of it while it waited between cases"
	}
	return "case " + a.users[i] + ", an earlier user of this session"
}

// filterState sets aside a state change of an earlier use's request (a
// late response to it), which the session records on the channel
// "request <ID>".
func (a *attribution) filterState(e chrono.Event) chrono.Event {
	id, ok := strings.CutPrefix(e.Channel, "request ")
	if !ok {
		return e
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	owner, known := a.ids[id]
	if !known || owner == len(a.users)-1 {
		return e
	}
	return chrono.Event{Dir: chrono.Harness, Channel: asideChannel, Kind: chrono.KindNote, Text: fmt.Sprintf(
		"set aside: request %s went from %s to %s; it is about %s", id, e.From, e.To, a.user(owner))}
}

// namedTasks returns the task IDs an inbound frame names: a
// CreateTaskResult's or a Task result's, a task status notification's,
// or its related-task _meta.
func namedTasks(e chrono.Event) []string {
	m, err := e.Message()
	if err != nil {
		return nil
	}
	var named []string
	add := func(raw json.RawMessage) {
		if len(raw) == 0 {
			return
		}
		if id, ok := peer.RelatedTaskID(raw); ok && id != "" {
			named = append(named, id)
		}
		var direct struct {
			TaskID *string `json:"taskId"`
			Task   *struct {
				TaskID *string `json:"taskId"`
			} `json:"task"`
		}
		if json.Unmarshal(raw, &direct) != nil {
			return
		}
		if direct.TaskID != nil && *direct.TaskID != "" {
			named = append(named, *direct.TaskID)
		}
		if direct.Task != nil && direct.Task.TaskID != nil && *direct.Task.TaskID != "" {
			named = append(named, *direct.Task.TaskID)
		}
	}
	switch m.Kind {
	case jsonrpc.KindResult:
		add(m.Result)
	case jsonrpc.KindRequest, jsonrpc.KindNotification:
		add(m.Params)
	}
	return named
}

// setAside reports whether e stands for a frame an attribution set aside.
func setAside(e chrono.Event) bool {
	return e.Dir == chrono.Harness && e.Channel == asideChannel
}
