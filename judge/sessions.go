package judge

import (
	"strings"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/watch"
)

// sessionKeys routes a conversation's events to its sessions. Over stdio
// there is one. Over Streamable HTTP an exchange (a POST, GET or DELETE
// and what answered it, "POST #3" and "SSE POST #3") belongs to the
// session its Mcp-Session-Id names, in its request's headers (watch's
// head of the request, or the text of the checker's own request frame,
// which carries its headers) or, for the initialize that opens it, its
// response's; an exchange without one (a
// 2026-07-28 request, a stateless server) belongs to the one session of
// the endpoint, "http". Only an initialize's exchange waits for its
// answer, which names the session it opens; the others are keyed by
// their request's headers at once, so that concurrent exchanges keep
// their order. The events of no exchange (a client connection, the
// recorder's own) are the endpoint's at once.
type sessionKeys struct {
	// stdio is set when the conversation is one stdio session; one is
	// the slice route returns for it, reused from event to event.
	stdio     bool
	one       [1]routed
	byChannel map[string]string
	waiting   map[string][]chrono.Event
	// done are the exchanges that ended (exchangeEnds), oldest first:
	// past maxDoneExchanges the oldest is forgotten, so that the keys
	// follow the exchanges in flight, not the conversation's length.
	done []string
}

// maxDoneExchanges is how many ended exchanges keep their session's key,
// for an event that comes after the end (a note about the stream).
const maxDoneExchanges = 4096

// exchangeEnds reports whether ev is the last event of its exchange: a
// message in a JSON body (the answer of a POST), an answer that has no
// body (202 Accepted, 204, 405), or the harness's note that a stream
// ended, failed or was closed.
func exchangeEnds(ev chrono.Event) bool {
	switch {
	case ev.Dir == chrono.Harness:
		return strings.HasPrefix(ev.Channel, "SSE ")
	case ev.Dir != chrono.In || strings.HasPrefix(ev.Channel, "SSE "):
		return false
	case ev.Kind == chrono.KindFrame:
		return true
	case ev.Kind == chrono.KindHTTP:
		for _, bodiless := range []string{"HTTP 202", "HTTP 204", "HTTP 405"} {
			if ev.Text == bodiless || strings.HasPrefix(ev.Text, bodiless+" ") {
				return true
			}
		}
		return strings.HasPrefix(ev.Channel, "DELETE #") && strings.HasPrefix(ev.Text, "HTTP ")
	}
	return false
}

// ended notes that the exchange of ev ended, if it did, and forgets the
// oldest ended exchange past the bound.
func (k *sessionKeys) ended(ev chrono.Event) {
	ch := exchange(ev.Channel)
	if k.stdio || !isExchange(ch) || !exchangeEnds(ev) {
		return
	}
	if _, keyed := k.byChannel[ch]; !keyed {
		return
	}
	k.done = append(k.done, ch)
	if len(k.done) > maxDoneExchanges {
		delete(k.byChannel, k.done[0])
		k.done = k.done[1:]
	}
}

// routed is an event and the session it belongs to.
type routed struct {
	key string
	ev  chrono.Event
}

// noSession keys what belongs to no HTTP session, and the one session of
// a stdio conversation.
const noSession = "http"

func newSessionKeys(transport string) *sessionKeys {
	return &sessionKeys{stdio: transport != "http", byChannel: map[string]string{}, waiting: map[string][]chrono.Event{}}
}

// route returns the events ev makes ready, each with its session's key;
// the slice is valid until the next call.
func (k *sessionKeys) route(ev chrono.Event) []routed {
	if k.stdio {
		k.one[0] = routed{key: "stdio", ev: ev}
		return k.one[:]
	}
	ch := exchange(ev.Channel)
	if !isExchange(ch) {
		return []routed{{key: noSession, ev: ev}}
	}
	if key, ok := k.byChannel[ch]; ok {
		return []routed{{key: key, ev: ev}}
	}
	if ev.Kind == chrono.KindHTTP || ev.Kind == chrono.KindFrame && ev.Dir == chrono.Out {
		id := watch.SessionID(ev.Text)
		switch {
		case id != "":
			return k.settle(ch, id, ev)
		case ev.Dir == chrono.In:
			// The answer carries no session ID: the exchange has none.
			return k.settle(ch, noSession, ev)
		}
	}
	if ev.Kind == chrono.KindFrame && ev.Dir == chrono.Out && (ev.Summary == nil || ev.Summary.Method != mcp.MethodInitialize) {
		// A request without a session ID that is not an initialize opens
		// no session: it is the endpoint's (2026-07-28, a stateless
		// server), now, so that exchanges in flight side by side are
		// judged in the order they happened. Only an initialize waits
		// for the session its answer names.
		return k.settle(ch, noSession, ev)
	}
	k.waiting[ch] = append(k.waiting[ch], ev)
	if len(k.waiting[ch]) > 1024 {
		// An exchange whose answer never came: its events are judged as
		// the endpoint's rather than held without bound.
		return k.settle(ch, noSession, chrono.Event{})
	}
	return nil
}

// settle keys channel ch to key and releases what waited for it, then ev.
func (k *sessionKeys) settle(ch, key string, ev chrono.Event) []routed {
	k.byChannel[ch] = key
	var out []routed
	for _, w := range k.waiting[ch] {
		out = append(out, routed{key: key, ev: w})
	}
	delete(k.waiting, ch)
	if ev.Seq != 0 {
		out = append(out, routed{key: key, ev: ev})
	}
	return out
}

// exchange is the HTTP exchange a channel belongs to: "SSE POST #3" is
// "POST #3".
func exchange(channel string) string { return strings.TrimPrefix(channel, "SSE ") }

// isExchange reports whether channel names an HTTP exchange: a method,
// a space, '#' and its number ("POST #3").
func isExchange(channel string) bool {
	method, n, ok := strings.Cut(channel, " #")
	if !ok || method == "" || n == "" || strings.ContainsRune(method, ' ') {
		return false
	}
	for _, c := range n {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
