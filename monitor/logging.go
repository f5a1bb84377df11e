package monitor

import (
	"encoding/json"
	"slices"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
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
// request asked for (LOG-43 grants only those at or above it).
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
	if !s.modern() {
		if s.logLevel == "" {
			return
		}
		s.exercise(RuleLogLevel, Server)
		if below(p.Level, s.logLevel) {
			s.find(RuleLogLevel, Server, verdict.Req("LOG-4"), ev.Seq, false,
				"a log message at %s after the client set the level to %s", quote(p.Level), quote(s.logLevel))
		}
		return
	}
	s.exercise(RuleLogLevel, Server)
	if s.listens > 0 {
		if r, _ := s.subscriptionOf(ev, p.Meta.SubscriptionID); r != nil {
			s.find(RuleLogLevel, Server, verdict.Req("LOG-44"), ev.Seq, false,
				"a log message at %s on subscription %s: a log message goes only on the response stream of the request that asked for it", quote(p.Level), r.id)
			return
		}
	}
	r := s.streams[trimSSE(ev.Channel)]
	if s.http() && r != nil {
		switch {
		case r.logLevel == "":
			s.find(RuleLogLevel, Server, verdict.Req("LOG-42"), ev.Seq, false,
				"a log message at %s on the stream of request %s (%s), which asked for no log level", quote(p.Level), r.id, quote(r.method))
		case below(p.Level, r.logLevel):
			s.find(RuleLogLevel, Server, verdict.Req("LOG-43"), ev.Seq, false,
				"a log message at %s for request %s, which asked for %s and above", quote(p.Level), r.id, quote(r.logLevel))
		}
		return
	}
	if s.http() {
		return // on no request's stream: LOG-44's, which the cases judge
	}
	for _, r := range s.reqs[Client] {
		if r.logLevel != "" {
			return // some request in flight asked for log messages
		}
	}
	s.find(RuleLogLevel, Server, verdict.Req("LOG-41"), ev.Seq, false,
		"a log message at %s while no request in flight asked for a log level", quote(p.Level))
}

func trimSSE(c string) string {
	if len(c) > 4 && c[:4] == "SSE " {
		return c[4:]
	}
	return c
}
