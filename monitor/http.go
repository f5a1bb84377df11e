package monitor

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// The Streamable HTTP rules judge what an exchange shows beyond its
// messages: its heads (the status, the session ID, the headers of an
// SSE response), the events of each SSE stream (their IDs, and which
// request's messages a stream carries) and how each stream ended.
//
// They read the texts the recorders give those events, which
// transport.HTTP (check, explore) and watch.Proxy (watch) write alike:
//
//   - a head is its request line or status, then "Name: value" pairs
//     joined by "; ": "HTTP 200 Content-Type: text/event-stream;
//     X-Accel-Buffering: no", "GET /mcp Mcp-Session-Id: a1; Last-Event-Id:
//     1-3" (watch), "GET Accept: text/event-stream; Last-Event-Id: 1-3"
//     (the checker's request without a body); header names are matched
//     without regard to case;
//   - an SSE event, a frame when it carried a message and an HTTP event
//     otherwise, on channel "SSE POST #n" or "SSE GET #n", is "sse", then
//     " id=ID" when it had an id field, its event name, retry and
//     comments, and " (empty data: priming)" for a data field that
//     carried no message; an ID is read up to the first of those marks,
//     so an ID that holds one is cut there;
//   - a stream's end is a harness event on its channel: "stream ended"
//     (or watch's "the server ended the response stream of request …")
//     when the server ended it; a note that the client closed or dropped
//     it, or an error, when something else did.
//
// Where those texts cannot decide (a head cut at chrono.MaxText, an
// event ID never seen before a resumption names it, a recording that
// ends before a stream does), nothing is judged.

// httpOnly reports whether rule judges only Streamable HTTP exchanges.
func httpOnly(rule string) bool {
	switch rule {
	case RuleStreamPrimed, RuleEventIDs, RuleStreamRouting, RuleReplayOwnStream, RuleStreamEnds, RuleUnbuffered,
		RuleStateless, RuleSessionIDVisible, RuleMethodNotFound:
		return true
	}
	return false
}

// Bounds of what the HTTP rules remember.
const (
	// maxHTTPStreams bounds the streams a session follows at once; past
	// it the oldest is forgotten (its end then goes unjudged).
	maxHTTPStreams = 1024
	// maxEventIDs bounds the SSE event IDs a session keeps for HTTP-40
	// and for resumptions to name; past it the oldest are forgotten.
	maxEventIDs = 1 << 16
)

// httpStreams is what a session's Streamable HTTP rules keep.
type httpStreams struct {
	// byExchange are the streams followed, by exchange ("POST #3",
	// "GET #2"), and order the order they were opened in.
	byExchange map[string]*sseStream
	order      []string
	// ids are the SSE event IDs seen (2025-11-25); versions the revision
	// each exchange's request said it speaks (its MCP-Protocol-Version
	// header; 2025-11-25 for an initialize), by exchange.
	ids      *boundedMap[eventSighting]
	versions *boundedMap[string]
	// reported are the findings made once per session (a property of
	// the server, not of one exchange), by rule and requirement.
	reported map[string]bool
}

// sseStream is one exchange's SSE stream.
type sseStream struct {
	exchange string
	// resumes is, for a GET with a Last-Event-ID the session saw, the
	// exchange of the stream it resumes (the first of a chain of
	// resumptions), and resumeAfter where the event it names was seen;
	// listen is set on a GET stream that resumes no request's stream.
	resumes     string
	resumeAfter uint64
	listen      bool
	// started is set once an event (not a comment) came on it; ids once
	// one carried an event ID.
	started, ids bool
	// answerSeq and answerAt are where the response to the POST's
	// request came on this stream (0: not yet).
	answerSeq uint64
	answerAt  time.Duration
}

// post reports whether the stream answers a POST.
func (st *sseStream) post() bool { return strings.HasPrefix(st.exchange, "POST #") }

// hstreams is the session's HTTP state, made on first use.
func (s *session) hstreams() *httpStreams {
	if s.hs == nil {
		s.hs = &httpStreams{byExchange: map[string]*sseStream{}, ids: newBoundedMap[eventSighting](maxEventIDs),
			versions: newBoundedMap[string](maxHTTPStreams), reported: map[string]bool{}}
	}
	return s.hs
}

