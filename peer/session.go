// Package peer is an MCP session over a transport. The checker and host
// code share it. It keeps one registry of requests per direction, and
// progress collectors keyed by progress token in a namespace of their own:
// a request ID and a progress token that look alike are never confused.
package peer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/internal/goroutines"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/transport"
)

// Sentinel errors.
var (
	// ErrCancelInitialize is returned when asked to cancel the initialize
	// request, which clients MUST NOT do (CAN-2, CAN-3).
	ErrCancelInitialize = errors.New("peer: the initialize request must not be cancelled (CAN-2/CAN-3)")
	// ErrConnectionClosed reports that the peer's output ended while a
	// request was pending.
	ErrConnectionClosed = errors.New("peer: connection closed before a response")
	// ErrDuplicateID reports an attempt to reuse a request ID (RPC-6).
	ErrDuplicateID = errors.New("peer: request id already used in this session (RPC-6)")
	// ErrDuplicateToken reports a progress token already active (PRG-2).
	ErrDuplicateToken = errors.New("peer: progress token already in use by an active request (PRG-2)")
	// ErrTaskAugmented is returned when asked to send notifications/cancelled
	// for a task-augmented request: tasks/cancel MUST be used instead
	// (CAN-4, CAN-7).
	ErrTaskAugmented = errors.New("peer: a task-augmented request is cancelled with tasks/cancel, not notifications/cancelled (CAN-4)")
	// ErrNotPending reports a cancel for a request that is not in flight.
	ErrNotPending = errors.New("peer: request is not in flight")
)

// Handler answers a request the server sends to us. Returning a nil error
// sends result; a *jsonrpc.Error is sent as is.
type Handler func(ctx context.Context, req *jsonrpc.Message) (result any, err *jsonrpc.Error)

// Options configures a Session.
type Options struct {
	// Log is the chronology; it must be the one the transport records to.
	Log *chrono.Log
	// Handler answers server-to-client requests. When nil, ping gets an
	// empty result and everything else -32601.
	Handler Handler
	// FirstID is the first integer request ID the session allocates.
	FirstID int64
}

// Session is one MCP session.
type Session struct {
	conn    transport.Conn
	log     *chrono.Log
	handler Handler

	mu            sync.Mutex
	nextID        int64
	nextToken     int64
	outgoing      map[string]*Call // our requests in flight, by ID.Key()
	usedIDs       map[string]*Call // every ID we ever sent (RPC-6)
	tokens        map[string]*Call // live progress tokens, by ProgressToken.Key()
	retiredTokens map[string]*Call // tokens whose request has ended
	incoming      map[string]context.CancelFunc
	strays        []Stray
	strayCount    map[StrayKind]int
	straysDropped uint64
	notes         []*jsonrpc.Message
	notesDropped  uint64
	observers     []func(*jsonrpc.Message)
	init          *InitResult
	// envelope makes the session a 2026-07-28 one (session2026.go), and
	// discovered is its server/discover result.
	envelope   *Envelope
	discovered *DiscoverResult
	closedErr  error
	// chapter counts the hand-overs (HandOver): a call is of the chapter
	// it was sent in.
	chapter int

	readDone chan struct{}
	// handlers counts the handlers of the peer's requests that Close
	// waits for; once it waits, none is started.
	handlers goroutines.Group
}

// New starts a session over conn. It begins reading at once.
func New(conn transport.Conn, opts Options) *Session {
	if opts.Log == nil {
		opts.Log = chrono.New()
	}
	s := &Session{
		conn:          conn,
		log:           opts.Log,
		handler:       opts.Handler,
		nextID:        opts.FirstID,
		outgoing:      map[string]*Call{},
		usedIDs:       map[string]*Call{},
		tokens:        map[string]*Call{},
		retiredTokens: map[string]*Call{},
		incoming:      map[string]context.CancelFunc{},
		readDone:      make(chan struct{}),
	}
	if s.nextID == 0 {
		s.nextID = 1
	}
	go s.readLoop()
	return s
}

// Log returns the session's chronology.
func (s *Session) Log() *chrono.Log { return s.log }

