package clientrun

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
)

// httpServer is the case's Streamable HTTP endpoint on 127.0.0.1. It
// speaks the 2025-11-25 shape (legacy: a session minted at initialize,
// resumable SSE streams with event IDs and GET + Last-Event-ID, DELETE) or
// the 2026-07-28 shape (POST only; GET and DELETE get 405; a stream that
// breaks is gone). Every request is recorded with its headers, every SSE
// event when it is written, and a stream the client closes as a state
// change: the evidence of a 2026 cancel.
type httpServer struct {
	hub      *hub
	log      *chrono.Log
	is2025   bool
	maxFrame int
	ln       net.Listener
	srv      *http.Server

	mu      sync.Mutex
	posts   int
	gets    int
	streams map[string]*sseStream
	session string
}

// sseEvent is one event of a stream.
type sseEvent struct {
	id   string
	data []byte
}

// sseStream is the reply stream of one POSTed request.
type sseStream struct {
	id string
	mu sync.Mutex
	// events queued, in order; final once the response is among them.
	events []sseEvent
	final  bool
	// status, when set before any event, answers the POST with an HTTP
	// status and body instead of a stream.
	status int
	body   []byte
	// wake is closed at every change.
	wake chan struct{}
	// cut, when cutting, is where the server dropped the stream's
	// connection: the writer ends after the events before it.
	cut     int
	cutting bool
	// dispatched is closed once the script has seen the request.
	dispatched chan struct{}
	// gone is closed when the client closed the stream.
	gone     chan struct{}
	goneOnce sync.Once
	dead     bool
}

func (st *sseStream) changed() {
	close(st.wake)
	st.wake = make(chan struct{})
}

// listenHTTP serves the endpoint on a free loopback port.
func listenHTTP(h *hub, log *chrono.Log, is2025 bool, maxFrame int) (*httpServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("clientrun: listening on 127.0.0.1: %w", err)
	}
	s := &httpServer{hub: h, log: log, is2025: is2025, maxFrame: maxFrame, ln: ln, streams: map[string]*sseStream{}}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// URL is the MCP endpoint.
func (s *httpServer) URL() string { return "http://" + s.ln.Addr().String() + "/mcp" }

// close stops serving: every open stream ends.
func (s *httpServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
	_ = s.srv.Close()
}

// headerText renders the request line and headers for the chronology,
// sorted, sanitised.
func headerText(r *http.Request) string {
	var b strings.Builder
	b.WriteString(r.Method + " " + r.URL.Path)
	keys := make([]string, 0, len(r.Header))
	for k := range r.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteString("; " + k + ": " + strings.Join(r.Header.Values(k), ", "))
	}
	return chrono.Sanitize(b.String(), false)
}

func (s *httpServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		s.post(w, r)
	case http.MethodGet:
		s.get(w, r)
	case http.MethodDelete:
		s.mu.Lock()
		s.gets++ // DELETEs share the counter of non-POST exchanges
		n := s.gets
		s.mu.Unlock()
		ch := "DELETE " + strconv.Itoa(n)
		s.log.Append(chrono.Event{Dir: chrono.In, Channel: ch, Kind: chrono.KindHTTP, Text: headerText(r)})
		if !s.is2025 {
			s.status(w, ch, http.StatusMethodNotAllowed)
			return
		}
		s.log.State("session", "open", "deleted by the client")
		s.status(w, ch, http.StatusOK)
	default:
		w.Header().Set("Allow", "POST, GET, DELETE")
		s.status(w, r.Method, http.StatusMethodNotAllowed)
	}
}

// status answers with a bare status, recorded.
func (s *httpServer) status(w http.ResponseWriter, channel string, code int) {
	s.log.Append(chrono.Event{Dir: chrono.Out, Channel: channel, Kind: chrono.KindHTTP, Text: fmt.Sprintf("%d %s", code, http.StatusText(code))})
	w.WriteHeader(code)
}

func (s *httpServer) post(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.posts++
	n := s.posts
	s.mu.Unlock()
	ch := "POST " + strconv.Itoa(n)
	s.log.Append(chrono.Event{Dir: chrono.In, Channel: ch, Kind: chrono.KindHTTP, Text: headerText(r)})
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(s.maxFrame)+1))
	if err != nil {
		s.log.Harness(chrono.KindNote, ch, "reading the body: "+err.Error())
		s.status(w, ch, http.StatusBadRequest)
		return
	}
	if len(body) > s.maxFrame {
		s.log.Harness(chrono.KindError, ch, fmt.Sprintf("body over %d bytes", s.maxFrame))
		s.status(w, ch, http.StatusRequestEntityTooLarge)
		return
	}
	msg, derr := jsonrpc.Decode(body)
	e := s.log.Frame(chrono.In, ch, body, msg, derr)
	in := Inbound{Msg: msg, Err: derr, Seq: e.Seq, Channel: ch, Header: r.Header.Clone(), HTTPMethod: r.Method}
	if derr != nil || msg.Kind != jsonrpc.KindRequest {
		// A notification or a response: accepted (202, no body).
		s.hub.deliver(in)
		code := http.StatusAccepted
		if derr != nil {
			code = http.StatusBadRequest
		}
		s.status(w, ch, code)
		return
	}
	st := &sseStream{id: strconv.Itoa(n), wake: make(chan struct{}), dispatched: make(chan struct{}), gone: make(chan struct{})}
	s.mu.Lock()
	s.streams[st.id] = st
	s.mu.Unlock()
	in.reply = &reply{
		send:       func(raw []byte, final bool) error { return s.queue(st, raw, final) },
		drop:       func() { s.drop(st) },
		status:     func(code int, body []byte) { setStatus(st, code, body) },
		gone:       st.gone,
		dispatched: st.dispatched,
	}
	if s.is2025 && msg.Method == mcp.MethodInitialize {
		s.mu.Lock()
		if s.session == "" {
			var b [16]byte
			_, _ = rand.Read(b[:])
			s.session = hex.EncodeToString(b[:])
		}
		w.Header().Set("Mcp-Session-Id", s.session)
		s.mu.Unlock()
	}
	s.hub.deliver(in)
	// Wait for the script's first word on this request.
	st.mu.Lock()
	for len(st.events) == 0 && st.status == 0 && !st.dead && !st.cutting {
		wake := st.wake
		st.mu.Unlock()
		select {
		case <-wake:
		case <-st.dispatched:
			// The script has seen the request and said nothing yet: the
			// stream opens, and its messages follow.
			st.mu.Lock()
			goto open
		case <-r.Context().Done():
			s.clientClosed(st, ch)
			return
		}
		st.mu.Lock()
	}