// stream returns the stream of exchange, following it from now on.
func (h *httpStreams) stream(exchange string) *sseStream {
	if st := h.byExchange[exchange]; st != nil {
		return st
	}
	for len(h.byExchange) >= maxHTTPStreams && len(h.order) > 0 {
		delete(h.byExchange, h.order[0])
		h.order = h.order[1:]
	}
	st := &sseStream{exchange: exchange}
	h.byExchange[exchange] = st
	h.order = append(h.order, exchange)
	if len(h.order) > 2*maxHTTPStreams {
		// Drop the names of streams already forgotten.
		kept := h.order[:0]
		for _, k := range h.order {
			if h.byExchange[k] != nil {
				kept = append(kept, k)
			}
		}
		h.order = kept
	}
	return st
}

// forget stops following the stream of exchange.
func (h *httpStreams) forget(exchange string) { delete(h.byExchange, exchange) }

// once reports whether the finding of rule citing req is the session's
// first, and remembers that it was made.
func (h *httpStreams) once(rule, req string) bool {
	k := rule + " " + req
	if h.reported[k] {
		return false
	}
	h.reported[k] = true
	return true
}

// httpEvent judges what an event of a Streamable HTTP exchange shows to
// the stream rules, and reports whether the other rules are to skip it:
// a message a resumed stream replayed from another request's stream is
// judged as such (HTTP-44), not as a second response or progress, and an
// event a resumption delivers again after the recorder saw it go by
// (redelivered) is one event.
func (s *session) httpEvent(ev chrono.Event) (skip bool) {
	sse := strings.HasPrefix(ev.Channel, "SSE ")
	switch {
	case ev.Dir == chrono.Harness:
		if sse {
			s.streamEnd(ev)
		}
	case ev.Kind == chrono.KindFrame && ev.Dir == chrono.In:
		if ev.Summary != nil && ev.Summary.Kind == "error" {
			s.methodNotFound(ev)
		}
		if sse {
			return s.sseEvent(ev)
		}
	case sse && ev.Kind == chrono.KindHTTP && ev.Dir == chrono.In:
		return s.sseEvent(ev)
	case ev.Kind == chrono.KindHTTP && ev.Dir == chrono.Out:
		s.requestHead(ev)
	case ev.Kind == chrono.KindFrame && ev.Dir == chrono.Out && !sse:
		s.requestVersion(ev)
	case ev.Kind == chrono.KindHTTP && ev.Dir == chrono.In && strings.HasPrefix(ev.Text, "HTTP "):
		s.responseHead(ev)
	}
	return false
}

// requestHead takes a request's head: under 2026-07-28 the
// MCP-Protocol-Version a request without a body (a GET, a DELETE) names
// tells the session's revision; under 2025-11-25 a GET with a
// Last-Event-ID resumes the stream that carried that event ID, and one
// without opens the GET stream.
func (s *session) requestHead(ev chrono.Event) {
	v := s.requestVersion(ev)
	if s.rev == "" && v == spec.V20260728 {
		s.learn(spec.V20260728)
	}
	if !strings.HasPrefix(ev.Channel, "GET #") || s.exchange2026(ev.Channel) {
		return
	}
	h := s.hstreams()
	st := h.stream(ev.Channel)
	last, known := header(ev.Text, mcp.HeaderLastEventID)
	switch known {
	case headerAbsent:
		st.listen = true
	case headerPresent:
		// A Last-Event-ID the session never saw names no stream the
		// wire shows: what the resumption carries is not judged.
		if seen, ok := h.ids.get(last); ok {
			st.resumes, st.resumeAfter = seen.origin, seen.seq
			st.listen = !strings.HasPrefix(seen.origin, "POST #")
		}
	}
}