// Conn returns the underlying transport connection.
func (s *Session) Conn() transport.Conn { return s.conn }

// Done is closed when the peer's output has ended and every pending call
// has been failed.
func (s *Session) Done() <-chan struct{} { return s.readDone }

// NewID allocates the next integer request ID.
func (s *Session) NewID() jsonrpc.ID {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		id := jsonrpc.IntID(s.nextID)
		s.nextID++
		if _, used := s.usedIDs[id.Key()]; !used {
			return id
		}
	}
}

// Spent reports whether a request of ours in this session has used id.
func (s *Session) Spent(id jsonrpc.ID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, used := s.usedIDs[id.Key()]
	return used
}

// NewToken allocates a fresh string progress token that no request has
// used in this session.
func (s *Session) NewToken() jsonrpc.ProgressToken {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		s.nextToken++
		t := jsonrpc.StringToken("mcpflight-" + strconv.FormatInt(s.nextToken, 10))
		_, live := s.tokens[t.Key()]
		_, retired := s.retiredTokens[t.Key()]
		if !live && !retired {
			return t
		}
	}
}

// CallOption adjusts one outgoing request.
type CallOption func(*callConfig)

type callConfig struct {
	id        jsonrpc.ID
	token     jsonrpc.ProgressToken
	autoToken bool
	reuseID   bool
	keepToken bool
	// setMeta and dropMeta edit the request's _meta, headers its HTTP
	// headers (session2026.go).
	setMeta  map[string]any
	dropMeta []string
	headers  http.Header
}

// WithID sends the request with this exact ID instead of a fresh one.
func WithID(id jsonrpc.ID) CallOption { return func(c *callConfig) { c.id = id } }

// WithProgressToken asks for progress under this exact token.
func WithProgressToken(t jsonrpc.ProgressToken) CallOption {
	return func(c *callConfig) { c.token = t }
}

// WithProgress asks for progress under a fresh token.
func WithProgress() CallOption { return func(c *callConfig) { c.autoToken = true } }

// KeepProgressToken keeps the request's progress token live after its
// response, for a task-augmented request whose token stays valid for the
// task's lifetime (PRG-9). EndProgress retires it.
func KeepProgressToken() CallOption { return func(c *callConfig) { c.keepToken = true } }

// EndProgress retires the progress token of a call started with
// KeepProgressToken, once its task is terminal: progress that arrives
// afterwards is late (PRG-14).
func (s *Session) EndProgress(c *Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.Token.IsValid() && s.tokens[c.Token.Key()] == c && s.outgoing[c.ID.Key()] != c {
		delete(s.tokens, c.Token.Key())
		s.retiredTokens[c.Token.Key()] = c
	}
}

// AllowIDReuse lets a negative case reuse an ID that already completed.
func AllowIDReuse() CallOption { return func(c *callConfig) { c.reuseID = true } }

// Encode returns the frame Start would send for method and params with
// id (the session's envelope and opts applied), without sending it or
// waiting for an answer: a negative case sends it with SendRaw, for one
// with an id that is still in flight.
func (s *Session) Encode(id jsonrpc.ID, method string, params any, opts ...CallOption) ([]byte, error) {
	var cfg callConfig
	for _, o := range opts {
		o(&cfg)
	}
	p, _, _, err := s.applyEnvelope(params, &cfg)
	if err != nil {
		return nil, err
	}
	return jsonrpc.EncodeRequest(id, method, p)
}

