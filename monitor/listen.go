package monitor

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/verdict"
)

// Subscriptions (2026-07-28 basic/patterns/subscriptions): a
// subscriptions/listen request opens a stream of the notifications its
// filter asks for. Its acknowledgement is the first message carrying its
// ID (SUB-2); every notification of it carries that ID in _meta (SUB-5);
// only what it asked for comes (SUB-1); no log message comes on it
// (LOG-44, in logMessage); and a subscription the server ends gets its
// result before the stream closes (SUB-7). A notification belongs to a
// subscription by the stream it came on (Streamable HTTP: the listen's
// response stream) or, over stdio, by the subscription ID it carries.

// maxFilterEntries bounds the task IDs and resource URIs a subscription's
// filter is kept with; past it, what the subscription asked for is not
// judged.
const maxFilterEntries = 4096

// subscription is one subscriptions/listen in flight.
type subscription struct {
	filter listenFilter
	// unread: the filter could not be read (or was too long to keep), so
	// SUB-1 is not judged.
	unread bool
	// acked is set by its acknowledgement; early is set once a message
	// before it was reported.
	acked, early bool
}

// listenFilter is the notifications filter of subscriptions/listen, with
// the tasks extension's taskIds.
type listenFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged"`
	PromptsListChanged    bool     `json:"promptsListChanged"`
	ResourcesListChanged  bool     `json:"resourcesListChanged"`
	ResourceSubscriptions []string `json:"resourceSubscriptions"`
	TaskIDs               []string `json:"taskIds"`
}

// listenOpened starts the record of a subscriptions/listen the client
// sent (2026-07-28), with the filter raw it asked for.
func (s *session) listenOpened(r *request, raw json.RawMessage) {
	sub := &subscription{}
	if json.Unmarshal(raw, &sub.filter) != nil || len(sub.filter.ResourceSubscriptions)+len(sub.filter.TaskIDs) > maxFilterEntries {
		sub.unread, sub.filter = true, listenFilter{}
	}
	r.sub = sub
	s.listens++
}

// listenAnswered takes the response to subscriptions/listen r: its
// result ends the subscription; an error opened none.
func (s *session) listenAnswered(r *request, ev chrono.Event, isError bool) {
	if isError {
		s.listenEnded(r, ev, "")
		return
	}
	s.listenEnded(r, ev, "its result")
}

// listenEnded takes the end of subscription r, by how: its result, or
// the server's notifications/cancelled for it. A subscription the server
// ended without its acknowledgement never had one (SUB-2). how is ""
// when nothing is judged: the listen was refused, the client cancelled
// it (after which the server sends nothing more for it), or the server
// closed its stream (streamEnded).
func (s *session) listenEnded(r *request, ev chrono.Event, how string) {
	sub := r.sub
	if sub == nil {
		return
	}
	r.sub = nil
	s.listens--
	if how == "" {
		return
	}
	s.exercise(RuleListenEnd, Server)
	s.exercise(RuleListenAck, Server)
	if !sub.acked && !sub.early {
		s.find(RuleListenAck, Server, verdict.Req("SUB-2"), ev.Seq, false,
			"subscription %s ended with %s without notifications/subscriptions/acknowledged", r.id, how)
	}
}

// subscriptionOf is the subscription a server message belongs to: the
// listen whose response stream it came on (Streamable HTTP), else the
// listen in flight its _meta subscription ID names; onStream says which.
func (s *session) subscriptionOf(ev chrono.Event, rawID json.RawMessage) (r *request, onStream bool) {
	if s.http() {
		if r := s.streams[trimSSE(ev.Channel)]; r != nil && r.sub != nil {
			return r, true
		}
	}
	return s.listenNamed(rawID), false
}

// listenNamed is the subscription in flight whose ID rawID is, nil for
// none.
func (s *session) listenNamed(rawID json.RawMessage) *request {
	if rawID == nil {
		return nil
	}
	id, err := jsonrpc.ParseID(rawID)
	if err != nil {
		return nil
	}
	if r := s.reqs[Client][id.Key()]; r != nil && r.sub != nil {
		return r
	}
	return nil
}

// soleUnacked is the one subscription in flight not yet acknowledged,
// nil when there is none or more than one.
func (s *session) soleUnacked() *request {
	var found *request
	for _, r := range s.reqs[Client] {
		if r.sub != nil && !r.sub.acked {
			if found != nil {
				return nil
			}
			found = r
		}
	}
	return found
}