// requestVersion records the revision a request's head says it speaks,
// for the rules that judge its exchange's answer (exchange2026): its
// MCP-Protocol-Version header, read from watch's head of the request or
// from the checker's request frame, whose text is its head ("POST
// Accept: …"); an initialize speaks 2025-11-25. A head without the header
// leaves it unknown, so that a channel name a new connection numbers
// again does not keep the last one's. It returns the revision, "" when
// unknown.
func (s *session) requestVersion(ev chrono.Event) string {
	method, _, _ := strings.Cut(ev.Channel, " #")
	h := s.hstreams()
	head := ev.Kind == chrono.KindHTTP || strings.HasPrefix(ev.Text, method+" ")
	v := ""
	if head {
		if hv, known := header(ev.Text, mcp.HeaderProtocolVersion); known == headerPresent {
			v = hv
		}
	}
	if ev.Kind == chrono.KindFrame && ev.Summary != nil && ev.Summary.Method == mcp.MethodInitialize {
		v = spec.V20251125
	}
	if head || v != "" {
		h.versions.put(ev.Channel, v)
	}
	return v
}

// exchange2026 reports whether exchange is judged by the rules of
// 2026-07-28: its request said so, or said nothing and the session
// speaks it. A recording can hold a probe of the other revision in one
// session (the checker's era detection sends server/discover before an
// initialize): the revision an exchange's request speaks decides what
// its answer owes.
func (s *session) exchange2026(exchange string) bool {
	if s.hs != nil {
		switch v, _ := s.hs.versions.get(exchange); v {
		case spec.V20260728:
			return true
		case "":
		default:
			return false
		}
	}
	return s.is2026()
}

// responseHead judges a response's status and headers: under 2025-11-25
// a session ID holds only visible ASCII (HTTP-48); under 2026-07-28 no
// response mints or echoes one, a GET or DELETE is not served
// (HTTP-107), and an SSE response says X-Accel-Buffering: no (HTTP-92);
// the POST of a notification the server accepted is answered 202
// (HTTP-11, HTTP-86).
func (s *session) responseHead(ev chrono.Event) {
	status := statusOf(ev.Text)
	if status == 0 {
		return
	}
	exchange := ev.Channel
	method, _, _ := strings.Cut(exchange, " #")
	h := s.hstreams()
	modern := s.exchange2026(exchange)
	if id, known := header(ev.Text, mcp.HeaderSessionID); known == headerPresent {
		if modern {
			s.exercise(RuleStateless, Server)
			if h.once(RuleStateless, "session") {
				s.find(RuleStateless, Server, verdict.Req("HTTP-107"), ev.Seq, false,
					"the response on %s carries Mcp-Session-Id %q: under 2026-07-28 a server mints and echoes no session ID", exchange, quote(id))
			}
		} else {
			s.exercise(RuleSessionIDVisible, Server)
			if bad, ok := invisible(id); ok && h.once(RuleSessionIDVisible, "HTTP-48") {
				s.find(RuleSessionIDVisible, Server, verdict.Req("HTTP-48"), ev.Seq, false,
					"the session ID %q on %s holds %s: a session ID holds only visible ASCII (0x21 to 0x7E)", quote(id), exchange, bad)
			}
		}
	}
	if modern && (method == "GET" || method == "DELETE") {
		s.exercise(RuleStateless, Server)
		if status/100 == 2 {
			s.find(RuleStateless, Server, verdict.Req("HTTP-107"), ev.Seq, false,
				"%s was answered HTTP %d: under 2026-07-28 GET and DELETE get 405 Method Not Allowed (no GET stream, no session to end)", exchange, status)
		}
	}
	ct, _ := header(ev.Text, "Content-Type")
	eventStream := status/100 == 2 && mediaType(ct) == "text/event-stream"
	if eventStream && modern {
		s.exercise(RuleUnbuffered, Server)
		v, known := header(ev.Text, "X-Accel-Buffering")
		if known != headerUnknown && !strings.EqualFold(strings.TrimSpace(v), "no") && h.once(RuleUnbuffered, "HTTP-92") {
			what := "has no X-Accel-Buffering header"
			if known == headerPresent {
				what = fmt.Sprintf("says X-Accel-Buffering: %s", quote(v))
			}
			s.find(RuleUnbuffered, Server, verdict.Req("HTTP-92"), ev.Seq, false,
				"the SSE response on %s %s: an SSE response says X-Accel-Buffering: no, so that no proxy buffers its events", exchange, what)
		}
	}
	if s.notifPosts.has(exchange) {
		s.exercise(RuleNoNotificationRepl, Server)
		if status/100 == 2 && status != 202 {
			s.find(RuleNoNotificationRepl, Server, verdict.Req("HTTP-11").Under(spec.V20260728, "HTTP-86"), ev.Seq, false,
				"the POST of a notification on %s was answered HTTP %d: a notification the server accepts is answered 202 Accepted with no body", exchange, status)
		}
	}
	switch {
	case eventStream:
		h.stream(exchange)
	case method == "GET":
		h.forget(exchange) // no stream came
	}
}