// Start sends a request and returns its handle without waiting.
func (s *Session) Start(ctx context.Context, method string, params any, opts ...CallOption) (*Call, error) {
	var cfg callConfig
	for _, o := range opts {
		o(&cfg)
	}
	if !cfg.id.IsValid() {
		cfg.id = s.NewID()
	}
	if cfg.autoToken && !cfg.token.IsValid() {
		cfg.token = s.NewToken()
	}
	p, err := withProgressToken(params, cfg.token)
	if err != nil {
		return nil, err
	}
	p, is2026, extTasks, err := s.applyEnvelope(p, &cfg)
	if err != nil {
		return nil, err
	}
	raw, err := jsonrpc.EncodeRequest(cfg.id, method, p)
	if err != nil {
		return nil, err
	}
	var seq uint64
	send := func() (err error) { seq, err = s.send(ctx, raw, cfg.id, method); return err }
	if cfg.headers != nil {
		hs, ok := s.conn.(transport.HeaderSender)
		if !ok {
			return nil, ErrNoHeaders
		}
		send = func() error { return hs.SendHeaders(ctx, raw, cfg.headers) }
	}
	c := &Call{session: s, ID: cfg.id, Method: method, Token: cfg.token, TaskAugmented: hasTaskField(p), keepToken: cfg.keepToken,
		is2026: is2026, extTasks: extTasks, done: make(chan struct{}), state: StatePending}
	s.mu.Lock()
	if s.closedErr != nil {
		s.mu.Unlock()
		return nil, s.closedErr
	}
	if _, active := s.outgoing[cfg.id.Key()]; active {
		s.mu.Unlock()
		return nil, fmt.Errorf("%w: %s is still in flight", ErrDuplicateID, cfg.id)
	}
	if _, used := s.usedIDs[cfg.id.Key()]; used && !cfg.reuseID {
		s.mu.Unlock()
		return nil, fmt.Errorf("%w: %s", ErrDuplicateID, cfg.id)
	}
	if cfg.token.IsValid() {
		if _, live := s.tokens[cfg.token.Key()]; live {
			s.mu.Unlock()
			return nil, fmt.Errorf("%w: %s", ErrDuplicateToken, cfg.token)
		}
		s.tokens[cfg.token.Key()] = c
		delete(s.retiredTokens, cfg.token.Key())
	}
	c.chapter = s.chapter
	s.outgoing[cfg.id.Key()] = c
	s.usedIDs[cfg.id.Key()] = c
	s.mu.Unlock()
	from := s.log.Len()
	if err := send(); err != nil {
		s.finish(c, nil, 0, err)
		return nil, err
	}
	if seq == 0 {
		seq = s.sentSeq(from, raw)
	}
	c.mu.Lock()
	c.SentSeq = seq
	c.mu.Unlock()
	return c, nil
}

// send sends raw, the frame jsonrpc encoded of id (absent for a
// notification) and method, and returns its sequence number in the
// chronology, or 0 when the connection does not tell it (sentSeq finds
// it then). A transport that records what it sends is told what the
// frame holds, so that it does not decode the frame again.
func (s *Session) send(ctx context.Context, raw []byte, id jsonrpc.ID, method string) (uint64, error) {
	if es, ok := s.conn.(transport.EncodedSender); ok {
		return es.SendEncoded(ctx, raw, jsonrpc.Encoded(raw, id, method))
	}
	return 0, s.conn.Send(ctx, raw)
}

// sentSeq finds the sequence number the transport gave the frame raw,
// which it recorded during Send, after event from. Other events (a
// stream's progress, harness events) may have been recorded in between,
// so the frame is looked up rather than assumed to be next.
func (s *Session) sentSeq(from uint64, raw []byte) uint64 {
	for _, ev := range s.log.Since(from) {
		if ev.Dir == chrono.Out && ev.Kind == chrono.KindFrame && len(ev.Raw) > 0 && bytes.HasPrefix(raw, ev.Raw) {
			return ev.Seq
		}
	}
	return from + 1
}

// withProgressToken returns params with _meta.progressToken set.
func withProgressToken(params any, token jsonrpc.ProgressToken) (any, error) {
	if !token.IsValid() {
		return params, nil
	}
	obj := map[string]json.RawMessage{}
	if params != nil {
		raw, err := json.Marshal(params)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, fmt.Errorf("peer: params must be an object to carry a progress token: %w", err)
		}
	}
	meta := map[string]json.RawMessage{}
	if m, ok := obj[mcp.MetaKey]; ok {
		if err := json.Unmarshal(m, &meta); err != nil {
			return nil, fmt.Errorf("peer: _meta must be an object: %w", err)
		}
	}
	tok, _ := token.MarshalJSON()
	meta[mcp.MetaProgressToken] = tok
	metaRaw, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	obj[mcp.MetaKey] = metaRaw
	return obj, nil
}

