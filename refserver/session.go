package refserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/mcpflight/mcpflight/internal/goroutines"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
)

// JSON-RPC error codes used by the server.
const (
	codeParseError     = jsonrpc.CodeParseError
	codeInvalidRequest = jsonrpc.CodeInvalidRequest
	codeMethodNotFound = jsonrpc.CodeMethodNotFound
	codeInvalidParams  = jsonrpc.CodeInvalidParams
	codeInternalError  = jsonrpc.CodeInternalError
)

// callKind says what an in-flight, cancellable request is.
type callKind uint8

const (
	kindSlow callKind = iota + 1
	kindEffect
	kindAwait
	// kindCreate is a 2026-07-28 tools/call whose CreateTaskResult has not
	// been written yet (tasksext.go); kindListen a subscriptions/listen
	// stream (listen.go).
	kindCreate
	kindListen
)

// callState is the lifecycle of a cancellable request.
type callState uint8

const (
	stateRunning callState = iota
	stateCompleted
	stateCancelled
)

func (s callState) String() string {
	switch s {
	case stateCompleted:
		return "completed"
	case stateCancelled:
		return "cancelled"
	}
	return "running"
}

// call is a request that can be cancelled: a slow or effect operation, or
// a control await.
type call struct {
	kind  callKind
	id    jsonrpc.ID
	idKey string
	seq   uint64
	// cancelled is closed when a cancel is accepted.
	cancelled chan struct{}
	// sendMu is held across "check state, then write": once a cancel has
	// been accepted (which takes sendMu too), no frame of the call is
	// written unless a fault forces it.
	sendMu sync.Mutex

	// Guarded by session.mu.
	state        callState
	releases     int
	progressSent int

	// Fixed at registration.
	// owner is the session the call came on: over 2026-07-28 HTTP, the
	// POST whose response stream carries it (FaultProgressCrossesStreams).
	owner    *session
	key      string // operation key, the checkpoint prefix
	token    jsonrpc.ProgressToken
	tokenKey string // "" when the request carried no token
	steps    int
	unit     float64
	noTotal  bool
	gated    bool
	// tick, when set, paces ungated checkpoints in real time: the slow
	// tool's interactive mode for `mcpflight call`. Tests never use it.
	tick time.Duration
	// logSteps asks the slow tool to log each step at level info.
	logSteps bool
	cpName   string // await only

	// Owned by the operation's goroutine.
	stepsDone int
}

// checkpoint is a named point of an operation. reachedCh and releasedCh
// are each closed once, by whoever first set the matching flag.
type checkpoint struct {
	reachedCh  chan struct{}
	releasedCh chan struct{}
	// Guarded by session.mu.
	reached, released bool
	requestID         jsonrpc.ID
	outcome           string
}

// session is one connection's handling of requests: a Serve call (stdio,
// in process), a 2025-11-25 HTTP session, or one 2026-07-28 POST. What it
// shares with other sessions sits behind two embedded pointers: *realm,
// the state requests act on (checkpoints, operations, accounting, tasks,
// subscriptions; see realm.go), and *output, the frames it writes.
// A 2025-11-25 session has a realm of its own; 2026-07-28 requests share
// a realm of the Server's (one per control scope), so that a second
// connection, or another POST, finds what an earlier request left.
type session struct {
	*realm
	*output

	srv    *Server
	ctx    context.Context
	cancel context.CancelFunc
	// wg counts the goroutines Serve (or the realm, for a POST) waits
	// for; sessions of one connection share it.
	wg *goroutines.Group

	emu sync.Mutex // Stderr

	// ansMu guards handlers and replies, kept apart from mu so that a
	// handler that panicked holding mu can still be answered.
	ansMu sync.Mutex
	// handlers counts live request goroutines by id key; replies counts
	// responses written to those ids (noteReply).
	handlers map[string]int
	replies  map[string]int

	// Guarded by mu (the realm's).
	level    int             // index into logLevels, -1 when not set
	known    map[string]bool // ids seen, under FaultCancelUnknownHitsOther only
	inflight map[string]*call
	tokens   map[string]*call

	// is2026 is set on a session that serves 2026-07-28 requests
	// (is2026.go): it validates each request's envelope and decorates
	// each result with resultType and serverInfo.
	is2026 bool
	// conn is the connection's modern routing (stdio and in process):
	// set on the 2025-11-25 session that reads the connection.
	conn *conn2026
	// post is the response stream of a 2026-07-28 POST (http2026.go).
	post *postStream
	// robust is the state of the robustness faults (faults_robust.go).
	robust robustState
}

