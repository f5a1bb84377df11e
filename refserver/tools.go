package refserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
)

// Tool names.
const (
	ToolSlow   = "slow"
	ToolEffect = "effect"
	ToolLog    = "log"
)

// Limits on tool arguments, so that any input stays cheap.
const (
	maxSteps = 1000
	maxUnit  = 1e9
)

// InventedToken is the token FaultProgressWithoutToken makes up.
const InventedToken = "mcpflight-invented"

// logLevels are the RFC 5424 severities, least severe first (LOG-2).
func logLevels() []string {
	return []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
}

// levelIndex returns the severity rank of name, or -1.
func levelIndex(name string) int {
	for i, l := range logLevels() {
		if l == name {
			return i
		}
	}
	return -1
}

// toolList is the tools/list result.
func toolList() []map[string]any {
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	return []map[string]any{
		{
			"name": ToolSlow,
			"description": "Runs `steps` steps. Sends notifications/progress (progress = i*unit) when the request has a progress token. " +
				"Checkpoints KEY/start, KEY/step/i and KEY/end; when gated, KEY/start and KEY/step/i wait for mcpflight/release. Cancellable at every checkpoint.",
			"inputSchema": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"key":      str("names the operation and prefixes its checkpoints (the control extension); without it the call is an ordinary one: ungated, one step every 250ms unless tickMs says otherwise"),
					"steps":    map[string]any{"type": "integer", "minimum": 0, "maximum": maxSteps, "default": 3},
					"unit":     map[string]any{"type": "number", "exclusiveMinimum": 0, "default": 1},
					"noTotal":  map[string]any{"type": "boolean", "default": false, "description": "omit total from progress"},
					"gated":    map[string]any{"type": "boolean", "default": true, "description": "checkpoints wait for mcpflight/release (with a key only)"},
					"tickMs":   map[string]any{"type": "integer", "minimum": 0, "description": "interactive mode: advance one step every tickMs milliseconds instead of waiting at gates"},
					"logSteps": map[string]any{"type": "boolean", "default": false, "description": "send notifications/message (info) at each step"},
				},
				"additionalProperties": false,
			},
		},
		{
			"name": ToolEffect,
			"description": "Waits at the gate KEY/start, then applies one side effect and returns its receipt. " +
				"Cancelled before the gate opens, it applies nothing. Checkpoints KEY/start and KEY/end.",
			"inputSchema": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"key":   str("names the operation and prefixes its checkpoints"),
					"gated": map[string]any{"type": "boolean", "default": true, "description": "KEY/start waits for mcpflight/release"},
				},
				"required":             []string{"key"},
				"additionalProperties": false,
			},
		},
		{
			"name":        ToolLog,
			"description": "Sends one notifications/message per entry whose level is at or above the session's logging level, then returns.",
			"inputSchema": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"messages": map[string]any{
						"type": "array",
						"items": map[string]any{
							"type": "object",
							"properties": map[string]any{
								"level":  map[string]any{"type": "string", "enum": logLevels()},
								"logger": map[string]any{"type": "string"},
								"data":   map[string]any{},
							},
							"required": []string{"level"},
						},
					},
				},
				"required":             []string{"messages"},
				"additionalProperties": false,
			},
		},
		observerTool(),
	}
}

// textContent is a TextContent block.
type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// receipt is the effect tool's structuredContent.
type receipt struct {
	Receipt string `json:"receipt"`
	Applied bool   `json:"applied"`
}

// toolResult is a CallToolResult.
type toolResult struct {
	Content           []textContent `json:"content"`
	StructuredContent *receipt      `json:"structuredContent,omitempty"`
	IsError           bool          `json:"isError"`
}

// textResult is a CallToolResult with one text block.
func textResult(text string) toolResult {
	return toolResult{Content: []textContent{{Type: "text", Text: text}}}
}

// strictDecode decodes raw into v, refusing unknown members.
func strictDecode(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = json.RawMessage(`{}`)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data")
	}
	return nil
}

// toolsCall handles tools/call. Operations are registered before the next
// frame is read, so a cancel that follows the call always finds it.
func (ss *session) toolsCall(id jsonrpc.ID, params map[string]json.RawMessage) {
	name, token, tokenKey, ok := ss.toolHead(id, params)
	if !ok {
		return
	}
	if ss.taskCall(id, name, params, token) {
		return
	}
	ss.callTool(id, name, params["arguments"], token, tokenKey, logPolicy{})
}