// Request sends a request, waits for its response and decodes the result
// into out (which may be nil). A JSON-RPC error comes back as *jsonrpc.Error.
func (s *Session) Request(ctx context.Context, method string, params, out any, opts ...CallOption) error {
	c, err := s.Start(ctx, method, params, opts...)
	if err != nil {
		return err
	}
	resp, err := c.Await(ctx)
	if err != nil {
		return err
	}
	if resp.Error != nil {
		return Error2026(resp.Error)
	}
	if err := c.checkResult(resp.Result); err != nil {
		return err
	}
	if out != nil {
		if err := json.Unmarshal(resp.Result, out); err != nil {
			return decodeError("the "+method+" result", err)
		}
	}
	return nil
}

// Notify sends a notification.
func (s *Session) Notify(ctx context.Context, method string, params any) error {
	raw, err := jsonrpc.EncodeNotification(method, params)
	if err != nil {
		return err
	}
	_, err = s.send(ctx, raw, jsonrpc.ID{}, method)
	return err
}

// NotifySeq sends a notification and returns the chronology sequence
// number of its frame.
func (s *Session) NotifySeq(ctx context.Context, method string, params any) (uint64, error) {
	raw, err := jsonrpc.EncodeNotification(method, params)
	if err != nil {
		return 0, err
	}
	from := s.log.Len()
	seq, err := s.send(ctx, raw, jsonrpc.ID{}, method)
	if err != nil {
		return 0, err
	}
	if seq == 0 {
		seq = s.sentSeq(from, raw)
	}
	return seq, nil
}

// SendRaw sends bytes as one frame, unchecked, for negative cases.
func (s *Session) SendRaw(ctx context.Context, raw []byte) error { return s.conn.Send(ctx, raw) }

// Ping sends ping and expects an empty result (PNG-1).
func (s *Session) Ping(ctx context.Context) error {
	var out map[string]json.RawMessage
	if err := s.Request(ctx, mcp.MethodPing, nil, &out); err != nil {
		return err
	}
	if len(out) != 0 {
		return fmt.Errorf("peer: ping result is not empty: %d members", len(out))
	}
	return nil
}

// Cancel sends notifications/cancelled for a request we issued. It refuses
// initialize (CAN-2, CAN-3) and requests that are not ours or not in flight
// (CAN-1, CAN-5). The call is marked cancel-requested; a response that still
// arrives is kept as a late response (CAN-10).
func (s *Session) Cancel(ctx context.Context, c *Call, reason string) error {
	if c.Method == mcp.MethodInitialize {
		s.log.Harness(chrono.KindDecision, "session", "refused to cancel initialize (CAN-2/CAN-3)")
		return ErrCancelInitialize
	}
	if c.TaskAugmented {
		s.log.Harness(chrono.KindDecision, "session", "refused notifications/cancelled for task-augmented request "+c.ID.String()+": use tasks/cancel (CAN-4, CAN-7)")
		return ErrTaskAugmented
	}
	s.mu.Lock()
	owned := s.outgoing[c.ID.Key()] == c
	s.mu.Unlock()
	if !owned {
		return fmt.Errorf("%w: %s", ErrNotPending, c.ID)
	}
	if !c.markCancelRequested() {
		return fmt.Errorf("%w: %s", ErrNotPending, c.ID)
	}
	s.log.State("request "+c.ID.String(), string(StatePending), string(StateCancelRequested))
	if rc, ok := s.conn.(transport.RequestCloser); ok && c.is2026 && rc.Closable() {
		return s.cancelByClose(rc, c)
	}
	params := map[string]any{"requestId": c.ID}
	if reason != "" {
		params["reason"] = reason
	}
	seq, err := s.NotifySeq(ctx, mcp.NotificationCancelled, params)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.CancelSeq = seq
	c.mu.Unlock()
	return nil
}