// output is where a session's frames go. wmu serialises frames; ioMu
// guards the abort handshake. Sessions of one connection share it.
type output struct {
	w       io.Writer
	wmu     sync.Mutex
	ioMu    sync.Mutex
	writing bool
	aborted bool
	werr    error
}

func newSession(ctx context.Context, srv *Server, w io.Writer) *session {
	sctx, cancel := context.WithCancel(ctx)
	return &session{
		realm:    newRealm(""),
		output:   &output{w: w},
		srv:      srv,
		ctx:      sctx,
		cancel:   cancel,
		wg:       &goroutines.Group{},
		level:    -1,
		known:    map[string]bool{},
		inflight: map[string]*call{},
		tokens:   map[string]*call{},
		handlers: map[string]int{},
		replies:  map[string]int{},
	}
}

func (ss *session) has(f Fault) bool { return ss.srv.has(f) }

// spawnAux runs fn, which serves no request (a watcher), in a goroutine
// that Serve waits for. A panic in fn is logged and goes no further.
func (ss *session) spawnAux(fn func()) {
	if !ss.wg.Add() {
		return // the session is ending
	}
	ss.srv.live.Add(1)
	go func() {
		defer ss.wg.Done()
		defer ss.srv.live.Add(-1)
		defer func() {
			if p := recover(); p != nil {
				ss.logf("internal error: panic in a session goroutine: %v\n%s", p, debug.Stack())
			}
		}()
		fn()
	}()
}

// spawnReq runs fn, the handler of request id, in a goroutine that Serve
// waits for and that counts against Options.MaxInFlight until it returns.
// Every request is served by exactly one such goroutine, started by the
// reader (handleRequest) after admit let it in, unless the session is
// ending (goroutines): then none is, and the request is not answered.
//
// A panic in fn is logged to Stderr with its stack, and answered with
// -32603 unless fn had already answered id; the session goes on.
func (ss *session) spawnReq(id jsonrpc.ID, fn func()) {
	if !ss.wg.Add() {
		return // the session is ending: no handler, and no answer
	}
	key := id.Key()
	ss.ansMu.Lock()
	ss.handlers[key]++
	base := ss.replies[key]
	ss.ansMu.Unlock()
	ss.reqs.Add(1)
	ss.srv.live.Add(1)
	go func() {
		defer ss.wg.Done()
		defer ss.srv.live.Add(-1)
		if hook := ss.srv.opts.hook; hook != nil {
			defer hook(hookDone, id)
		}
		defer ss.reqs.Add(-1)
		defer func() {
			p := recover()
			ss.ansMu.Lock()
			answered := ss.replies[key] > base
			if ss.handlers[key]--; ss.handlers[key] <= 0 {
				delete(ss.handlers, key)
				delete(ss.replies, key)
			}
			ss.ansMu.Unlock()
			if p == nil {
				return
			}
			ss.logf("internal error: panic while handling request %s: %v\n%s", id, p, debug.Stack())
			if !answered {
				ss.replyError(id, codeInternalError, "Internal error", nil)
			}
		}()
		if hook := ss.srv.opts.hook; hook != nil {
			hook(hookHandler, id)
		}
		fn()
	}()
}