// methodNotFound judges, under 2026-07-28, an error answering a POST's
// request: -32601 (method not found) travels with HTTP 404 (HTTP-81),
// which the POST's status shows. A status the recording does not show
// is not judged.
func (s *session) methodNotFound(ev chrono.Event) {
	if !s.exchange2026(trimSSE(ev.Channel)) {
		return
	}
	r := s.streams[trimSSE(ev.Channel)]
	if r == nil || r.status == 0 || ev.Summary.ID != r.id.String() {
		return
	}
	m := decoded(ev)
	if m == nil || m.Error == nil || m.Error.Code != jsonrpc.CodeMethodNotFound {
		return
	}
	s.exercise(RuleMethodNotFound, Server)
	if r.status != 404 {
		s.find(RuleMethodNotFound, Server, verdict.Req("HTTP-81"), ev.Seq, false,
			"request %s (%s) was answered -32601 (method not found) with HTTP %d: an unimplemented method is answered 404 Not Found with -32601", r.id, quote(r.method), r.status)
	}
}

// sseEvent judges one event of an SSE stream: under 2025-11-25 a
// request's stream starts with a priming event (an event ID and empty
// data, HTTP-16) and event IDs are unique across the session's streams
// (HTTP-40); under 2026-07-28 events carry no ID (HTTP-93). A message is
// judged by the stream it came on (sseRoute). It reports whether the
// message is a replayed copy of another stream's, for the other rules to
// skip. The events of a stream the checker read raw, without delivering
// them ("(raw request, not delivered)", where a message is not told from
// other data), are judged by their IDs alone.
func (s *session) sseEvent(ev chrono.Event) bool {
	h := s.hstreams()
	st := h.stream(ev.Channel[len("SSE "):])
	message := ev.Kind == chrono.KindFrame
	if !strings.HasPrefix(ev.Text, "sse") {
		// The recording does not describe the event's fields: whether it
		// had an ID is not on record. Only the message is judged.
		st.started = true
		return message && ev.Summary != nil && ev.Summary.Malformed == "" && s.sseRoute(ev, st)
	}
	id, hasID := sseEventID(ev.Text)
	if !message && !hasID && !strings.Contains(ev.Text, " event=") && !strings.Contains(ev.Text, "(empty data") {
		return false // a comment or a retry alone: no event
	}
	hasID = hasID && id != ""
	raw := strings.Contains(ev.Text, "(raw request")
	first := !st.started
	st.started = true
	modern := s.exchange2026(st.exchange)
	if modern {
		if first {
			s.exercise(RuleEventIDs, Server)
		}
		if hasID && !st.ids && h.once(RuleEventIDs, "HTTP-93") {
			s.find(RuleEventIDs, Server, verdict.Req("HTTP-40").Under(spec.V20260728, "HTTP-93"), ev.Seq, false,
				"an SSE event on %s carries the event ID %q: under 2026-07-28 streams are not resumable, and events carry no ID", st.exchange, quote(id))
		}
		st.ids = st.ids || hasID
	} else if first && st.post() && !raw {
		s.exercise(RuleStreamPrimed, Server)
		primed := hasID && !message && len(ev.Raw) == 0 && strings.Contains(ev.Text, "(empty data")
		if !primed && h.once(RuleStreamPrimed, "HTTP-16") {
			what := "a message"
			if !message {
				what = "an event that is not an event ID with empty data"
			}
			s.find(RuleStreamPrimed, Server, verdict.Req("HTTP-16"), ev.Seq, false,
				"the SSE stream of %s began with %s, not with a priming event (an event ID and empty data) to resume from", st.exchange, what)
		}
	}
	if hasID && !modern && s.redelivered(st, id) {
		s.exercise(RuleEventIDs, Server)
		return true
	}
	foreign := message && ev.Summary != nil && ev.Summary.Malformed == "" && s.sseRoute(ev, st)
	if hasID && !foreign && !modern {
		s.eventID(ev, st, id)
	}
	return foreign
}