// toolHead reads a tools/call's name and progress token; a request
// without them is answered -32602 and ok is false.
func (ss *session) toolHead(id jsonrpc.ID, params map[string]json.RawMessage) (name string, token jsonrpc.ProgressToken, tokenKey string, ok bool) {
	fail := func(rerr *rpcError) { ss.spawnReq(id, func() { ss.answer(id, nil, rerr) }) }
	if raw, present := params["name"]; !present || json.Unmarshal(raw, &name) != nil {
		fail(invalidParams("Invalid params: name must be a string"))
		return "", token, "", false
	}
	token, tokenKey, rerr := progressToken(params[mcp.MetaKey])
	if rerr != nil {
		fail(rerr)
		return "", token, "", false
	}
	return name, token, tokenKey, true
}

// logPolicy says which log messages a request may cause. The zero value
// is 2025-11-25's: the session's level, set by logging/setLevel. A
// 2026-07-28 request sets its own (perRequest, LOG-41..43).
type logPolicy struct {
	perRequest bool
	// floor is the request's level (an index into logLevels), or -1: the
	// request asked for no log messages at all.
	floor int
}

// callTool runs the ordinary (not task) call of a tool.
func (ss *session) callTool(id jsonrpc.ID, name string, args json.RawMessage, token jsonrpc.ProgressToken, tokenKey string, lp logPolicy) {
	fail := func(rerr *rpcError) { ss.spawnReq(id, func() { ss.answer(id, nil, rerr) }) }
	switch name {
	case ToolSlow:
		a, rerr := parseSlowArgs(args)
		if rerr == errNoKey {
			// An ordinary call: no key names checkpoints a client could
			// await or release, so nothing is gated (see ordinarySlow).
			a, rerr = ss.ordinarySlow(args)
		}
		if rerr != nil {
			fail(rerr)
			return
		}
		c := &call{kind: kindSlow, key: a.key, steps: a.steps, unit: a.unit, noTotal: a.noTotal,
			gated: a.gated, logSteps: a.logSteps && ss.logsAt(lp, "info"), tick: a.tick}
		ss.startOp(id, c, token, tokenKey, ss.runSlow)
	case ToolEffect:
		var a struct {
			Key   *string `json:"key"`
			Gated *bool   `json:"gated"`
		}
		if err := strictDecode(args, &a); err != nil {
			fail(invalidParams("Invalid params: effect arguments: %v", err))
			return
		}
		if a.Key == nil || *a.Key == "" {
			fail(invalidParams("Invalid params: effect needs a non-empty key"))
			return
		}
		c := &call{kind: kindEffect, key: *a.Key, steps: 1, unit: 1, gated: true}
		if a.Gated != nil {
			c.gated = *a.Gated
		}
		ss.startOp(id, c, token, tokenKey, ss.runEffect)
	case ToolLog:
		ss.logTool(id, args, lp)
	case ToolObserver:
		ss.observerCall(id, args)
	default:
		fail(invalidParams("Invalid params: unknown tool %s", strconv.Quote(name)))
	}
}

// progressToken reads params._meta.progressToken. A token that is not a
// string or an integer is refused (PRG-1); tokenKey is "" when absent.
func progressToken(meta json.RawMessage) (jsonrpc.ProgressToken, string, *rpcError) {
	var none jsonrpc.ProgressToken
	if len(meta) == 0 || string(bytes.TrimSpace(meta)) == "null" {
		return none, "", nil
	}
	m, err := objectParams(meta)
	if err != nil {
		return none, "", invalidParams("Invalid params: _meta must be an object")
	}
	raw, ok := m[mcp.MetaProgressToken]
	if !ok {
		return none, "", nil
	}
	t, err := jsonrpc.ParseToken(raw)
	if err != nil {
		return none, "", invalidParams("Invalid params: progressToken must be a string or an integer")
	}
	return t, t.Key(), nil
}