// subscriptionNotice judges a notification the server sent while a
// subscription is in flight: whether it belongs to one, carries its ID
// (SUB-5), comes after its acknowledgement (SUB-2) and is of a kind it
// asked for (SUB-1). Log messages are logMessage's (LOG-44); the
// server's notifications/cancelled of a listen ends it (CAN-41).
func (s *session) subscriptionNotice(ev chrono.Event, m *jsonrpc.Message) {
	if m.Method == mcp.NotificationCancelled || m.Method == mcp.NotificationMessage {
		return
	}
	var p struct {
		Meta struct {
			SubscriptionID json.RawMessage `json:"io.modelcontextprotocol/subscriptionId"`
		} `json:"_meta"`
		TaskID string `json:"taskId"`
		URI    string `json:"uri"`
	}
	_ = json.Unmarshal(m.Params, &p)
	r, onStream := s.subscriptionOf(ev, p.Meta.SubscriptionID)
	ack := m.Method == mcp.NotificationSubscriptionsAcknowledged
	switch {
	case onStream:
		s.exercise(RuleListenID, Server)
		if s.listenNamed(p.Meta.SubscriptionID) != r {
			s.find(RuleListenID, Server, verdict.Req("SUB-5"), ev.Seq, false,
				"%s on the stream of subscription %s carries %s: a subscription's notifications carry its ID", m.Method, r.id, idMeta(p.Meta.SubscriptionID))
		}
	case s.http():
		return // on another stream: not the subscription's
	case ack || m.Method == mcp.NotificationTasks:
		// Over stdio these two come only on a subscription.
		s.exercise(RuleListenID, Server)
		if p.Meta.SubscriptionID == nil {
			s.find(RuleListenID, Server, verdict.Req("SUB-5"), ev.Seq, false,
				"%s carries no io.modelcontextprotocol/subscriptionId: over stdio only that ID ties it to its subscription", m.Method)
		}
		if r == nil && ack && p.Meta.SubscriptionID == nil {
			r = s.soleUnacked() // the acknowledgement of the one subscription waiting for one
		}
	}
	if r == nil {
		return
	}
	sub := r.sub
	s.exercise(RuleListenAck, Server)
	if ack {
		sub.acked = true
		return
	}
	if !sub.acked && !sub.early {
		sub.early = true
		s.find(RuleListenAck, Server, verdict.Req("SUB-2"), ev.Seq, false,
			"%s for subscription %s came before its notifications/subscriptions/acknowledged", m.Method, r.id)
	}
	if asked, known := sub.asked(m.Method, p.TaskID, p.URI); known {
		s.exercise(RuleListenRequested, Server)
		if !asked {
			s.find(RuleListenRequested, Server, verdict.Req("SUB-1"), ev.Seq, false,
				"%s%s on subscription %s, whose filter did not ask for it%s", m.Method, subject(m.Method, p.TaskID, p.URI), r.id, sub.filterText(m.Method))
		}
	}
}

// asked reports whether the subscription's filter asked for a
// notification of method (about task taskID, resource uri); known is
// false for a kind the filter has no field for, or a filter not read.
func (sub *subscription) asked(method, taskID, uri string) (asked, known bool) {
	if sub.unread {
		return false, false
	}
	f := sub.filter
	switch method {
	case mcp.NotificationToolsListChanged:
		return f.ToolsListChanged, true
	case mcp.NotificationPromptsListChanged:
		return f.PromptsListChanged, true
	case mcp.NotificationResourcesListChanged:
		return f.ResourcesListChanged, true
	case mcp.NotificationResourcesUpdated:
		return slices.Contains(f.ResourceSubscriptions, uri), true
	case mcp.NotificationTasks:
		return slices.Contains(f.TaskIDs, taskID), true
	}
	return false, false
}

// filterText says what the filter asked for, for a notification of
// method it did not.
func (sub *subscription) filterText(method string) string {
	switch method {
	case mcp.NotificationTasks:
		if sub.filter.TaskIDs == nil {
			return " (no taskIds)"
		}
		return " (taskIds " + quote(strings.Join(sub.filter.TaskIDs, ", ")) + ")"
	case mcp.NotificationResourcesUpdated:
		return " (resourceSubscriptions " + quote(strings.Join(sub.filter.ResourceSubscriptions, ", ")) + ")"
	}
	return ""
}

// subject names what a notification of method is about: its task or
// its resource.
func subject(method, taskID, uri string) string {
	switch method {
	case mcp.NotificationTasks:
		return " for task " + quote(taskID)
	case mcp.NotificationResourcesUpdated:
		return " for " + quote(uri)
	}
	return ""
}

// idMeta describes the subscription ID a notification carries.
func idMeta(raw json.RawMessage) string {
	if raw == nil {
		return "no io.modelcontextprotocol/subscriptionId"
	}
	return "io.modelcontextprotocol/subscriptionId " + quote(string(raw))
}

// serverEndedStream is how the recorders say the server ended an event
// stream before its request's response: the checker's transport ("stream
// ended", at the end of the body) and watch's proxy.
func serverEndedStream(text string) bool {
	return text == "stream ended" || strings.HasPrefix(text, "the server ended the response stream of request ")
}

// streamEnded judges the end of an HTTP event stream the server closed
// (Streamable HTTP): a subscription whose stream the server closes
// before its result was ended without the graceful result (SUB-7, a
// SHOULD; CAN-41's notifications/cancelled the schema scopes to stdio,
// ambiguity A-11). A stream that failed, or one the client closed (its
// cancel), is not the server ending it.
func (s *session) streamEnded(ev chrono.Event) {
	if !s.is2026() || !serverEndedStream(ev.Text) {
		return
	}
	r := s.streams[trimSSE(ev.Channel)]
	if r == nil || r.sub == nil || r.responded {
		return // no subscription, or one already over (the client's cancel ended it)
	}
	s.exercise(RuleListenEnd, Server)
	s.find(RuleListenEnd, Server, verdict.Req("SUB-7"), ev.Seq, false,
		"the server closed the stream of subscription %s without its result: a subscription the server ends gets a completion result first", r.id)
	s.listenEnded(r, ev, "")
}