// redelivered reports whether event id, on a resumption, is an event of
// the stream it resumes seen after the one its Last-Event-ID named: the
// client said it had not received it, though a recorder between the two
// saw it go by (watch), and the server delivers it again. It is one
// event, judged where it was first seen.
func (s *session) redelivered(st *sseStream, id string) bool {
	if st.resumes == "" {
		return false
	}
	prev, seen := s.hs.ids.get(id)
	return seen && prev.origin == st.resumes && prev.seq > st.resumeAfter
}

// sseRoute judges which stream a message came on. On the stream of the
// POST's own request it is what the rules expect (and its response is
// where HTTP-91 waits for the stream's end). Progress of another request
// breaks HTTP-22 on a request's stream (LOG-46 under 2026-07-28) and
// HTTP-31 on the GET stream; on a resumed stream, a message of another
// request than the one resumed is a replay across streams (HTTP-44),
// reported true. Progress of a task-augmented request is not judged:
// after its CreateTaskResult its request has no stream of its own.
func (s *session) sseRoute(ev chrono.Event, st *sseStream) (foreign bool) {
	sum := ev.Summary
	owner := s.streams[st.exchange]
	if st.resumes != "" {
		owner = s.streams[st.resumes]
	}
	var mine *request
	var what string
	switch {
	case (sum.Kind == "result" || sum.Kind == "error") && sum.ID != "" && sum.ID != "null":
		if owner != nil && sum.ID == owner.id.String() {
			if st.resumes != "" {
				s.exercise(RuleReplayOwnStream, Server)
			}
			if st.post() && st.answerSeq == 0 {
				st.answerSeq, st.answerAt = ev.Seq, ev.Offset
			}
			return false
		}
		if st.resumes == "" || owner == nil {
			return false
		}
		id, err := jsonrpc.ParseID([]byte(sum.ID))
		if err != nil {
			return false
		}
		mine, what = s.sentRequest(id.Key()), "the response"
	case sum.Kind == "notification" && sum.Method == mcp.NotificationProgress && sum.Token != "":
		tok, err := jsonrpc.ParseToken([]byte(sum.Token))
		if err != nil {
			return false
		}
		if owner != nil && owner.token != nil && owner.tokenKey == tok.Key() {
			s.exercise(RuleStreamRouting, Server)
			if st.resumes != "" {
				s.exercise(RuleReplayOwnStream, Server)
			}
			return false
		}
		mine, what = s.tokenRequest(tok), "progress"
		if mine != nil && mine.taskAug {
			return false
		}
	default:
		return false
	}
	switch {
	case mine == nil || mine == owner:
	case st.resumes != "" && owner != nil:
		s.exercise(RuleReplayOwnStream, Server)
		s.find(RuleReplayOwnStream, Server, verdict.Req("HTTP-44"), ev.Seq, false,
			"%s resumes the stream of request %s (%s, %s) but replays %s of request %s (%s)", st.exchange, owner.id, quote(owner.method), st.resumes, what, mine.id, quote(mine.method))
		return true
	case what != "progress":
	case st.listen:
		s.exercise(RuleStreamRouting, Server)
		s.find(RuleStreamRouting, Server, verdict.Req("HTTP-31").Clause("SHOULD"), ev.Seq, false,
			"progress of request %s (%s) came on the GET stream %s, not on the request's own stream", mine.id, quote(mine.method), st.exchange)
	case owner != nil && st.post():
		s.exercise(RuleStreamRouting, Server)
		s.find(RuleStreamRouting, Server, verdict.Req("HTTP-22").Clause("SHOULD").Under(spec.V20260728, "LOG-46"), ev.Seq, false,
			"progress of request %s (%s) came on %s, the response stream of request %s (%s): a request's notifications relate to it", mine.id, quote(mine.method), st.exchange, owner.id, quote(owner.method))
	}
	return false
}

// sentRequest is the client's request with ID key, in flight or recently
// answered; nil when the session does not know it.
func (s *session) sentRequest(key string) *request {
	if r := s.reqs[Client][key]; r != nil {
		return r
	}
	for _, r := range s.ended[Client] {
		if r.id.Key() == key {
			return r
		}
	}
	return nil
}

