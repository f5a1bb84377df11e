// Package gosdkcontrol gives a server built on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk) mcpflight's test-only control
// extension, io.mcpflight/control (docs/control-extension.md), and an
// observer tool (docs/observer.md), without changing its tool handlers.
//
//	server := mcp.NewServer(impl, nil)
//	mcp.AddTool(server, slowTool, slow)          // the handlers as they are
//	ctl := gosdkcontrol.New()
//	if err := ctl.Install(server); err != nil { … }
//	server.Run(ctx, ctl.Transport(&mcp.StdioTransport{}))
//
// Install adds receiving and sending middleware and three custom methods
// (mcpflight/await, mcpflight/release, mcpflight/counters), advertises
// the extension in the initialize result, and adds the tool
// mcpflight_observer. A tools/call whose arguments hold "key" becomes a
// controlled operation: "key" and "gated" are taken out of the arguments
// before the handler sees them, the operation waits at KEY/start before
// the handler runs, each progress notification the handler sends reaches
// KEY/step/i (and waits there when gated), and KEY/end is reached once the
// handler has returned and its response is written. The counters count
// operations, their resource releases (one when the handler returns),
// live progress tokens and the side effects handlers report with
// EffectApplied.
//
// Transport wraps a stream transport (stdio, IOTransport, in-memory) so
// that KEY/end comes after the response is on the wire, as the extension
// promises. Over Streamable HTTP, where each request has its own stream,
// the server is used without it, and KEY/end is reached when the handler
// returns.
//
// The extension lets a client hold a server's work indefinitely: enable it
// in tests only.
package gosdkcontrol

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Wire names of the extension (docs/control-extension.md) and of the
// observer tool.
const (
	Capability     = "io.mcpflight/control"
	Version        = 1
	MethodAwait    = "mcpflight/await"
	MethodRelease  = "mcpflight/release"
	MethodCounters = "mcpflight/counters"
	// ObserverTool is the observer tool's name. Its structuredContent is
	// Observation; the profile entry is
	//
	//	observer: {tool: mcpflight_observer, started: /started, completed: /completed, cancelled: /cancelled, lastStep: /lastStep}
	ObserverTool = "mcpflight_observer"
)

// Outcomes of KEY/end.
const (
	OutcomeCompleted = "completed"
	OutcomeCancelled = "cancelled"
)

// Control is the extension's state for one mcp.Server: checkpoints and
// counters per session, the observer's counts across sessions.
type Control struct {
	mu       sync.Mutex
	sessions map[string]*session
	conns    int
	obs      Observation
}

// New returns a Control to Install on one server.
func New() *Control {
	return &Control{sessions: map[string]*session{}}
}

// Install adds the extension and the observer tool to s. Call it once,
// before s serves anything; tools added before or after are controlled
// alike.
func (c *Control) Install(s *mcp.Server) error {
	s.AddReceivingMiddleware(c.receiving)
	s.AddSendingMiddleware(c.sending)
	if err := mcp.AddReceivingCustomMethod(s, MethodAwait, c.await); err != nil {
		return fmt.Errorf("gosdkcontrol: %w", err)
	}
	if err := mcp.AddReceivingCustomMethod(s, MethodRelease, c.release); err != nil {
		return fmt.Errorf("gosdkcontrol: %w", err)
	}
	if err := mcp.AddReceivingCustomMethod(s, MethodCounters, c.counters); err != nil {
		return fmt.Errorf("gosdkcontrol: %w", err)
	}
	mcp.AddTool(s, &mcp.Tool{
		Name:        ObserverTool,
		Description: "Test-only (mcpflight): how the tool handlers ended, across every session (docs/observer.md).",
	}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, Observation, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return nil, c.obs, nil
	})
	return nil
}

// Observation is the observer tool's answer: tool handlers started, ended
// on their own (completed), and ended after their request was cancelled,
// across every session; and the progress step most recently reached.
type Observation struct {
	Started   int `json:"started"`
	Completed int `json:"completed"`
	Cancelled int `json:"cancelled"`
	Running   int `json:"running"`
	LastStep  int `json:"lastStep"`
}