// noteReply records that a response to id is being written, for the panic
// handler of spawnReq. Only ids with a live handler are tracked, so the
// record stays as small as the requests in flight.
func (ss *session) noteReply(id jsonrpc.ID) {
	if !id.IsValid() {
		return
	}
	key := id.Key()
	ss.ansMu.Lock()
	if ss.handlers[key] > 0 {
		ss.replies[key]++
	}
	ss.ansMu.Unlock()
}

// Stages at which Options.hook is called.
const (
	// hookReader: the reader has admitted a request, before routing it.
	hookReader = "reader"
	// hookHandler: a request's goroutine starts, before its handler.
	hookHandler = "handler"
	// hookDone: a request's goroutine has left the in-flight count.
	hookDone = "done"
)

// admit decides whether a request may be handled now: a session has at
// most Options.MaxInFlight request goroutines (spawnReq). It is called by
// the reader (stdio) or with handleMu held (HTTP), the only places that
// start request goroutines, so the count cannot grow between admit and
// spawnReq. The refusal carries mcp.CodeTooManyRequests.
func (ss *session) admit() *rpcError {
	limit := ss.srv.opts.MaxInFlight
	if limit <= 0 {
		return nil
	}
	if n := ss.reqs.Load(); n >= int64(limit) {
		return &rpcError{code: mcp.CodeTooManyRequests, message: fmt.Sprintf("Too many requests: this session already has %d requests in flight (limit %d)", n, limit)}
	}
	return nil
}

// answersPingOverLimit reports whether a request the in-flight limit
// refused is a 2025-11-25 ping, which is answered anyway with its empty
// result by whoever refused it (the stdio reader, the HTTP handler): a
// ping holds no work, and PNG-1 asks for a prompt empty response, which
// a refusal is not. Answered there, without a goroutine, a flood of
// pings is bounded as refusals are, by the writes of their answers.
func (ss *session) answersPingOverLimit(method string) bool {
	return method == mcp.MethodPing && !ss.is2026 && !ss.has(FaultPingBroken)
}

// logf writes one diagnostic line to Stderr.
func (ss *session) logf(format string, args ...any) {
	line := fmt.Sprintf(format, args...) + "\n"
	ss.emu.Lock()
	defer ss.emu.Unlock()
	_, _ = io.WriteString(ss.srv.opts.Stderr, line)
}

// writeLine writes one frame and its newline with a single Write. After an
// abort or a failed write nothing more is written.
func (ss *session) writeLine(frame []byte) {
	ss.wmu.Lock()
	defer ss.wmu.Unlock()
	ss.ioMu.Lock()
	if ss.aborted || ss.werr != nil {
		ss.ioMu.Unlock()
		return
	}
	ss.writing = true
	ss.ioMu.Unlock()

	buf := make([]byte, 0, len(frame)+1)
	buf = append(append(buf, frame...), '\n')
	_, err := ss.w.Write(buf)

	ss.ioMu.Lock()
	ss.writing = false
	if err != nil && ss.werr == nil && !ss.aborted {
		ss.werr = err
	}
	ss.ioMu.Unlock()
	if err != nil {
		ss.logf("writing output: %v", err)
	}
}

// abort stops all output and wakes a write in progress.
func (ss *session) abort() {
	ss.ioMu.Lock()
	ss.aborted = true
	busy := ss.writing
	ss.ioMu.Unlock()
	if busy {
		wakeWriter(ss.w)
	}
}

func (ss *session) writeErr() error {
	ss.ioMu.Lock()
	defer ss.ioMu.Unlock()
	if ss.werr != nil {
		return fmt.Errorf("refserver: writing output: %w", ss.werr)
	}
	return nil
}

// idKey keys a request ID. Strings and integers stay apart, except under
// FaultIDTypeConfusion, which keys by the bare text.
func (ss *session) idKey(id jsonrpc.ID) string {
	if ss.has(FaultIDTypeConfusion) {
		return "t:" + idText(id)
	}
	return id.Key()
}