// Close shuts the transport down and returns its teardown grade.
func (s *Session) Close(ctx context.Context) transport.Teardown {
	td := s.conn.Close(ctx)
	select {
	case <-s.readDone:
	case <-ctx.Done():
	}
	// Past ctx the reader may still be running: the group starts no
	// handler once the wait begins.
	s.handlers.Wait()
	return td
}

// ErrBusy reports a hand-over of a session with requests still in flight.
var ErrBusy = errors.New("peer: requests are still in flight")

// HandOver begins a new chapter of the session, for a case that goes on
// where another left it (the runner shares a stdio server's session
// between cases that leave it as they found it): the strays,
// notifications and notification observers recorded so far are
// forgotten, so that the next case reads only what comes during its own
// use, and a second response to a request of an earlier chapter is no
// stray of the next one. Request IDs and progress tokens stay spent (an
// ID is never reused within a session, RPC-6; a late progress for an
// ended request is still known as such), and so do the handshake's
// result and the envelope. It fails with ErrBusy, changing nothing,
// while a request of ours or of the peer's is in flight, and with the
// session's error once it has ended. With leaveCancelled, requests of
// ours that were cancelled (notifications/cancelled sent) do not count
// as in flight: the server need not answer them (CAN-9), and their late
// response, if one comes, ends them as it would have.
func (s *Session) HandOver(leaveCancelled bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closedErr != nil {
		return s.closedErr
	}
	ours := 0
	for _, c := range s.outgoing {
		if !leaveCancelled || !c.CancelRequested() {
			ours++
		}
	}
	if ours > 0 || len(s.incoming) > 0 {
		return fmt.Errorf("%w: %d of ours, %d of the peer's", ErrBusy, ours, len(s.incoming))
	}
	s.strays, s.strayCount, s.straysDropped = nil, nil, 0
	s.notes, s.notesDropped = nil, 0
	s.observers = nil
	s.chapter++
	return nil
}

// Strays returns frames that matched nothing: responses to unknown IDs,
// progress for unknown or finished tokens, duplicate responses, and
// malformed frames; the first MaxStraysPerKind of each kind.
func (s *Session) Strays() []Stray {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Stray(nil), s.strays...)
}

// Notifications returns the notifications received that were not
// progress, the first MaxNotifications of them.
func (s *Session) Notifications() []*jsonrpc.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*jsonrpc.Message(nil), s.notes...)
}

// OnNotification registers f to see every incoming notification (progress
// included) from the read loop. f must not block.
func (s *Session) OnNotification(f func(*jsonrpc.Message)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.observers = append(s.observers, f)
}

// StrayKind classifies a frame that matched nothing.
type StrayKind string

// Stray kinds.
const (
	StrayUnknownResponse   StrayKind = "response-unknown-id"
	StrayDuplicateResponse StrayKind = "response-duplicate"
	StrayNullIDError       StrayKind = "error-null-id"
	StrayUnknownToken      StrayKind = "progress-unknown-token"
	StrayMalformed         StrayKind = "malformed-frame"
	StrayBadProgress       StrayKind = "progress-invalid-params"
)

// Stray is a frame that matched nothing.
type Stray struct {
	Kind   StrayKind
	Seq    uint64
	Detail string
}

// Bounds on what a session keeps, so that a flooding peer cannot eat the
// machine: the first ones are kept, the rest counted.
const (
	// MaxStraysPerKind is how many strays of each kind are kept; per
	// kind, so that a flood of one kind (garbage lines) does not hide
	// the first of another (a duplicate response).
	MaxStraysPerKind = 1000
	// MaxNotifications is how many notifications (other than progress)
	// are kept.
	MaxNotifications = 10_000
)

func (s *Session) addStray(kind StrayKind, seq uint64, detail string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.strayCount == nil {
		s.strayCount = map[StrayKind]int{}
	}
	s.strayCount[kind]++
	if s.strayCount[kind] > MaxStraysPerKind {
		s.straysDropped++
		return
	}
	s.strays = append(s.strays, Stray{Kind: kind, Seq: seq, Detail: detail})
}