// session is the state of one MCP session: its checkpoints and
// operations. Guarded by mu.
type session struct {
	id      string
	wrapped bool // its connection came through Transport

	mu          sync.Mutex
	checkpoints map[string]*checkpoint
	ops         map[string]*operation // by key
	tokens      map[string]*operation // by the token's JSON
	// idsByKey is the request ID of each controlled tools/call, as read
	// by the wrapped connection, by key.
	idsByKey map[string]json.RawMessage
	// ends are the KEY/end marks waiting for their response to be
	// written, by the request ID's JSON.
	ends                                         map[string]func()
	started, active, completed, cancelled, freed int
	effects                                      int
}

// checkpoint is one named checkpoint of a session.
type checkpoint struct {
	reached    bool
	reachedCh  chan struct{}
	released   bool
	releasedCh chan struct{}
	requestID  json.RawMessage
	outcome    string
}

// operation is one controlled tools/call.
type operation struct {
	key          string
	requestID    json.RawMessage
	gated        bool
	tokenKey     string
	ctx          context.Context
	state        string // running, completed, cancelled
	releases     int
	progressSent int
}

// state returns the session with id, made on first use. A session that
// did not come through Transport (Streamable HTTP) is forgotten when it
// ends.
func (c *Control) state(ss *mcp.ServerSession) *session {
	id := ss.ID()
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.sessions[id]; st != nil {
		return st
	}
	st := newSession(id, false)
	c.sessions[id] = st
	go func() {
		_ = ss.Wait()
		c.forget(st)
	}()
	return st
}

func newSession(id string, wrapped bool) *session {
	return &session{id: id, wrapped: wrapped, checkpoints: map[string]*checkpoint{}, ops: map[string]*operation{},
		tokens: map[string]*operation{}, idsByKey: map[string]json.RawMessage{}, ends: map[string]func(){}}
}

func (c *Control) forget(st *session) {
	c.mu.Lock()
	if c.sessions[st.id] == st {
		delete(c.sessions, st.id)
	}
	c.mu.Unlock()
}

func (st *session) checkpointLocked(name string) *checkpoint {
	cp := st.checkpoints[name]
	if cp == nil {
		cp = &checkpoint{reachedCh: make(chan struct{}), releasedCh: make(chan struct{})}
		st.checkpoints[name] = cp
	}
	return cp
}

// mark reaches a checkpoint (once per session).
func (st *session) mark(op *operation, name, outcome string) *checkpoint {
	st.mu.Lock()
	defer st.mu.Unlock()
	cp := st.checkpointLocked(name)
	if !cp.reached {
		cp.reached, cp.requestID, cp.outcome = true, op.requestID, outcome
		close(cp.reachedCh)
	}
	return cp
}

// reach marks a checkpoint and, for a gated operation, waits until it is
// released or the request ends (cancelled, or its session over). It
// reports whether the operation may go on.
func (st *session) reach(op *operation, name string) bool {
	cp := st.mark(op, name, "")
	if op.gated {
		select {
		case <-cp.releasedCh:
		case <-op.ctx.Done():
		}
	}
	return op.ctx.Err() == nil
}

type opKey struct{}

// receiving is the middleware of every request the server receives.
func (c *Control) receiving(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "initialize":
			res, err := next(ctx, method, req)
			if r, ok := res.(*mcp.InitializeResult); ok && err == nil {
				advertise(r)
			}
			return res, err
		case "tools/call":
			if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil && r.Params.Name != ObserverTool {
				return c.toolsCall(ctx, next, method, r)
			}
		}
		return next(ctx, method, req)
	}
}

// advertise adds the extension to the initialize result's experimental
// capabilities, in a copy: the SDK may share the map between sessions.
func advertise(r *mcp.InitializeResult) {
	caps := &mcp.ServerCapabilities{}
	if r.Capabilities != nil {
		*caps = *r.Capabilities
	}
	exp := maps.Clone(caps.Experimental)
	if exp == nil {
		exp = map[string]any{}
	}
	exp[Capability] = map[string]any{"version": Version}
	caps.Experimental = exp
	r.Capabilities = caps
}

// errInvalidParams is a JSON-RPC -32602 error.
func errInvalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: " + fmt.Sprintf(format, args...)}
}