open:
	if st.status != 0 && len(st.events) == 0 {
		code, body := st.status, st.body
		st.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		s.log.Append(chrono.Event{Dir: chrono.Out, Channel: ch, Kind: chrono.KindHTTP, Text: fmt.Sprintf("%d %s", code, http.StatusText(code))})
		w.WriteHeader(code)
		if len(body) > 0 {
			s.log.Frame(chrono.Out, ch, body, nil, nil)
			_, _ = w.Write(body)
		}
		return
	}
	st.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	s.log.Append(chrono.Event{Dir: chrono.Out, Channel: ch, Kind: chrono.KindHTTP, Text: "200 OK text/event-stream (SSE " + st.id + ")"})
	w.WriteHeader(http.StatusOK)
	if s.is2025 {
		// A priming event with an event ID, so that the stream can be
		// resumed before its first message; retry keeps reconnection quick.
		fmt.Fprintf(w, "id: %s-0\nretry: 50\ndata: \n\n", st.id)
		s.log.Append(chrono.Event{Dir: chrono.Out, Channel: "SSE " + st.id, Kind: chrono.KindHTTP, Text: "priming event " + st.id + "-0"})
	}
	s.pump(w, r, st, 0, "SSE "+st.id)
}

// queue adds a frame to a stream.
func (s *httpServer) queue(st *sseStream, raw []byte, final bool) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.dead {
		return errStreamGone
	}
	if st.final {
		return errors.New("the stream's response was already sent")
	}
	st.events = append(st.events, sseEvent{id: fmt.Sprintf("%s-%d", st.id, len(st.events)+1), data: raw})
	st.final = final
	st.changed()
	return nil
}

var errStreamGone = errors.New("the stream is gone")

// drop ends the stream's current connection without its response. Under
// 2025-11-25 the stream stays resumable; under 2026-07-28 it is gone.
func (s *httpServer) drop(st *sseStream) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.cut, st.cutting = len(st.events), true
	if !s.is2025 {
		st.dead = true
	}
	st.changed()
}

func (s *httpServer) clientClosed(st *sseStream, channel string) {
	st.goneOnce.Do(func() {
		s.log.State(channel, "open", "closed by the client")
		close(st.gone)
	})
}

// pump writes the stream's events from index from until its response,
// a drop, or the client closing it.
func (s *httpServer) pump(w http.ResponseWriter, r *http.Request, st *sseStream, from int, channel string) {
	flusher, _ := w.(http.Flusher)
	for {
		st.mu.Lock()
		upto := len(st.events)
		cutNow := st.cutting && st.cut <= upto
		if cutNow {
			upto = max(st.cut, from)
			st.cutting = false
		}
		evs := slices.Clone(st.events[min(from, upto):upto])
		final, wake := st.final && !cutNow, st.wake
		st.mu.Unlock()
		for _, ev := range evs {
			if s.is2025 {
				fmt.Fprintf(w, "id: %s\n", ev.id)
			}
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", ev.data)
			s.log.Frame(chrono.Out, channel, ev.data, nil, nil)
			from++
		}
		if flusher != nil {
			flusher.Flush()
		}
		if cutNow {
			s.log.State(channel, "open", "dropped by the server (no response sent)")
			return
		}
		if final && from >= upto {
			return
		}
		select {
		case <-wake:
		case <-r.Context().Done():
			s.clientClosed(st, channel)
			return
		}
	}
}

// get resumes a stream (2025-11-25: Last-Event-ID), or refuses.
func (s *httpServer) get(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.gets++
	n := s.gets
	s.mu.Unlock()
	ch := "GET " + strconv.Itoa(n)
	s.log.Append(chrono.Event{Dir: chrono.In, Channel: ch, Kind: chrono.KindHTTP, Text: headerText(r)})
	last := r.Header.Get("Last-Event-ID")
	if !s.is2025 || last == "" {
		// No standalone stream is offered (a 2025-11-25 server may
		// answer 405); 2026-07-28 has no GET at all.
		s.status(w, ch, http.StatusMethodNotAllowed)
		return
	}
	streamID, num, ok := strings.Cut(last, "-")
	k, err := strconv.Atoi(num)
	s.mu.Lock()
	st := s.streams[streamID]
	s.mu.Unlock()
	if !ok || err != nil || st == nil {
		s.status(w, ch, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	s.log.Append(chrono.Event{Dir: chrono.Out, Channel: ch, Kind: chrono.KindHTTP, Text: fmt.Sprintf("200 OK text/event-stream (SSE %s resumed after event %s)", st.id, chrono.Sanitize(last, false))})
	w.WriteHeader(http.StatusOK)
	s.pump(w, r, st, k, "SSE "+st.id+" via "+ch)
}

// setStatus makes the POST of st answer with code and body.
func setStatus(st *sseStream, code int, body []byte) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.status, st.body = code, body
	st.changed()
}