// respID is the ID a response carries: the request's, exactly (RPC-8),
// unless FaultIDTypeConfusion turns an integer-like string into an integer.
func (ss *session) respID(id jsonrpc.ID) jsonrpc.ID {
	if ss.has(FaultIDTypeConfusion) && id.IsString() {
		if n, err := strconv.ParseInt(idText(id), 10, 64); err == nil {
			return jsonrpc.IntID(n)
		}
	}
	return id
}

// idText is the ID without JSON quoting.
func idText(id jsonrpc.ID) string {
	if id.IsString() {
		if s, err := strconv.Unquote(id.String()); err == nil {
			return s
		}
	}
	return id.String()
}

// tokenText is the token without JSON quoting.
func tokenText(t jsonrpc.ProgressToken) string {
	if t.IsString() {
		if s, err := strconv.Unquote(t.String()); err == nil {
			return s
		}
	}
	return t.String()
}

// reply writes a success response; a 2026-07-28 result gets its
// resultType and serverInfo first (decorate).
func (ss *session) reply(id jsonrpc.ID, result any) {
	if ss.robustDrop(id) {
		return
	}
	if ss.is2026 {
		result = ss.decorate(result)
	}
	frame, err := jsonrpc.EncodeResult(ss.respID(id), result)
	if err != nil {
		ss.replyError(id, codeInternalError, "Internal error: cannot encode the result", nil)
		return
	}
	ss.noteReply(id)
	ss.writeLine(frame)
}

// replyError writes an error response; the absent ID is written as null.
func (ss *session) replyError(id jsonrpc.ID, code int, message string, data any) {
	if id.IsValid() && ss.robustDrop(id) {
		return
	}
	e := &jsonrpc.Error{Code: code, Message: message}
	if data != nil {
		if raw, err := json.Marshal(data); err == nil {
			e.Data = raw
		}
	}
	wire := id
	if id.IsValid() {
		wire = ss.respID(id)
	}
	frame, err := jsonrpc.EncodeError(wire, e)
	if err != nil {
		ss.logf("cannot encode error response: %v", err)
		return
	}
	ss.noteReply(id)
	ss.writeLine(frame)
}

// rpcError is a JSON-RPC error to answer with.
type rpcError struct {
	code    int
	message string
	// data, when not nil, is the error's data member.
	data any
}

func invalidParams(format string, args ...any) *rpcError {
	return &rpcError{code: codeInvalidParams, message: fmt.Sprintf(format, args...)}
}

// answer writes result or rerr for id.
func (ss *session) answer(id jsonrpc.ID, result any, rerr *rpcError) {
	if rerr != nil {
		ss.replyError(id, rerr.code, rerr.message, rerr.data)
		return
	}
	ss.reply(id, result)
}

// notify writes a notification.
func (ss *session) notify(method string, params any) {
	frame, err := jsonrpc.EncodeNotification(method, params)
	if err != nil {
		ss.logf("cannot encode %s: %v", method, err)
		return
	}
	ss.writeLine(frame)
}

// handleFrame handles one input frame in the reading goroutine (or under
// handleMu over HTTP). A non-nil error ends the session (crash fault).
//
// A panic while the frame is handled is logged to Stderr with its stack;
// a request whose handler had not started yet is answered with -32603,
// and the session goes on. A notification is never answered (RPC-15).
func (ss *session) handleFrame(raw []byte) error { return ss.handleDecoded(raw, nil) }

// handleDecoded is handleFrame for a frame already decoded as msg (nil:
// not decoded yet).
func (ss *session) handleDecoded(raw []byte, msg *jsonrpc.Message) (err error) {
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		err = nil
		ss.logf("internal error: panic while handling an input frame: %v\n%s", p, debug.Stack())
		msg, derr := jsonrpc.Decode(raw)
		if derr != nil || msg.Kind != jsonrpc.KindRequest {
			return
		}
		ss.ansMu.Lock()
		started := ss.handlers[msg.ID.Key()] > 0
		ss.ansMu.Unlock()
		if !started {
			ss.replyError(msg.ID, codeInternalError, "Internal error", nil)
		}
	}()
	return ss.decodeAndRoute(raw, msg)
}