// toolsCall runs one tool handler, controlled when its arguments name a
// key, and counts it for the observer either way.
func (c *Control) toolsCall(ctx context.Context, next mcp.MethodHandler, method string, r *mcp.CallToolRequest) (mcp.Result, error) {
	key, gated, args, err := controlArgs(r.Params.Arguments)
	if err != nil {
		return nil, err
	}
	if key == "" {
		c.mu.Lock()
		c.obs.Started++
		c.obs.Running++
		c.mu.Unlock()
		res, err := next(ctx, method, r)
		c.ended(ctx, res, err)
		return res, err
	}
	r.Params.Arguments = args
	st := c.state(r.Session)
	op := &operation{key: key, gated: gated, state: "running"}
	if tok := r.Params.GetProgressToken(); tok != nil {
		b, _ := json.Marshal(tok)
		op.tokenKey = string(b)
	}
	st.mu.Lock()
	switch {
	case st.ops[key] != nil:
		st.mu.Unlock()
		return nil, errInvalidParams("key %s is already used in this session", strconv.Quote(key))
	case op.tokenKey != "" && st.tokens[op.tokenKey] != nil:
		st.mu.Unlock()
		return nil, errInvalidParams("progress token already in use")
	}
	op.requestID = st.idsByKey[key]
	st.ops[key] = op
	if op.tokenKey != "" {
		st.tokens[op.tokenKey] = op
	}
	st.started++
	st.active++
	st.mu.Unlock()
	c.mu.Lock()
	c.obs.Started++
	c.obs.Running++
	c.mu.Unlock()

	ctx = context.WithValue(ctx, opKey{}, op)
	op.ctx = ctx
	var res mcp.Result
	if st.reach(op, key+"/start") {
		res, err = next(ctx, method, r)
	} else {
		err = ctx.Err()
	}
	outcome := c.ended(ctx, res, err)
	st.mu.Lock()
	op.state = outcome
	op.releases++
	st.freed++
	st.active--
	if outcome == OutcomeCancelled {
		st.cancelled++
	} else {
		st.completed++
	}
	if op.tokenKey != "" && st.tokens[op.tokenKey] == op {
		delete(st.tokens, op.tokenKey)
	}
	end := func() { st.mark(op, key+"/end", outcome) }
	if st.wrapped && op.requestID != nil {
		// The wrapped connection marks it once the response is written.
		st.ends[string(op.requestID)] = end
		end = nil
	}
	st.mu.Unlock()
	if end != nil {
		end()
	}
	return res, err
}

// ended counts a handler's end for the observer and returns its outcome:
// cancelled when its request was cancelled and it gave up (an error, or
// an isError result, which is how the SDK reports a handler's error);
// completed when it delivered a result, cancel or not.
func (c *Control) ended(ctx context.Context, res mcp.Result, err error) string {
	outcome := OutcomeCompleted
	if ctx.Err() != nil {
		if tr, ok := res.(*mcp.CallToolResult); err != nil || (ok && tr.IsError) {
			outcome = OutcomeCancelled
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.obs.Running--
	if outcome == OutcomeCancelled {
		c.obs.Cancelled++
	} else {
		c.obs.Completed++
	}
	return outcome
}

// controlArgs takes "key" and "gated" out of a tool's arguments. A call
// without a string key is not controlled, and its arguments are left
// alone.
func controlArgs(raw json.RawMessage) (key string, gated bool, rest json.RawMessage, err error) {
	var args map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &args) != nil {
		return "", false, raw, nil
	}
	rawKey, ok := args["key"]
	if !ok || json.Unmarshal(rawKey, &key) != nil || key == "" {
		return "", false, raw, nil
	}
	gated = true
	if g, ok := args["gated"]; ok {
		if err := json.Unmarshal(g, &gated); err != nil {
			return "", false, nil, errInvalidParams("gated must be a boolean")
		}
	}
	delete(args, "key")
	delete(args, "gated")
	rest, err = json.Marshal(args)
	return key, gated, rest, err
}

// sending is the middleware of everything the server sends: a progress
// notification of a controlled operation reaches its next step
// checkpoint once it has been sent, and waits there when gated.
func (c *Control) sending(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "notifications/progress" || err != nil {
			return res, err
		}
		op, _ := ctx.Value(opKey{}).(*operation)
		if op == nil {
			return res, err
		}
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if ss == nil {
			return res, err
		}
		st := c.state(ss)
		st.mu.Lock()
		op.progressSent++
		step := op.progressSent
		st.mu.Unlock()
		c.mu.Lock()
		c.obs.LastStep = step
		c.mu.Unlock()
		if !st.reach(op, op.key+"/step/"+strconv.Itoa(step)) {
			return res, op.ctx.Err()
		}
		return res, err
	}
}