// startOp registers an operation (started++, active++, one resource held,
// its token live) and runs it.
func (ss *session) startOp(id jsonrpc.ID, c *call, token jsonrpc.ProgressToken, tokenKey string, run func(*call)) {
	c.id, c.idKey, c.owner = id, ss.idKey(id), ss
	c.token, c.tokenKey = token, tokenKey
	c.cancelled = make(chan struct{})
	ss.mu.Lock()
	c.key = ss.srv.freeKey(c.key, func(k string) bool { return ss.ops[k] != nil })
	var rerr *rpcError
	switch {
	case ss.inflight[c.idKey] != nil:
		rerr = &rpcError{code: codeInvalidRequest, message: "Invalid Request: request id " + id.String() + " is already in flight"}
	case ss.ops[c.key] != nil:
		rerr = invalidParams("Invalid params: key %s is already used in this session", strconv.Quote(c.key))
	case tokenKey != "" && ss.tokens[tokenKey] != nil:
		rerr = invalidParams("progress token already in use")
	}
	if rerr == nil {
		ss.seq++
		c.seq = ss.seq
		ss.inflight[c.idKey] = c
		ss.ops[c.key] = c
		if tokenKey != "" {
			ss.tokens[tokenKey] = c
		}
		ss.started++
		ss.active++
		ss.srv.observer.start()
	}
	ss.mu.Unlock()
	if rerr != nil {
		ss.spawnReq(id, func() { ss.answer(id, nil, rerr) })
		return
	}
	ss.logf("operation %s started by request %s", strconv.Quote(c.key), id)
	ss.spawnReq(id, func() { run(c) })
}

// outcome of a wait or a guarded write.
type outcome uint8

const (
	goOn outcome = iota
	wasCancelled
	abandoned
)

// status reports whether c may go on. Caller holds mu.
func (ss *session) status(c *call) outcome {
	switch {
	case c.state == stateCancelled:
		return wasCancelled
	case c.state != stateRunning || ss.ctx.Err() != nil:
		return abandoned
	}
	return goOn
}

// runSlow is the slow tool: KEY/start, then per step a progress
// notification and KEY/step/i, then the result and KEY/end.
func (ss *session) runSlow(c *call) {
	if o := ss.reach(c, c.key+"/start"); o != goOn {
		ss.stop(c, o)
		return
	}
	for i := 1; i <= c.steps; i++ {
		v := float64(i) * c.unit
		if i == 2 && ss.has(FaultNonIncreasingProgress) {
			v = c.unit
		}
		if o := ss.progress(c, i, v); o != goOn {
			ss.stop(c, o)
			return
		}
		ss.srv.observer.step(i)
		if o := ss.reach(c, c.key+"/step/"+strconv.Itoa(i)); o != goOn {
			ss.stop(c, o)
			return
		}
	}
	ss.complete(c)
}

// runEffect is the effect tool: progress 1 of 1 (with a token), the gate
// KEY/start, then the effect and its receipt, then KEY/end.
func (ss *session) runEffect(c *call) {
	if o := ss.progress(c, 1, 1); o != goOn {
		ss.stop(c, o)
		return
	}
	if o := ss.reach(c, c.key+"/start"); o != goOn {
		ss.stop(c, o)
		return
	}
	ss.complete(c)
}

// stop ends c after a wait or a write found it cancelled or abandoned.
func (ss *session) stop(c *call, o outcome) {
	if o == wasCancelled {
		ss.afterCancel(c)
	}
	// Abandoned: the session is over; nobody is listening.
}

// sendToken is the token progress for c carries, as the faults make it.
func (ss *session) sendToken(c *call) (jsonrpc.ProgressToken, bool) {
	if c.tokenKey == "" {
		if ss.has(FaultProgressWithoutToken) {
			return jsonrpc.StringToken(InventedToken), true
		}
		return jsonrpc.ProgressToken{}, false
	}
	if ss.has(FaultWrongToken) {
		if c.token.IsString() {
			s := tokenText(c.token)
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return jsonrpc.IntToken(n), true
			}
			return jsonrpc.StringToken(s + "-wrong"), true
		}
		return jsonrpc.StringToken(tokenText(c.token)), true
	}
	return c.token, true // echoed exactly, 0 included
}

// progressParams is ProgressNotificationParams.
type progressParams struct {
	ProgressToken jsonrpc.ProgressToken `json:"progressToken"`
	Progress      float64               `json:"progress"`
	Total         *float64              `json:"total,omitempty"`
	Message       string                `json:"message,omitempty"`
}