// decodeAndRoute is handleDecoded without its panic guard.
func (ss *session) decodeAndRoute(raw []byte, msg *jsonrpc.Message) error {
	var err error
	if msg == nil && ss.robustSwallow() {
		return nil
	}
	if msg == nil {
		msg, err = jsonrpc.Decode(raw)
	}
	if err != nil {
		var de *jsonrpc.DecodeError
		class := "unknown"
		if errors.As(err, &de) {
			class = string(de.Class)
		}
		ss.logf("malformed input (%s): %v", class, err)
		if err := ss.robustMalformed(raw, class); err != nil {
			return err
		}
		// JSON-RPC 2.0 §5: the id is null when it could not be read.
		if class == string(jsonrpc.ClassParse) || class == string(jsonrpc.ClassInvalidUTF8) {
			ss.replyError(parseErrorID(ss.has), codeParseError, "Parse error", map[string]string{"class": class})
		} else {
			// A request whose id could be read gets it back (RPC-11).
			ss.replyError(readableRequestID(raw), codeInvalidRequest, "Invalid Request", map[string]string{"class": class})
		}
		return nil
	}
	switch msg.Kind {
	case jsonrpc.KindNotification:
		return ss.handleNotification(msg)
	case jsonrpc.KindRequest:
		if msg.ID == jsonrpc.IntID(0) && ss.has(FaultIDZeroAbsent) {
			ss.logf("request %s with id 0 taken for a notification (fault %s)", msg.Method, FaultIDZeroAbsent)
			return nil
		}
		if err := ss.listenCrash(msg); err != nil {
			return err
		}
		ss.handleRequest(msg)
	default:
		// This server sends no requests, so no response is expected.
		ss.logf("ignoring unexpected %s with id %s", msg.Kind, msg.ID)
	}
	return nil
}

// readableRequestID is the id of a malformed frame that is a JSON object
// with a method member and a valid request id (a string or an integer),
// such as a request with the wrong "jsonrpc" version; otherwise the
// absent ID, written as null. Frames without a method are not requests
// and keep a null id.
func readableRequestID(raw []byte) jsonrpc.ID {
	var w struct {
		ID     json.RawMessage `json:"id"`
		Method json.RawMessage `json:"method"`
	}
	if json.Unmarshal(raw, &w) != nil || w.Method == nil || w.ID == nil {
		return jsonrpc.ID{}
	}
	id, err := jsonrpc.ParseID(w.ID)
	if err != nil {
		return jsonrpc.ID{}
	}
	return id
}

// handleNotification handles a notification; it never answers (RPC-15)
// unless FaultErrorOnNotification says so.
func (ss *session) handleNotification(msg *jsonrpc.Message) error {
	switch msg.Method {
	case mcp.NotificationCancelled:
		if err := ss.handleCancel(msg.Params); err != nil {
			return err
		}
	case mcp.NotificationInitialized:
		ss.logf("client initialized")
	default:
		ss.logf("ignoring notification %s", strconv.Quote(msg.Method))
	}
	if ss.has(FaultErrorOnNotification) {
		ss.replyError(jsonrpc.ID{}, codeInvalidRequest, "Notification rejected", nil)
	}
	return nil
}