// CheckpointParams are the params of mcpflight/await and mcpflight/release.
type CheckpointParams struct {
	mcp.ParamsBase
	Checkpoint *string `json:"checkpoint"`
}

// Reached is the answer to mcpflight/await.
type Reached struct {
	mcp.ResultBase
	Checkpoint string          `json:"checkpoint"`
	RequestID  json.RawMessage `json:"requestId"`
	Outcome    string          `json:"outcome"`
}

// Empty is the answer to mcpflight/release.
type Empty struct {
	mcp.ResultBase
}

func checkpointName(p *CheckpointParams) (string, error) {
	if p == nil || p.Checkpoint == nil || *p.Checkpoint == "" {
		return "", errInvalidParams("checkpoint must be a non-empty string")
	}
	return *p.Checkpoint, nil
}

// await blocks until the checkpoint has been reached in this session.
func (c *Control) await(ctx context.Context, ss *mcp.ServerSession, p *CheckpointParams) (*Reached, error) {
	name, err := checkpointName(p)
	if err != nil {
		return nil, err
	}
	st := c.state(ss)
	st.mu.Lock()
	cp := st.checkpointLocked(name)
	st.mu.Unlock()
	select {
	case <-cp.reachedCh:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	id := cp.requestID
	if id == nil {
		id = json.RawMessage("null")
	}
	return &Reached{Checkpoint: name, RequestID: id, Outcome: cp.outcome}, nil
}

// release opens a gate, now or in advance.
func (c *Control) release(_ context.Context, ss *mcp.ServerSession, p *CheckpointParams) (*Empty, error) {
	name, err := checkpointName(p)
	if err != nil {
		return nil, err
	}
	st := c.state(ss)
	st.mu.Lock()
	defer st.mu.Unlock()
	cp := st.checkpointLocked(name)
	if !cp.released {
		cp.released = true
		close(cp.releasedCh)
	}
	return &Empty{}, nil
}

// CountersParams are the (empty) params of mcpflight/counters.
type CountersParams struct {
	mcp.ParamsBase
}

// Operation is one controlled operation in the counters.
type Operation struct {
	RequestID    json.RawMessage `json:"requestId"`
	State        string          `json:"state"`
	Releases     int             `json:"releases"`
	ProgressSent int             `json:"progressSent"`
}

// Counters is the answer to mcpflight/counters.
type Counters struct {
	mcp.ResultBase
	OperationsStarted   int                  `json:"operationsStarted"`
	OperationsActive    int                  `json:"operationsActive"`
	OperationsCompleted int                  `json:"operationsCompleted"`
	OperationsCancelled int                  `json:"operationsCancelled"`
	ResourcesReleased   int                  `json:"resourcesReleased"`
	ProgressTokensLive  int                  `json:"progressTokensLive"`
	EffectsApplied      int                  `json:"effectsApplied"`
	Operations          map[string]Operation `json:"operations"`
}

func (c *Control) counters(_ context.Context, ss *mcp.ServerSession, _ *CountersParams) (*Counters, error) {
	st := c.state(ss)
	st.mu.Lock()
	defer st.mu.Unlock()
	out := &Counters{
		OperationsStarted: st.started, OperationsActive: st.active, OperationsCompleted: st.completed,
		OperationsCancelled: st.cancelled, ResourcesReleased: st.freed, ProgressTokensLive: len(st.tokens),
		EffectsApplied: st.effects, Operations: map[string]Operation{},
	}
	for k, op := range st.ops {
		id := op.requestID
		if id == nil {
			id = json.RawMessage("null")
		}
		out.Operations[k] = Operation{RequestID: id, State: op.state, Releases: op.releases, ProgressSent: op.progressSent}
	}
	return out, nil
}

// ErrNotControlled is returned by EffectApplied for a context that is not
// a controlled operation's.
var ErrNotControlled = errors.New("gosdkcontrol: not the context of a controlled tool call")

// EffectApplied counts one side effect of the controlled operation whose
// handler got ctx (effectsApplied in the counters): call it when the
// effect is committed, so that a checker can tell that a cancelled call
// applied none.
func (c *Control) EffectApplied(ctx context.Context, ss *mcp.ServerSession) error {
	if _, ok := ctx.Value(opKey{}).(*operation); !ok || ss == nil {
		return ErrNotControlled
	}
	st := c.state(ss)
	st.mu.Lock()
	st.effects++
	st.mu.Unlock()
	return nil
}