// writeProgress writes progress with value v, whatever c's
// state, if c has a token to send (see sendToken).
func (ss *session) writeProgress(c *call, v float64, message string) {
	tok, ok := ss.sendToken(c)
	if !ok {
		return
	}
	p := progressParams{ProgressToken: tok, Progress: v, Message: message}
	if !c.noTotal {
		total := float64(c.steps) * c.unit
		p.Total = &total
	}
	ss.mu.Lock()
	c.progressSent++
	ss.mu.Unlock()
	ss.notifyRouted(c, FaultProgressCrossesStreams, mcp.NotificationProgress, p)
}

// notifyRouted writes a notification of c's on c's own stream or, under
// fault, on the stream of another running call (crossedStream).
func (ss *session) notifyRouted(c *call, fault Fault, method string, params any) {
	ss.mu.Lock()
	other := ss.crossedStream(c, fault)
	ss.mu.Unlock()
	if other != nil {
		ss.logf("%s of request %s written on the response stream of request %s (fault %s)", method, c.id, other.id, fault)
		other.owner.notifyFor(other.id, method, params)
		return
	}
	ss.notifyFor(c.id, method, params)
}

// crossedStream is, under fault (FaultProgressCrossesStreams or
// FaultLogCrossesStreams), a running slow call of the realm that came on
// another session (another 2026-07-28 POST), whose stream c's
// notification goes to; nil otherwise. ss.mu is held.
func (ss *session) crossedStream(c *call, fault Fault) *call {
	if !ss.has(fault) {
		return nil
	}
	var best *call
	for _, o := range ss.ops {
		if o != c && o.kind == kindSlow && o.owner != nil && o.owner != ss && o.state == stateRunning && (best == nil || o.seq > best.seq) {
			best = o
		}
	}
	return best
}

// progress sends the progress of step i unless c was cancelled.
func (ss *session) progress(c *call, i int, v float64) outcome {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	ss.mu.Lock()
	o := ss.status(c)
	ss.mu.Unlock()
	if o != goOn {
		return o
	}
	c.stepsDone = i
	// The step's log message goes first: a client that waits for the
	// step's progress has then read the message too, also over HTTP where
	// only the call's own stream orders them (logging/no-flood-after-cancel
	// cancels right after that progress).
	ss.stepLog(c, i)
	ss.writeProgress(c, v, fmt.Sprintf("step %d of %d", i, c.steps))
	return goOn
}

// result is the CallToolResult of c; effect is the effect's number, or 0
// when no effect was applied.
func (c *call) result(effect int) toolResult {
	if c.kind != kindEffect {
		return textResult("done")
	}
	if effect == 0 {
		r := textResult("effect not applied: cancelled")
		r.StructuredContent = &receipt{}
		return r
	}
	r := textResult(fmt.Sprintf("applied effect %d", effect))
	r.StructuredContent = &receipt{Receipt: fmt.Sprintf("effect-%d", effect), Applied: true}
	return r
}

// complete ends c successfully: the accounting (completed++, active--, one
// release, token dropped, effect applied) happens before the response is
// written, so a client that has the response sees it all; KEY/end is
// reached after the last frame of c.
func (ss *session) complete(c *call) {
	c.sendMu.Lock()
	ss.mu.Lock()
	if o := ss.status(c); o != goOn {
		ss.mu.Unlock()
		c.sendMu.Unlock()
		ss.stop(c, o)
		return
	}
	c.state = stateCompleted
	if ss.inflight[c.idKey] == c {
		delete(ss.inflight, c.idKey)
	}
	ss.completed++
	ss.srv.observer.ended(true)
	ss.active--
	c.releases++
	ss.released++
	if c.tokenKey != "" && ss.tokens[c.tokenKey] == c && !ss.has(FaultStaleToken) {
		delete(ss.tokens, c.tokenKey)
	}
	effect := 0
	if c.kind == kindEffect {
		ss.effects++
		effect = ss.effects
	}
	ss.mu.Unlock()
	ss.reply(c.id, c.result(effect))
	c.sendMu.Unlock()

	if ss.has(FaultProgressAfterResponse) {
		ss.writeProgress(c, float64(c.steps+1)*c.unit, "after the response")
	}
	ss.mark(c, c.key+"/end", "completed")
}