// tokenRequest is the client's request that gave tok, in flight or
// recently answered; nil when none did.
func (s *session) tokenRequest(tok jsonrpc.ProgressToken) *request {
	if r := s.activeToken(Client, tok); r != nil {
		return r
	}
	key := tok.Key()
	for i := len(s.ended[Client]) - 1; i >= 0; i-- {
		if r := s.ended[Client][i]; r.token != nil && r.tokenKey == key {
			return r
		}
	}
	return nil
}

// eventID judges an SSE event ID under 2025-11-25: unique across the
// streams of the session (HTTP-40). The same ID again on a resumption of
// the stream it was first seen on is that event delivered again (after
// the Last-Event-ID: redelivered; before it: a duplicate of a message
// the client had, which the other rules judge), not a second event with
// the ID.
func (s *session) eventID(ev chrono.Event, st *sseStream, id string) {
	h := s.hs
	s.exercise(RuleEventIDs, Server)
	origin := st.exchange
	if st.resumes != "" {
		origin = st.resumes
	}
	prev, seen := h.ids.get(id)
	switch {
	case !seen:
		h.ids.put(id, eventSighting{seq: ev.Seq, exchange: st.exchange, origin: origin})
	case st.resumes != "" && prev.origin == origin:
	default:
		s.find(RuleEventIDs, Server, verdict.Req("HTTP-40"), ev.Seq, false,
			"SSE event ID %q on %s was already used at #%d on %s: an event ID is unique across the session's streams", quote(id), st.exchange, prev.seq, prev.exchange)
	}
}

// streamEnd takes the end of an SSE stream. Under 2026-07-28 the final
// response ends its request's stream (HTTP-91): a stream the client
// closed (or that failed) more than Options.Window after its response
// came was held open by the server that long. The bound is the longest
// crossing the monitor allows, not the session's window sized from its
// round trips: the end follows the response on one stream, and what
// delays its record is the scheduling of the server's handler and of the
// recorder's reader, which a loaded machine stretches past a round trip.
// A stream ended sooner may have been ended by both at once, and is not
// judged; nor is one whose request the client had cancelled by closing
// it, nor one still open when the recording ends.
func (s *session) streamEnd(ev chrono.Event) {
	if s.hs == nil {
		return
	}
	exchange := ev.Channel[len("SSE "):]
	st := s.hs.byExchange[exchange]
	if st == nil {
		return
	}
	serverEnded := ev.Text == "stream ended" || strings.HasPrefix(ev.Text, "the server ended the response stream")
	if !serverEnded && ev.Kind != chrono.KindError && !clientEnded(ev) {
		return // a note about the stream, not its end
	}
	s.hs.forget(exchange)
	r := s.streams[exchange]
	if st.answerSeq == 0 || !s.exchange2026(exchange) || r == nil || r.closed {
		return
	}
	s.exercise(RuleStreamEnds, Server)
	if after := ev.Offset - st.answerAt; !serverEnded && after > s.m.opts.Window {
		s.find(RuleStreamEnds, Server, verdict.Req("HTTP-91"), ev.Seq, false,
			"the response stream of request %s (%s) stayed open %v after its response at #%d, until %s: the final response ends the stream",
			r.id, quote(r.method), after.Round(time.Millisecond), st.answerSeq, endedBy(ev))
	}
}

// clientEnded reports whether a stream's end note says the client closed
// or dropped it: the checker's transport, or watch, whose record of a
// client closing a stream before its response (watch.ClientClosedText)
// is the stream's end; the checker's own such record is its decision,
// which the note of the end follows.
func clientEnded(ev chrono.Event) bool {
	t := ev.Text
	return strings.HasPrefix(t, "stream closed by the client") || strings.HasPrefix(t, "stream dropped by the client") ||
		strings.HasPrefix(t, "the client closed the response stream") ||
		strings.HasPrefix(t, chrono.TextStreamClosed) && strings.HasSuffix(t, "before its response")
}

// endedBy says what ended a stream the server did not.
func endedBy(ev chrono.Event) string {
	if ev.Kind == chrono.KindError {
		return "it failed (" + quote(ev.Text) + ")"
	}
	return "the client closed it"
}

