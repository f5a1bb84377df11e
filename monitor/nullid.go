package monitor

import (
	"fmt"
	"strings"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/verdict"
)

// nullError is an error response with a null id that came while requests
// of its asker were in flight: it may be the error of one of them without
// its ID (RPC-11), unless each of them gets a response of its own, when it
// answered none of them, so a notification (RPC-15).
type nullError struct {
	side    Side // who sent it
	seq     uint64
	what    string
	waiting map[string]bool // the asker's requests in flight when it came
}

// nullIDError judges an error response with a null id, when every frame
// its asker sent had a readable ID (else it may answer the one that had
// none, RPC-11's exception).
//
// Over Streamable HTTP the POST it came on says what it answers: the POST
// of a notification, which is answered with 202 and no body (RPC-15); a
// POST refused at the HTTP layer (a status that is not 2xx: a
// notification the server cannot accept, HTTP-12, whose body may be such
// an error, HTTP-4; the 404 of a session the server no longer knows),
// whose body answers the exchange, which is not judged; or a request's
// stream, whose request it answers without its ID (RPC-11).
// Elsewhere (stdio, the GET stream) an error with a null id while none of
// the asker's requests is in flight answers none of them: it answers a
// notification (RPC-15). While some are in flight it is judged once each
// of them has its own response (RPC-15), or at the end of the session,
// when one never had (RPC-11).
func (s *session) nullIDError(side, asker Side, ev chrono.Event, m *jsonrpc.Message) {
	what := fmt.Sprintf("an error response with a null id (%s)", errText(m))
	if s.http() && strings.HasPrefix(trimSSE(ev.Channel), "POST #") {
		post := trimSSE(ev.Channel)
		r := s.streams[post]
		switch {
		case s.refusedPosts.has(post):
			// Refused: the status answers, and the body may say why.
		case s.notifPosts.has(post):
			s.find(RuleNoNotificationRepl, side, verdict.Req("RPC-15"), ev.Seq, false,
				"the POST of a notification was answered with %s: a notification is answered with 202 and no body", what)
		case r != nil && r.status != 0 && r.status/100 != 2:
			// Refused before the message was read: the status answers.
		case r != nil:
			s.find(RuleOneResponse, side, verdict.Req("RPC-11"), ev.Seq, false,
				"%s on the stream of request %s (%s), whose ID was readable", what, r.id, quote(r.method))
		}
		return
	}
	if len(s.reqs[asker]) == 0 {
		s.answeredNone(side, asker, ev.Seq, what)
		return
	}
	n := &nullError{side: side, seq: ev.Seq, what: what, waiting: map[string]bool{}}
	for k := range s.reqs[asker] {
		n.waiting[k] = true
	}
	if len(s.nullErrors) == maxEnded {
		s.nullIDUnsettled(s.nullErrors[0])
		s.nullErrors = s.nullErrors[1:]
	}
	s.nullErrors = append(s.nullErrors, n)
}

// answeredNone judges an error with a null id that answers none of the
// asker's requests: a notification's answer (RPC-15) when the asker sent
// one, else a response to nothing (RPC-11).
func (s *session) answeredNone(side, asker Side, seq uint64, what string) {
	if s.notified[asker] {
		s.find(RuleNoNotificationRepl, side, verdict.Req("RPC-15"), seq, false,
			"%s, though every frame the %s sent had a readable ID and each of its requests had a response of its own: it answers a notification", what, asker)
		return
	}
	s.find(RuleOneResponse, side, verdict.Req("RPC-11"), seq, false,
		"%s, though every frame the %s sent had a readable ID", what, asker)
}

// nullIDUnsettled judges an error with a null id that came while a request
// it may answer was in flight, and that request never had a response of
// its own: the error is that request's, without its ID (RPC-11).
func (s *session) nullIDUnsettled(n *nullError) {
	s.find(RuleOneResponse, n.side, verdict.Req("RPC-11"), n.seq, false,
		"%s, though every frame the %s sent had a readable ID: it answers one of the requests then in flight, without its ID", n.what, other(n.side))
}

// settleNullErrors takes the response of side's request key: an error
// with a null id that came while it was in flight did not answer it, and
// one that now waits for no request answered a notification.
func (s *session) settleNullErrors(asker Side, key string) {
	kept := s.nullErrors[:0]
	for _, n := range s.nullErrors {
		if other(n.side) == asker && n.waiting[key] {
			delete(n.waiting, key)
			if len(n.waiting) == 0 {
				s.answeredNone(n.side, asker, n.seq, n.what)
				continue
			}
		}
		kept = append(kept, n)
	}
	s.nullErrors = kept
}