// objectParams reads params as a JSON object; absent or null params are
// an empty object.
func objectParams(raw json.RawMessage) (map[string]json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	if len(raw) == 0 {
		return m, nil
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(raw, &got); err != nil {
		return nil, errors.New("params must be an object")
	}
	for k, v := range got {
		m[k] = v
	}
	return m, nil
}

// handleRequest routes a request. State that later frames depend on is
// changed here, before the next frame is read; the answer is written from
// the request's own goroutine.
func (ss *session) handleRequest(msg *jsonrpc.Message) {
	id := msg.ID
	if ss.conn.route(msg) {
		return // a 2026-07-28 request, handled in its realm (server2026.go)
	}
	if rerr := ss.admit(); rerr != nil {
		// Answered at once by the reader: no goroutine, no state change.
		if ss.answersPingOverLimit(msg.Method) {
			ss.reply(id, struct{}{}) // PNG-1
			return
		}
		ss.logf("request %s (%s) refused: %s", id, strconv.Quote(msg.Method), rerr.message)
		ss.replyError(id, rerr.code, rerr.message, map[string]int{"limit": ss.srv.opts.MaxInFlight})
		return
	}
	if hook := ss.srv.opts.hook; hook != nil {
		hook(hookReader, id)
	}
	if ss.has(FaultCancelUnknownHitsOther) {
		// Only that fault asks whether an id was ever seen; a
		// conforming session does not keep every id it was sent.
		ss.mu.Lock()
		ss.known[ss.idKey(id)] = true
		ss.mu.Unlock()
	}

	if ss.is2026 {
		ss.handleRequest2026(msg)
		return
	}
	params, perr := objectParams(msg.Params)
	if perr != nil {
		ss.spawnReq(id, func() { ss.answer(id, nil, invalidParams("Invalid params: %v", perr)) })
		return
	}
	if ss.robustRequest(id, msg.Method, params) {
		return
	}
	switch msg.Method {
	case mcp.MethodInitialize:
		res, rerr := ss.initialize(params)
		ss.spawnReq(id, func() { ss.answer(id, res, rerr) })
	case mcp.MethodPing:
		ss.spawnReq(id, func() {
			if ss.has(FaultPingBroken) {
				ss.replyError(id, codeInternalError, "Internal error", nil)
				return
			}
			ss.reply(id, struct{}{}) // PNG-1
		})
	case mcp.MethodToolsList:
		if rerr := invalidCursor(params); rerr != nil {
			ss.spawnReq(id, func() { ss.answer(id, nil, rerr) })
			return
		}
		ss.spawnReq(id, func() { ss.reply(id, map[string]any{"tools": ss.listTools()}) })
	case mcp.MethodLoggingSetLevel:
		rerr := ss.setLevel(params)
		ss.spawnReq(id, func() { ss.answer(id, struct{}{}, rerr) })
	case mcp.MethodToolsCall:
		ss.toolsCall(id, params)
	default:
		if ss.controlRequest(id, msg.Method, params) || ss.taskMethod(id, msg.Method, params) {
			return
		}
		ss.spawnReq(id, func() {
			ss.replyError(id, codeMethodNotFound, "Method not found", map[string]string{"method": msg.Method})
		})
	}
}

// initialize answers the handshake (LIF-3, LIF-9, LIF-10).
func (ss *session) initialize(params map[string]json.RawMessage) (any, *rpcError) {
	var requested string
	raw, ok := params["protocolVersion"]
	if !ok || json.Unmarshal(raw, &requested) != nil {
		return nil, invalidParams("Invalid params: protocolVersion must be a string")
	}
	version := LatestProtocolVersion
	for _, v := range SupportedProtocolVersions() {
		if v == requested {
			version = v
		}
	}
	if ss.has(FaultVersionMismatch) {
		version = "1999-01-01"
	}
	ss.logf("initialize: client asked for %s, answering %s", strconv.Quote(requested), version)
	caps := ss.srv.capabilities()
	if !ss.srv.opts.NoTasks {
		caps["tasks"] = ss.taskCapability()
	}
	return map[string]any{
		"protocolVersion": version,
		"capabilities":    caps,
		"serverInfo": map[string]any{
			"name":    ss.srv.opts.Name,
			"version": ss.srv.opts.Version,
		},
	}, nil
}

// coreCapabilities are the capabilities of both eras: tools, logging and
// the control extension.
func coreCapabilities() map[string]any {
	return map[string]any{
		"tools":   map[string]any{},
		"logging": map[string]any{},
		"experimental": map[string]any{
			mcp.ControlCapability: map[string]any{"version": ControlVersion},
		},
	}
}

// handleCancel applies notifications/cancelled (CAN-8, CAN-14). It never
// answers; it returns an error only under FaultCrashOnMalformedCancel.
func (ss *session) handleCancel(raw json.RawMessage) error {
	id, reason, ok := parseCancel(raw)
	if !ok {
		if ss.has(FaultCrashOnMalformedCancel) {
			ss.logf("malformed cancel: crashing (fault %s)", FaultCrashOnMalformedCancel)
			return fmt.Errorf("%w: malformed notifications/cancelled (fault %s)", ErrCrash, FaultCrashOnMalformedCancel)
		}
		ss.logf("ignoring malformed cancel: no valid requestId")
		return nil
	}
	key := ss.idKey(id)
	ss.mu.Lock()
	c := ss.inflight[key]
	if c == nil && !ss.known[key] && ss.has(FaultCancelUnknownHitsOther) {
		c = ss.latestRunningOp()
	}
	ss.mu.Unlock()
	target := ss
	if c == nil {
		// A 2026-07-28 request of the connection (server2026.go).
		if m, mc := ss.conn.inflightCall(id); mc != nil {
			target, c = m, mc
		}
	}
	if c == nil && ss.has(FaultNotificationCancelsTask) && ss.cancelTaskByRequest(key) {
		return nil
	}
	if c == nil {
		ss.logf("ignoring cancel of request %s: not in flight", id)
		return nil
	}
	target.acceptCancel(c, id, reason)
	return nil
}

// acceptCancel cancels c, the request id, if it is still running: no
// frame of it is written after this returns (CAN-8, CAN-54).
func (ss *session) acceptCancel(c *call, id jsonrpc.ID, reason string) {
	c.sendMu.Lock()
	ss.mu.Lock()
	state := c.state
	accepted := state == stateRunning
	if accepted {
		c.state = stateCancelled
		if ss.inflight[c.idKey] == c {
			delete(ss.inflight, c.idKey)
		}
		// The token dies with the request, so the client may reuse it
		// at once (PRG-2).
		if c.tokenKey != "" && ss.tokens[c.tokenKey] == c {
			delete(ss.tokens, c.tokenKey)
		}
		close(c.cancelled)
	}
	ss.mu.Unlock()
	c.sendMu.Unlock()

	if accepted {
		ss.logf("cancel of request %s (%s) accepted, reason %s", c.id, c.describe(), strconv.Quote(reason))
		if ss.is2026 {
			ss.cancelled2026(c)
		}
	} else {
		ss.logf("ignoring cancel of request %s (%s): already %s", id, c.describe(), state)
	}
}

// latestRunningOp is the most recently started running operation, or nil.
// Caller holds mu.
func (ss *session) latestRunningOp() *call {
	var best *call
	for _, c := range ss.inflight {
		if c.kind != kindAwait && c.state == stateRunning && (best == nil || c.seq > best.seq) {
			best = c
		}
	}
	return best
}

// parseCancel reads CancelledNotificationParams. Extra members are
// allowed, as everywhere in MCP params; a reason that is not a string is
// ignored. ok is false when params or a valid requestId is missing.
func parseCancel(raw json.RawMessage) (id jsonrpc.ID, reason string, ok bool) {
	if len(raw) == 0 {
		return id, "", false
	}
	params, err := objectParams(raw)
	if err != nil {
		return id, "", false
	}
	rid, present := params["requestId"]
	if !present {
		return id, "", false
	}
	id, err = jsonrpc.ParseID(rid)
	if err != nil {
		return id, "", false
	}
	if r, present := params["reason"]; present {
		_ = json.Unmarshal(r, &reason)
	}
	return id, reason, true
}