// statusOf is the status of a response head's text ("HTTP 200 …"), 0
// when it has none.
func statusOf(text string) int {
	if len(text) < len("HTTP 200") {
		return 0
	}
	n, err := strconv.Atoi(text[5:8])
	if err != nil || n < 100 || n > 999 {
		return 0
	}
	return n
}

// mediaType is a Content-Type's media type, lower case, without
// parameters.
func mediaType(ct string) string {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// invisible says what in a session ID lies outside visible ASCII (0x21
// to 0x7E), ok false when nothing does. The recorders write a control
// character as a \u escape, which cannot be told from those characters
// written out, so only a space and bytes above 0x7E are seen.
func invisible(id string) (what string, ok bool) {
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case c == ' ':
			return "a space", true
		case c > 0x7e:
			return "bytes outside ASCII", true
		case c < 0x21:
			return fmt.Sprintf("the byte 0x%02x", c), true
		}
	}
	return "", false
}

// What a recorded head says of a header.
const (
	headerAbsent = iota
	headerPresent
	// headerUnknown: the head's text was cut before the end of its
	// headers (chrono.MaxText), and the header is not among those kept.
	headerUnknown
)

// header finds header name (any case) in a recorded head's text: its
// value, and whether it is there, absent, or unknown because the text
// was cut short. Headers follow the request line or status and are
// joined by "; "; a value that holds "; " itself (a Content-Type's
// parameters) is read up to it.
func header(text, name string) (string, int) {
	cut := false
	if i := strings.LastIndex(text, "… (truncated, "); i >= 0 && strings.HasSuffix(text, " bytes)") {
		text, cut = text[:i], true
		if j := strings.LastIndex(text, "; "); j >= 0 {
			text = text[:j] // the header the cut ran through
		} else {
			text = ""
		}
	}
	if i := strings.Index(text, "-encoded: the body is recorded"); i >= 0 {
		if j := strings.LastIndex(text[:i], " ("); j >= 0 {
			text = text[:j] // watch's note on an encoded body
		}
	}
	for part := range strings.SplitSeq(text, "; ") {
		n, v, ok := strings.Cut(part, ": ")
		if !ok {
			continue
		}
		if i := strings.LastIndexByte(n, ' '); i >= 0 {
			n = n[i+1:] // the first header follows the request line or status
		}
		if strings.EqualFold(n, name) {
			return v, headerPresent
		}
	}
	if cut {
		return "", headerUnknown
	}
	return "", headerAbsent
}

// sseEventID reads the event ID from an SSE event's text ("sse id=ID
// event=…"): up to the first mark the recorders write after it. has is
// false when the event had no id field.
func sseEventID(text string) (id string, has bool) {
	rest, ok := strings.CutPrefix(text, "sse id=")
	if !ok {
		return "", false
	}
	end := len(rest)
	for _, mark := range sseMarks {
		if i := strings.Index(rest[:end], mark); i >= 0 {
			end = i
		}
	}
	return rest[:end], true
}

// sseMarks are what the recorders write after an SSE event's ID.
var sseMarks = []string{" event=", " retry=", " comments=", " (", "; "}

// eventSighting is where an SSE event ID was first seen: its event, its
// stream's exchange, and the stream it belongs to (for a resumption, the
// stream resumed).
type eventSighting struct {
	seq              uint64
	exchange, origin string
}

// boundedMap maps strings to values, keeping at most n: past it, the
// oldest key is forgotten. It bounds a rule's history (the event IDs a
// session saw, the revision of each exchange) so that memory follows
// what is in flight, not the length of the conversation.
type boundedMap[V any] struct {
	n     int
	order []string
	at    map[string]V
}

func newBoundedMap[V any](n int) *boundedMap[V] { return &boundedMap[V]{n: n, at: map[string]V{}} }

func (b *boundedMap[V]) get(k string) (V, bool) {
	v, ok := b.at[k]
	return v, ok
}

// put sets k to v; a key already there keeps its place in the order.
func (b *boundedMap[V]) put(k string, v V) {
	if _, ok := b.at[k]; !ok {
		if len(b.order) == b.n {
			delete(b.at, b.order[0])
			b.order = b.order[1:]
		}
		b.order = append(b.order, k)
	}
	b.at[k] = v
}
