package monitor

import (
	"encoding/json"
	"slices"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/verdict"
)

// levels are RFC 5424's severities as MCP names them, least severe first
// (LOG-2).
var levels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// below reports whether level is less severe than floor; an unknown level
// is not judged.
func below(level, floor string) bool {
	l, f := slices.Index(levels, level), slices.Index(levels, floor)
	return l >= 0 && f >= 0 && l < f
}

// logMessage judges a log message the server sent: under 2025-11-25
// nothing below the level the client set with logging/setLevel (LOG-4);
// under 2026-07-28 none on a subscription (LOG-44), none for a request
// without a log level (LOG-41, LOG-42) and none below the level the
// request asked for (LOG-43 grants only those at or above it). And none
// for a cancelled request beyond the crossing window (CAN-8; CAN-54,
// CAN-56), where the wire says which request it is for: the request
// whose response stream it came on (Streamable HTTP), or under
// 2026-07-28 over stdio the one request in flight that asked for log
// messages (under 2025-11-25 a log message over stdio belongs to the
// session, not to a request).
func (s *session) logMessage(ev chrono.Event, m *jsonrpc.Message) {
	var p struct {
		Level string `json:"level"`
		Meta  struct {
			SubscriptionID json.RawMessage `json:"io.modelcontextprotocol/subscriptionId"`
		} `json:"_meta"`
	}
	if json.Unmarshal(m.Params, &p) != nil {
		return
	}
	if !s.is2026() {
		s.logMessage2025(ev, p.Level)
		return
	}
	s.exercise(RuleLogLevel, Server)
	if r := s.listenLogged(ev, p.Meta.SubscriptionID); r != nil {
		s.find(RuleLogLevel, Server, verdict.Req("LOG-44"), ev.Seq, false,
			"a log message at %s on subscription %s: a log message goes only on the response stream of the request that asked for it", quote(p.Level), r.id)
		return
	}
	if s.http() {
		r := s.streams[trimSSE(ev.Channel)]
		if r == nil {
			return // on no request's stream: LOG-44's, which the cases judge
		}
		switch {
		case r.logLevel == "":
			s.find(RuleLogLevel, Server, verdict.Req("LOG-42"), ev.Seq, false,
				"a log message at %s on the stream of request %s (%s), which asked for no log level", quote(p.Level), r.id, quote(r.method))
		case below(p.Level, r.logLevel):
			s.find(RuleLogLevel, Server, levelGrant, ev.Seq, false,
				"a log message at %s for request %s, which asked for %s and above", quote(p.Level), r.id, quote(r.logLevel))
		}
		s.logAfterCancel(r, ev)
		return
	}
	// Over stdio a message is for one of the requests in flight that
	// asked for log messages, which one the wire does not say.
	var lowest *request
	asking := 0
	for _, r := range s.reqs[Client] {
		if r.logLevel == "" {
			continue
		}
		asking++
		if lowest == nil || below(r.logLevel, lowest.logLevel) {
			lowest = r
		}
	}
	if asking == 0 {
		// Over stdio a message names no request. Just after the answer of a
		// request that asked for this level, two causes fit: the message is
		// that request's, written after its response (LOG-43 grants them
		// before it only), or one sent for no request (LOG-41). The likelier
		// first is judged, as the case does, with both named.
		if ended := s.ended[Client]; len(ended) > 0 {
			if r := ended[len(ended)-1]; r.logLevel != "" && !below(p.Level, r.logLevel) {
				s.find(RuleLogLevel, Server, verdict.Req("LOG-43").Except(verdict.Warn,
					"LOG-43 grants messages before the final response only: one after it is outside what the sentence allows"), ev.Seq, false,
					"a log message at %s after the response to request %s (%s, which asked for %s) at #%d: that request's, written after its response (LOG-43 grants them before it), or one for no request (LOG-41)",
					quote(p.Level), r.id, quote(r.method), quote(r.logLevel), r.respSeq)
				return
			}
		}
		s.find(RuleLogLevel, Server, verdict.Req("LOG-41"), ev.Seq, false,
			"a log message at %s while no request in flight asked for a log level", quote(p.Level))
		return
	}
	if below(p.Level, lowest.logLevel) {
		s.find(RuleLogLevel, Server, levelGrant, ev.Seq, false,
			"a log message at %s while every request in flight that asked for log messages asked for %s or above (request %s)", quote(p.Level), quote(lowest.logLevel), lowest.id)
	}
	if asking == 1 {
		s.logAfterCancel(lowest, ev)
	}
}

// listenLogged is the client's subscriptions/listen a log message is
// on, nil for none: the one whose response stream it came on (Streamable
// HTTP), else the one in flight its _meta subscription ID names. One the
// client has cancelled counts too: a message that still names it was
// written on the subscription before the server read the cancel, which
// makes it no less a log message on a subscription (LOG-44), though it
// may cross the cancel.
func (s *session) listenLogged(ev chrono.Event, rawID json.RawMessage) *request {
	if s.http() {
		if r := s.streams[trimSSE(ev.Channel)]; r != nil && r.side == Client && r.method == mcp.MethodSubscriptionsListen {
			return r
		}
	}
	if rawID == nil {
		return nil
	}
	id, err := jsonrpc.ParseID(rawID)
	if err != nil {
		return nil
	}
	if r := s.reqs[Client][id.Key()]; r != nil && r.method == mcp.MethodSubscriptionsListen {
		return r
	}
	return nil
}

// levelGrant is the rule a log message below its request's level breaks:
// LOG-43 is a MAY that grants messages at or above the level only, so
// the one below is outside it; the case that checks it weighs it as a
// SHOULD (cases/logging2026.go), and so does the monitor.
var levelGrant = verdict.Req("LOG-43").Except(verdict.Warn,
	"LOG-43 grants messages at or above the requested level only: one below it is outside what the sentence allows, though no MUST NOT forbids it in so many words")

// logMessage2025 judges a 2025-11-25 log message: none below the level
// logging/setLevel set (LOG-4), and over Streamable HTTP none on the
// stream of a request cancelled beyond the crossing window.
func (s *session) logMessage2025(ev chrono.Event, level string) {
	if s.http() {
		if r := s.streams[trimSSE(ev.Channel)]; r != nil {
			s.logAfterCancel(r, ev)
		}
	}
	if s.logLevel == "" {
		return
	}
	s.exercise(RuleLogLevel, Server)
	if below(level, s.logLevel) {
		s.find(RuleLogLevel, Server, verdict.Req("LOG-4"), ev.Seq, false,
			"a log message at %s after the client set the level to %s", quote(level), quote(s.logLevel))
	}
}

// logAfterCancel judges a log message for request r: once r was
// cancelled and not answered, one beyond the crossing window breaks the
// cancel (afterCancel), as progress does.
func (s *session) logAfterCancel(r *request, ev chrono.Event) {
	if r.side != Client || r.responded || r.cancelSeq == 0 {
		return
	}
	s.afterCancel(RuleCancelNoLog, Server, r, ev, "a log message")
}

func trimSSE(c string) string {
	if len(c) > 4 && c[:4] == "SSE " {
		return c[4:]
	}
	return c
}