// afterCancel ends c after an accepted cancel: no response and no more
// progress (CAN-8), one release, then KEY/end. The faults change this.
func (ss *session) afterCancel(c *call) {
	if ss.has(FaultRespondAfterCancel) {
		ss.reply(c.id, c.result(0))
	}
	if ss.has(FaultProgressAfterCancel) {
		next := c.stepsDone + 1
		ss.writeProgress(c, float64(next)*c.unit, fmt.Sprintf("step %d of %d", next, c.steps))
	}
	if ss.has(FaultLogAfterCancel) && c.logSteps {
		ss.sendLog(c, "error", c.stepsDone+1)
	}
	if ss.has(FaultHangAfterCancel) {
		ss.logf("operation %s hangs after cancel (fault %s)", strconv.Quote(c.key), FaultHangAfterCancel)
		<-ss.ctx.Done()
		return
	}
	ss.mu.Lock()
	ss.cancelledN++
	ss.srv.observer.ended(ss.has(FaultRespondAfterCancel))
	switch {
	case ss.has(FaultLeakOnCancel):
		// Keeps its resource and stays active.
	case ss.has(FaultDoubleCleanup):
		c.releases += 2
		ss.released += 2
		ss.active--
	default:
		c.releases++
		ss.released++
		ss.active--
	}
	ss.mu.Unlock()
	ss.mark(c, c.key+"/end", "cancelled")
}

// logTool handles the log tool (LOG-4). The level is read now, so a
// setLevel sent before the call applies to it; a 2026-07-28 request
// brings its own (lp).
func (ss *session) logTool(id jsonrpc.ID, args json.RawMessage, lp logPolicy) {
	var a struct {
		Messages *[]struct {
			Level  string          `json:"level"`
			Logger *string         `json:"logger"`
			Data   json.RawMessage `json:"data"`
		} `json:"messages"`
	}
	if err := strictDecode(args, &a); err != nil || a.Messages == nil {
		ss.spawnReq(id, func() {
			ss.answer(id, nil, invalidParams("Invalid params: log needs messages: [{level, logger?, data}]"))
		})
		return
	}
	msgs := *a.Messages
	for i, m := range msgs {
		if levelIndex(m.Level) < 0 {
			ss.spawnReq(id, func() {
				ss.answer(id, nil, invalidParams("Invalid params: messages[%d].level %s is not a log level", i, strconv.Quote(m.Level)))
			})
			return
		}
	}
	ss.mu.Lock()
	floor := ss.level
	ss.mu.Unlock()
	if ss.has(FaultLogLevelIgnored) {
		floor = -1
	}
	if lp.perRequest {
		floor = ss.requestFloor(lp)
	}
	ss.spawnReq(id, func() {
		sent := 0
		for _, m := range msgs {
			if levelIndex(m.Level) < floor {
				continue
			}
			p := map[string]any{"level": m.Level, "data": json.RawMessage("null")}
			if m.Logger != nil {
				p["logger"] = *m.Logger
			}
			if len(m.Data) > 0 {
				p["data"] = m.Data
			}
			if ss.has(FaultBadMessageShape) {
				p = map[string]any{"level": "WARN", "logger": "log"}
			}
			ss.notifyFor(id, mcp.NotificationMessage, p)
			sent++
		}
		ss.reply(id, textResult(fmt.Sprintf("sent %d of %d messages", sent, len(msgs))))
	})
}

// setLevel handles logging/setLevel (LOG-3, LOG-6).
func (ss *session) setLevel(params map[string]json.RawMessage) *rpcError {
	var level string
	raw, ok := params["level"]
	valid := ok && json.Unmarshal(raw, &level) == nil && levelIndex(level) >= 0
	switch {
	case valid && level == "notice" && ss.has(FaultRejectValidLevel):
		return invalidParams("Invalid params: level %q is not supported", level)
	case !valid && ss.has(FaultAcceptInvalidLevel):
		ss.logf("accepted an invalid log level (fault %s)", FaultAcceptInvalidLevel)
		return nil
	case !valid:
		return invalidParams("Invalid params: level must be one of debug, info, notice, warning, error, critical, alert, emergency")
	}
	ss.mu.Lock()
	ss.level = levelIndex(level)
	ss.mu.Unlock()
	ss.logf("log level set to %s", level)
	return nil
}