// StraysDropped is how many strays were counted but not kept, past
// MaxStraysPerKind of their kind.
func (s *Session) StraysDropped() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.straysDropped
}

// NotificationsDropped is how many notifications were counted but not
// kept, past MaxNotifications.
func (s *Session) NotificationsDropped() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.notesDropped
}

func (s *Session) readLoop() {
	defer close(s.readDone)
	for in := range s.conn.Inbound() {
		if in.Err != nil {
			// A frame that came but is not a message is a stray; an
			// exchange that ended with no frame at all (a stall, a
			// stream that ended early) is not.
			noFrame := in.For.IsValid() && in.Raw == nil &&
				!errors.Is(in.Err, transport.ErrEventTooLarge) && !errors.Is(in.Err, transport.ErrBodyTooLarge)
			if !noFrame {
				s.addStray(StrayMalformed, in.Seq, in.Err.Error())
			}
			if in.For.IsValid() {
				s.lose(in.For, in.Seq, in.Err)
			}
			continue
		}
		m := in.Msg
		switch m.Kind {
		case jsonrpc.KindRequest:
			s.serveRequest(m, in.Seq)
		case jsonrpc.KindNotification:
			s.onNotification(m, in.Seq)
		default:
			s.onResponse(m, in.Seq)
		}
	}
	err := s.conn.Err()
	if err == nil {
		err = ErrConnectionClosed
	} else {
		err = fmt.Errorf("%w: %w", ErrConnectionClosed, err)
	}
	s.mu.Lock()
	s.closedErr = err
	pending := make([]*Call, 0, len(s.outgoing))
	for _, c := range s.outgoing {
		pending = append(pending, c)
	}
	cancels := make([]context.CancelFunc, 0, len(s.incoming))
	for _, cancel := range s.incoming {
		cancels = append(cancels, cancel)
	}
	s.mu.Unlock()
	for _, c := range pending {
		s.finish(c, nil, 0, err)
	}
	for _, cancel := range cancels {
		cancel()
	}
}

func (s *Session) onResponse(m *jsonrpc.Message, seq uint64) {
	if m.NullID {
		s.addStray(StrayNullIDError, seq, "error response with null id: "+m.Error.Message)
		return
	}
	s.mu.Lock()
	c := s.outgoing[m.ID.Key()]
	prior := s.usedIDs[m.ID.Key()]
	chapter := s.chapter
	s.mu.Unlock()
	switch {
	case c != nil:
		s.finish(c, m, seq, nil)
	case prior != nil && prior.lateAfterClose(m, seq):
		s.log.Harness(chrono.KindDecision, "session", "a response to "+m.ID.String()+" arrived after its response stream was closed to cancel it: kept as a late response (CAN-50)")
	case prior != nil && prior.chapter < chapter:
		// A second response to a request of an earlier chapter is that
		// chapter's stray, not this one's: the runner sets its frame
		// aside in the chronology of the case that uses the session now.
	case prior != nil:
		s.addStray(StrayDuplicateResponse, seq, "second response for "+m.ID.String())
	default:
		s.addStray(StrayUnknownResponse, seq, "response for an id never sent: "+m.ID.String())
	}
}

// lose fails the call with id, if still pending, because the exchange
// that was to carry its response ended without it (transport.Inbound.For).
func (s *Session) lose(id jsonrpc.ID, seq uint64, err error) {
	s.mu.Lock()
	c := s.outgoing[id.Key()]
	s.mu.Unlock()
	if c != nil {
		s.log.Harness(chrono.KindDecision, "session", "request "+id.String()+" failed: its exchange ended without its response")
		s.finish(c, nil, seq, err)
	}
}

// finish ends a call with a response or an error, retires its token and
// wakes waiters. It runs at most once per call.
func (s *Session) finish(c *Call, resp *jsonrpc.Message, seq uint64, err error) {
	s.mu.Lock()
	if s.outgoing[c.ID.Key()] != c {
		s.mu.Unlock()
		return
	}
	delete(s.outgoing, c.ID.Key())
	if c.Token.IsValid() && s.tokens[c.Token.Key()] == c && !c.keepToken {
		delete(s.tokens, c.Token.Key())
		s.retiredTokens[c.Token.Key()] = c
	}
	s.mu.Unlock()
	if c.is2026 && resp != nil && resp.Kind == jsonrpc.KindResult {
		rt := s.judgeResultType(c, resp.Result, seq)
		c.mu.Lock()
		c.resultType = rt
		c.mu.Unlock()
	}
	from, to := c.complete(resp, seq, err)
	s.log.State("request "+c.ID.String(), string(from), string(to))
}

func (s *Session) onNotification(m *jsonrpc.Message, seq uint64) {
	s.mu.Lock()
	observers := slices.Clone(s.observers)
	if m.Method != mcp.NotificationProgress {
		if len(s.notes) < MaxNotifications {
			s.notes = append(s.notes, m)
		} else {
			s.notesDropped++
		}
	}
	s.mu.Unlock()
	switch m.Method {
	case mcp.NotificationProgress:
		s.onProgress(m, seq)
	case mcp.NotificationCancelled:
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(m.Params, &p) == nil && p.RequestID != nil {
			if id, err := jsonrpc.ParseID(p.RequestID); err == nil {
				s.mu.Lock()
				cancel := s.incoming[id.Key()]
				s.mu.Unlock()
				if cancel != nil {
					cancel()
				}
			}
		}
	}
	for _, f := range observers {
		f(m)
	}
}

func (s *Session) onProgress(m *jsonrpc.Message, seq uint64) {
	p, err := ParseProgress(m.Params)
	if err != nil {
		s.addStray(StrayBadProgress, seq, err.Error())
		return
	}
	p.Seq = seq
	s.mu.Lock()
	c := s.tokens[p.Token.Key()]
	retired := s.retiredTokens[p.Token.Key()]
	s.mu.Unlock()
	switch {
	case c != nil:
		c.addProgress(p)
	case retired != nil:
		retired.addLateProgress(p)
	default:
		s.addStray(StrayUnknownToken, seq, "progress for a token never issued: "+p.Token.String())
	}
}

func (s *Session) serveRequest(m *jsonrpc.Message, seq uint64) {
	ctx, cancel := context.WithCancel(context.Background())
	if !s.handlers.Add() {
		// Close is waiting for the handlers: a request the peer sends
		// after it gave up waiting for the connection is not served.
		cancel()
		return
	}
	s.mu.Lock()
	s.incoming[m.ID.Key()] = cancel
	s.mu.Unlock()
	go func() {
		defer s.handlers.Done()
		defer func() {
			s.mu.Lock()
			delete(s.incoming, m.ID.Key())
			s.mu.Unlock()
			cancel()
		}()
		h := s.handler
		if h == nil {
			h = DefaultHandler
		}
		result, rerr := h(ctx, m)
		var raw []byte
		var err error
		if rerr != nil {
			raw, err = jsonrpc.EncodeError(m.ID, rerr)
		} else {
			raw, err = jsonrpc.EncodeResult(m.ID, result)
		}
		if err != nil {
			s.log.Harness(chrono.KindError, "session", "encoding response: "+err.Error())
			return
		}
		_ = s.conn.Send(context.Background(), raw)
	}()
}

// DefaultHandler answers ping with an empty result and everything else
// with -32601 (method not found).
func DefaultHandler(_ context.Context, req *jsonrpc.Message) (any, *jsonrpc.Error) {
	if req.Method == mcp.MethodPing {
		return struct{}{}, nil
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + req.Method}
}

// hasTaskField reports whether request params carry a "task" member,
// which makes the request task-augmented (2025-11-25 tasks).
func hasTaskField(params any) bool {
	switch p := params.(type) {
	case nil:
		return false
	case map[string]any:
		_, ok := p["task"]
		return ok
	case map[string]json.RawMessage:
		_, ok := p["task"]
		return ok
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return false
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return false
	}
	_, ok := obj["task"]
	return ok
}