// slowArgs are the slow tool's arguments, checked, with their defaults.
type slowArgs struct {
	key      string
	steps    int
	unit     float64
	noTotal  bool
	gated    bool
	logSteps bool
	tick     time.Duration // real-time pacing; when set, gates are off
}

// errNoKey is parseSlowArgs' answer to arguments without a key: a
// task-augmented call needs one; an ordinary call goes on without
// (ordinarySlow).
var errNoKey = invalidParams("Invalid params: slow needs a non-empty key")

// OrdinaryTickMs is the pace of a slow call that names no key: one step
// every 250ms, so that a client without the control extension (the
// Inspector, "mcpflight call --url … slow") sees its progress and can
// cancel it, and it completes on its own.
const OrdinaryTickMs = 250

// ordinarySlow parses the arguments of a slow call without a key. The
// key is what uses the control extension: it prefixes the checkpoints a
// client awaits and releases (KEY/start, KEY/step/i). A call without one
// is an ordinary client's, so its checkpoints are named after a counter
// of the session (ordinary-N/…) and never gated; it advances every
// OrdinaryTickMs unless tickMs says otherwise, and "gated": true is
// refused, since no client could name the gate to release it.
func (ss *session) ordinarySlow(args json.RawMessage) (slowArgs, *rpcError) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(args, &raw); err != nil || raw == nil {
		raw = map[string]json.RawMessage{}
	}
	if g, ok := raw["gated"]; ok && string(g) == "true" {
		return slowArgs{}, invalidParams("Invalid params: a gated slow call needs a key, which names the checkpoints to release")
	}
	raw["key"], _ = json.Marshal(fmt.Sprintf("ordinary-%d", ss.ordinary.Add(1)))
	if _, ok := raw["tickMs"]; !ok {
		raw["tickMs"] = json.RawMessage(strconv.Itoa(OrdinaryTickMs))
	}
	fixed, _ := json.Marshal(raw)
	a, rerr := parseSlowArgs(fixed)
	a.gated = false
	return a, rerr
}

// parseSlowArgs checks the slow tool's arguments, for ordinary and
// task-augmented calls alike.
func parseSlowArgs(args json.RawMessage) (slowArgs, *rpcError) {
	var a struct {
		Key     *string  `json:"key"`
		Steps   *int     `json:"steps"`
		Unit    *float64 `json:"unit"`
		NoTotal *bool    `json:"noTotal"`
		Gated   *bool    `json:"gated"`
		TickMs  *int     `json:"tickMs"`
		Log     *bool    `json:"logSteps"`
	}
	out := slowArgs{steps: 3, unit: 1, gated: true}
	if err := strictDecode(args, &a); err != nil {
		return out, invalidParams("Invalid params: slow arguments: %v", err)
	}
	if a.Key == nil {
		return out, errNoKey
	}
	if *a.Key == "" {
		return out, invalidParams("Invalid params: slow needs a non-empty key")
	}
	out.key = *a.Key
	if a.Steps != nil {
		if *a.Steps < 0 || *a.Steps > maxSteps {
			return out, invalidParams("Invalid params: steps must be 0..%d", maxSteps)
		}
		out.steps = *a.Steps
	}
	if a.Unit != nil {
		if !(*a.Unit > 0 && *a.Unit <= maxUnit) {
			return out, invalidParams("Invalid params: unit must be in (0, %g]", float64(maxUnit))
		}
		out.unit = *a.Unit
	}
	if a.NoTotal != nil {
		out.noTotal = *a.NoTotal
	}
	if a.Gated != nil {
		out.gated = *a.Gated
	}
	if a.Log != nil {
		out.logSteps = *a.Log
	}
	if a.TickMs != nil {
		if *a.TickMs < 0 || *a.TickMs > 60000 {
			return out, invalidParams("Invalid params: tickMs must be 0..60000")
		}
		// Real-time pacing replaces the gates: interactive use only.
		out.tick = time.Duration(*a.TickMs) * time.Millisecond
		if out.tick > 0 {
			out.gated = false
		}
	}
	return out, nil
}
