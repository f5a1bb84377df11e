// Package clientadapter is mcpflight's own client under test: the peer
// session and the hostcancel controller behind the adapter contract of
// package clientrun. "mcpflight check-client" with no --command grades it
// (it must pass everything), and its named faults are the mutants of the
// client mutation matrix: each makes it break one rule, and a case of the
// client catalogue must catch it.
//
// It is a 2025-11-25 client over stdio and Streamable HTTP, and under
// 2026-07-28 a dual-era client over both: it negotiates with package
// negotiate (server/discover under the per-request _meta envelope,
// falling back to initialize on any failure of the probe that is not a
// recognised modern error, STD-49, HTTP-106), and over Streamable HTTP
// speaks the modern shape of package transport (the request metadata
// headers, no session, a request cancelled by closing its stream, CAN-43;
// a request whose stream broke re-issued with a new ID, HTTP-94). Durable
// tasks go through hostcancel: the 2025-11-25 tasks, or the
// io.modelcontextprotocol/tasks extension on a 2026-07-28 session
// (tasks/cancel, never notifications/cancelled: CAN-4, CAN-57).
package clientadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/clientrun"
	"github.com/mcpflight/mcpflight/hostcancel"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/negotiate"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
)

// Fault is a deliberate client bug, for the mutation matrix.
type Fault string

// The faults.
const (
	FaultCancelsInitialize        Fault = "cancels-initialize"
	FaultNoCancelOnAbort          Fault = "no-cancel-on-abort"
	FaultNoCancelOnTimeout        Fault = "no-cancel-on-timeout"
	FaultCancelsCompleted         Fault = "cancels-completed"
	FaultDeliversLateResponse     Fault = "delivers-late-response"
	FaultReusesID                 Fault = "reuses-id"
	FaultSharesProgressToken      Fault = "shares-progress-token"
	FaultNoMaxTimeout             Fault = "no-max-timeout"
	FaultTaskCancelByNotification Fault = "task-cancel-by-notification"
	FaultKillsServerWithoutEOF    Fault = "kills-server-without-eof"
	FaultIgnoresPing              Fault = "ignores-ping"
	FaultDropIsCancel             Fault = "drop-is-cancel"
	FaultFallbackOnlyOn32601      Fault = "fallback-only-on-32601"
	FaultPings2026Session         Fault = "pings-modern-session"
	FaultNoInitialized            Fault = "no-initialized"
	FaultNotifies2026Cancel       Fault = "notifies-modern-cancel"
	FaultReissuesSameID           Fault = "reissues-same-id"
	FaultOmitsCapabilities        Fault = "omits-client-capabilities"
	FaultCancelsWrongID           Fault = "cancels-wrong-id"
	FaultTaskCancelWithoutName    Fault = "task-cancel-without-name"
	FaultReusesInFlightID         Fault = "reuses-id-in-flight"
	FaultCancelsInitializeLate    Fault = "cancels-initialize-late"
	FaultClosesStreamThenCancels  Fault = "closes-stream-then-cancels"
	FaultClosesStreamOnly         Fault = "closes-stream-only"
	FaultSetsLevelOn2026          Fault = "sets-level-on-modern-session"
)

// Faults lists every fault with what it does.
func Faults() map[Fault]string {
	return map[Fault]string{
		FaultCancelsInitialize:        "sends notifications/cancelled for initialize when the handshake times out",
		FaultNoCancelOnAbort:          "stops waiting on an abort without sending notifications/cancelled",
		FaultNoCancelOnTimeout:        "stops waiting on a timeout without sending notifications/cancelled",
		FaultCancelsCompleted:         "sends notifications/cancelled for a request already answered",
		FaultDeliversLateResponse:     "delivers a response that arrives after its cancel to the caller",
		FaultReusesID:                 "gives a request the ID of the previous one",
		FaultSharesProgressToken:      "gives concurrent requests the same progress token",
		FaultNoMaxTimeout:             "enforces no maximum timeout while progress keeps resetting the clock",
		FaultTaskCancelByNotification: "cancels a task with notifications/cancelled instead of tasks/cancel",
		FaultKillsServerWithoutEOF:    "stops the stdio server with SIGTERM without closing its stdin",
		FaultIgnoresPing:              "never answers the server's ping",
		FaultDropIsCancel:             "treats a dropped SSE stream as a cancel instead of resuming it",
		FaultFallbackOnlyOn32601:      "falls back from the server/discover probe only on -32601",
		FaultPings2026Session:         "sends ping on a 2026-07-28 session",
		FaultNoInitialized:            "never sends notifications/initialized",
		FaultNotifies2026Cancel:       "POSTs notifications/cancelled as well when it closes a 2026-07-28 request's stream to cancel it",
		FaultReissuesSameID:           "re-issues a request whose 2026-07-28 stream broke with the broken request's ID",
		FaultOmitsCapabilities:        "leaves io.modelcontextprotocol/clientCapabilities out of a 2026-07-28 tools/call's _meta",
		FaultCancelsWrongID:           "names a request ID that is not the call's in the notifications/cancelled it sends when it gives up on a call (over 2026-07-28 HTTP: besides closing the stream)",
		FaultTaskCancelWithoutName:    "POSTs tasks/cancel without the Mcp-Name header on a 2026-07-28 Streamable HTTP session",
		FaultReusesInFlightID:         "sends the second call of a parallel step with the ID of the first, still in flight",
		FaultCancelsInitializeLate:    "when the handshake times out, sends notifications/cancelled for initialize from a background goroutine a moment later, and closes at once",
		FaultClosesStreamThenCancels:  "(a conforming variant) over 2025-11-25 Streamable HTTP, closes a call's response stream before it POSTs the call's notifications/cancelled when it gives up on it",
		FaultClosesStreamOnly:         "over 2025-11-25 Streamable HTTP, gives up on a call by closing its response stream, without notifications/cancelled",
		FaultSetsLevelOn2026:          "sets a log level with logging/setLevel on a 2026-07-28 session, which removed it",
	}
}

// ParseFault checks a fault name.
func ParseFault(name string) (Fault, error) {
	f := Fault(name)
	if _, ok := Faults()[f]; !ok {
		names := make([]string, 0, len(Faults()))
		for k := range Faults() {
			names = append(names, string(k))
		}
		sort.Strings(names)
		return "", fmt.Errorf("unknown client fault %q (known: %s)", name, strings.Join(names, ", "))
	}
	return f, nil
}

// lateCancel is how long after the handshake's timeout the
// cancels-initialize-late fault sends its cancel.
const lateCancel = 20 * time.Millisecond

// DefaultProbeTimeout is how long the built-in client waits for an answer
// to server/discover before it takes the server for a legacy one that
// ignores it (STD-48): long enough that a busy machine does not make a
// modern server look silent, short enough for the silence case.
const DefaultProbeTimeout = 3 * time.Second

// Options configure the adapter.
type Options struct {
	// Faults are the bugs to have.
	Faults map[Fault]bool
	// Socket, when set, reaches the stdio server over the relay socket
	// from this process instead of spawning Instructions.Server.
	Socket string
	// ProbeTimeout bounds the server/discover probe; DefaultProbeTimeout
	// if zero.
	ProbeTimeout time.Duration
}

// Run does what the instructions say and reports each outcome to report.
// It returns an error when it could not do them at all (the connection
// failed); the reports say what happened.
func Run(ctx context.Context, in clientrun.Instructions, opts Options, report func(clientrun.Report)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	a := &adapter{in: in, opts: opts, report: report, log: chrono.New()}
	if opts.ProbeTimeout <= 0 {
		a.opts.ProbeTimeout = DefaultProbeTimeout
	}
	return a.run(ctx)
}

type adapter struct {
	in     clientrun.Instructions
	opts   Options
	report func(clientrun.Report)
	// log is the adapter's own record; the harness keeps the evidence.
	log    *chrono.Log
	conn   transport.Conn
	s      *peer.Session
	is2026 bool

	mu     sync.Mutex
	lastID jsonrpc.ID
	token  jsonrpc.ProgressToken
	// first carries, under FaultReusesInFlightID, the first call of a
	// parallel step to the second, which reuses its ID.
	first chan *peer.Call
	// logLevel is the level a 2026-07-28 session's later requests carry
	// in _meta ("" for none).
	logLevel string
}

func (a *adapter) fault(f Fault) bool { return a.opts.Faults[f] }

func (a *adapter) run(ctx context.Context) error {
	conn, err := a.dial(ctx)
	if err != nil {
		a.report(clientrun.Report{Step: 0, Outcome: clientrun.OutcomeError, Error: err.Error()})
		return err
	}
	a.conn = conn
	a.s = peer.New(conn, peer.Options{Log: a.log, Handler: a.handle})
	if err := a.connect(ctx); err == nil {
		a.report(clientrun.Report{Step: 0, Outcome: clientrun.OutcomeConnected})
		for i, st := range a.in.Steps {
			a.step(ctx, i+1, st)
		}
	}
	a.linger(ctx)
	a.close(ctx)
	a.report(clientrun.Report{Step: len(a.in.Steps) + 1, Outcome: clientrun.OutcomeClosed})
	return nil
}

// linger keeps the connection open for Instructions.LingerMs before the
// close, as a host that goes on running would (the pause is what the
// instructions ask for).
func (a *adapter) linger(ctx context.Context) {
	if a.in.LingerMs <= 0 {
		return
	}
	t := time.NewTimer(time.Duration(a.in.LingerMs) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// dial reaches the server.
func (a *adapter) dial(ctx context.Context) (transport.Conn, error) {
	switch {
	case a.in.Transport == clientrun.TransportHTTP:
		return transport.DialHTTP(ctx, transport.HTTPConfig{URL: a.in.URL, Log: a.log, StallTimeout: time.Minute})
	case a.opts.Socket != "":
		r, w, err := clientrun.DialRelay(ctx, a.opts.Socket)
		if err != nil {
			return nil, err
		}
		return transport.NewStream(r, w, transport.StreamConfig{Log: a.log, InChannel: "stdout", OutChannel: "stdin"}), nil
	case a.in.Server != nil:
		return transport.StartStdio(ctx, transport.StdioConfig{Argv: append([]string{a.in.Server.Command}, a.in.Server.Args...), Log: a.log})
	}
	return nil, errors.New("the instructions name no server to reach")
}

// handle answers the server's requests: ping.
func (a *adapter) handle(ctx context.Context, req *jsonrpc.Message) (any, *jsonrpc.Error) {
	if req.Method == mcp.MethodPing && a.fault(FaultIgnoresPing) {
		<-ctx.Done()
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "ignored"}
	}
	return peer.DefaultHandler(ctx, req)
}

// clientInfo is how the built-in client names itself.
var clientInfo = peer.Implementation{Name: "mcpflight", Version: "1"}

// connect makes the handshake: initialize, or (2026-07-28) the
// negotiation: the server/discover probe with a fallback to initialize.
func (a *adapter) connect(ctx context.Context) error {
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if ms := a.in.Connect.TimeoutMs; ms > 0 {
		cctx, cancel = context.WithTimeout(ctx, time.Duration(ms)*time.Millisecond)
	}
	defer cancel()
	if a.in.ProtocolVersion == spec.V20260728 {
		is2026, err := a.negotiate(cctx)
		if err != nil {
			a.report(clientrun.Report{Step: 0, Outcome: clientrun.OutcomeError, Error: err.Error()})
			return err
		}
		a.is2026 = is2026
		if is2026 && a.fault(FaultPings2026Session) {
			_ = a.s.Ping(cctx)
		}
		return nil
	}
	from := a.log.Len()
	var err error
	if a.fault(FaultNoInitialized) {
		var out json.RawMessage
		err = a.s.Request(cctx, mcp.MethodInitialize, map[string]any{"protocolVersion": spec.V20251125,
			"capabilities": map[string]any{}, "clientInfo": clientInfo}, &out)
	} else {
		_, err = a.s.Initialize(cctx, peer.InitOptions{ProtocolVersion: spec.V20251125, ClientInfo: clientInfo})
	}
	if err != nil {
		outcome := clientrun.OutcomeError
		if cctx.Err() != nil {
			outcome = clientrun.OutcomeTimeout
			if a.fault(FaultCancelsInitialize) {
				if id, ok := a.sentID(from, mcp.MethodInitialize); ok {
					_, _ = a.s.NotifySeq(ctx, mcp.NotificationCancelled, map[string]any{"requestId": id, "reason": "timeout"})
				}
			}
			if a.fault(FaultCancelsInitializeLate) {
				if id, ok := a.sentID(from, mcp.MethodInitialize); ok {
					// Off the caller's path, as go-sdk sends its cancels:
					// the moment it waits is the fault's, and the case's
					// linger (the observation window) is ten times as long.
					go func() {
						late := time.NewTimer(lateCancel)
						defer late.Stop()
						select {
						case <-late.C:
							_, _ = a.s.NotifySeq(ctx, mcp.NotificationCancelled, map[string]any{"requestId": id, "reason": "timeout"})
						case <-ctx.Done():
						}
					}()
				}
			}
		}
		a.report(clientrun.Report{Step: 0, Outcome: outcome, Error: err.Error()})
		return err
	}
	return nil
}

// negotiate chooses the revision as a dual-era client (negotiate.Open,
// ModeAuto: any failure of the probe but a recognised modern error falls
// back to initialize, STD-49, HTTP-106) and says whether the session is a
// 2026-07-28 one.
func (a *adapter) negotiate(ctx context.Context) (bool, error) {
	opts := negotiate.Options{ClientInfo: clientInfo, ProbeTimeout: a.opts.ProbeTimeout}
	if a.fault(FaultFallbackOnlyOn32601) {
		return a.probeOnly32601(ctx, opts)
	}
	out, err := negotiate.Open(ctx, a.s, negotiate.ModeAuto, opts)
	if err != nil {
		return false, err
	}
	return out.Revision == spec.V20260728, nil
}

// probeOnly32601 is the fallback-only-on-32601 fault: the probe's failure
// is taken for a legacy server only when it is -32601.
func (a *adapter) probeOnly32601(ctx context.Context, opts negotiate.Options) (bool, error) {
	a.s.SetEnvelope(opts.Envelope())
	pctx, cancel := context.WithTimeout(ctx, opts.ProbeTimeout)
	defer cancel()
	_, err := a.s.Discover(pctx)
	var rpcErr *jsonrpc.Error
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &rpcErr) && rpcErr.Code == jsonrpc.CodeMethodNotFound:
		a.s.ClearEnvelope()
		_, err = a.s.Initialize(ctx, peer.InitOptions{ProtocolVersion: spec.V20251125, ClientInfo: clientInfo})
		return false, err
	case pctx.Err() != nil && ctx.Err() == nil:
		return false, errors.New("server/discover was not answered")
	}
	return false, fmt.Errorf("server/discover failed: %w", err)
}

// sentID finds the ID of the first request of method we sent after seq.
func (a *adapter) sentID(from uint64, method string) (jsonrpc.ID, bool) {
	for _, ev := range a.log.Since(from) {
		if ev.Dir == chrono.Out && ev.Summary != nil && ev.Summary.Method == method && ev.Summary.ID != "" {
			if m, err := ev.Message(); err == nil {
				return m.ID, true
			}
		}
	}
	return jsonrpc.ID{}, false
}

func (a *adapter) step(ctx context.Context, n int, st clientrun.Step) {
	switch st.Op {
	case clientrun.OpCall:
		if st.Call == nil {
			a.report(clientrun.Report{Step: n, Outcome: clientrun.OutcomeUnsupported, Error: "a call step without a call"})
			return
		}
		r := a.call(ctx, *st.Call, n, 0)
		r.Step = n
		a.report(r)
	case clientrun.OpParallel:
		a.mu.Lock()
		if a.fault(FaultSharesProgressToken) {
			a.token = a.s.NewToken()
		}
		a.first = nil
		if a.fault(FaultReusesInFlightID) && len(st.Calls) > 1 {
			a.first = make(chan *peer.Call, 1)
		}
		a.mu.Unlock()
		var wg sync.WaitGroup
		out := make([]clientrun.Report, len(st.Calls))
		for i, cs := range st.Calls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out[i] = a.call(ctx, cs, n, i+1)
				out[i].Step, out[i].Call = n, i+1
			}()
		}
		wg.Wait()
		for _, r := range out {
			a.report(r)
		}
	case clientrun.OpSetLogLevel:
		r := a.setLogLevel(ctx, st.Level)
		r.Step = n
		a.report(r)
	default:
		a.report(clientrun.Report{Step: n, Outcome: clientrun.OutcomeUnsupported, Error: "unknown op " + st.Op})
	}
}

// setLogLevel sets the level the caller wants: logging/setLevel under
// 2025-11-25 (LOG-3), the _meta of every later request under 2026-07-28,
// which removed logging/setLevel (PNG-40).
func (a *adapter) setLogLevel(ctx context.Context, level string) clientrun.Report {
	if a.is2026 && !a.fault(FaultSetsLevelOn2026) {
		a.mu.Lock()
		a.logLevel = level
		a.mu.Unlock()
		return clientrun.Report{Outcome: clientrun.OutcomeResult, Text: "logLevel " + level + " in each request's _meta"}
	}
	if err := a.s.Request(ctx, mcp.MethodLoggingSetLevel, map[string]any{"level": level}, nil); err != nil {
		return clientrun.Report{Outcome: clientrun.OutcomeError, Error: err.Error()}
	}
	return clientrun.Report{Outcome: clientrun.OutcomeResult, Text: "logging/setLevel " + level}
}

// call runs one call step.
func (a *adapter) call(ctx context.Context, cs clientrun.CallStep, stepN, index int) clientrun.Report {
	if cs.Task {
		return a.taskCall(ctx, cs)
	}
	a.mu.Lock()
	first := a.first
	a.mu.Unlock()
	if first != nil && index == 2 {
		return a.reuseInFlight(ctx, cs, first)
	}
	params := map[string]any{"name": cs.Tool, "arguments": orEmpty(cs.Arguments)}
	var opts []peer.CallOption
	if a.is2026 && a.fault(FaultOmitsCapabilities) {
		opts = append(opts, peer.WithoutMeta(mcp.MetaClientCapabilities))
	}
	a.mu.Lock()
	if a.logLevel != "" {
		opts = append(opts, peer.WithLogLevel(a.logLevel))
	}
	if a.fault(FaultReusesID) && a.lastID.IsValid() && index == 0 {
		opts = append(opts, peer.WithID(a.lastID), peer.AllowIDReuse())
	}
	if cs.Progress {
		switch {
		case a.fault(FaultSharesProgressToken) && a.token.IsValid() && index == 1:
			opts = append(opts, peer.WithProgressToken(a.token))
		case a.fault(FaultSharesProgressToken) && a.token.IsValid() && index > 1:
			meta, _ := params[mcp.MetaKey].(map[string]any)
			if meta == nil {
				meta = map[string]any{}
			}
			meta[mcp.MetaProgressToken] = a.token
			params[mcp.MetaKey] = meta
		default:
			opts = append(opts, peer.WithProgress())
		}
	}
	a.mu.Unlock()
	c, err := a.s.Start(ctx, mcp.MethodToolsCall, params, opts...)
	if err != nil {
		return clientrun.Report{Outcome: clientrun.OutcomeError, Error: err.Error()}
	}
	if first != nil && index == 1 {
		first <- c
	}

	start := time.Now()
	var idle, total <-chan time.Time
	var idleTimer *time.Timer
	if cs.TimeoutMs > 0 {
		idleTimer = time.NewTimer(time.Duration(cs.TimeoutMs) * time.Millisecond)
		defer idleTimer.Stop()
		idle = idleTimer.C
	}
	if cs.MaxTotalTimeoutMs > 0 && !a.fault(FaultNoMaxTimeout) {
		t := time.NewTimer(time.Duration(cs.MaxTotalTimeoutMs) * time.Millisecond)
		defer t.Stop()
		total = t.C
	}
	reissued := false
	for {
		r, broken := a.await(ctx, c, cs, stepN, index, start, idleTimer, idle, total)
		if !broken || reissued {
			return r
		}
		// HTTP-94: the broken request is lost; it goes again as a new
		// request with a new ID (and, when it asked, a new token).
		reissued = true
		again := []peer.CallOption{}
		if cs.Progress {
			again = append(again, peer.WithProgress())
		}
		if a.fault(FaultReissuesSameID) {
			again = append(again, peer.WithID(c.ID), peer.AllowIDReuse())
		}
		if c, err = a.s.Start(ctx, mcp.MethodToolsCall, params, again...); err != nil {
			return clientrun.Report{Outcome: clientrun.OutcomeError, Error: "re-issuing the request: " + err.Error()}
		}
	}
}

// reuseInFlight is the reuses-id-in-flight fault: once the first call of
// the parallel step is sent, the same call goes again with its ID while
// it is still in flight (peer refuses that, so the frame is built here,
// with the session's envelope on a 2026-07-28 session). The caller is
// given the first call's outcome.
func (a *adapter) reuseInFlight(ctx context.Context, cs clientrun.CallStep, first <-chan *peer.Call) clientrun.Report {
	var c *peer.Call
	select {
	case c = <-first:
	case <-ctx.Done():
		return clientrun.Report{Outcome: clientrun.OutcomeError, Error: ctx.Err().Error()}
	}
	params := map[string]any{"name": cs.Tool, "arguments": orEmpty(cs.Arguments)}
	meta := map[string]any{}
	if env, ok := a.s.Envelope(); ok {
		meta[mcp.MetaProtocolVersion] = env.ProtocolVersion
		meta[mcp.MetaClientCapabilities] = orEmpty(env.ClientCapabilities)
		if env.ClientInfo != nil {
			meta[mcp.MetaClientInfo] = *env.ClientInfo
		}
	}
	if cs.Progress {
		meta[mcp.MetaProgressToken] = a.s.NewToken()
	}
	if len(meta) > 0 {
		params[mcp.MetaKey] = meta
	}
	raw, err := jsonrpc.EncodeRequest(c.ID, mcp.MethodToolsCall, params)
	if err == nil {
		err = a.s.SendRaw(ctx, raw)
	}
	if err != nil {
		return clientrun.Report{Outcome: clientrun.OutcomeError, Error: err.Error()}
	}
	select {
	case <-c.Done():
		return a.outcome(ctx, c)
	case <-ctx.Done():
		return clientrun.Report{Outcome: clientrun.OutcomeError, Error: ctx.Err().Error()}
	}
}

// await waits for one request of a call step: its outcome, the abort, the
// timeouts. broken reports a 2026-07-28 request whose response stream
// ended without its response, which the caller re-issues (HTTP-94).
func (a *adapter) await(ctx context.Context, c *peer.Call, cs clientrun.CallStep, stepN, index int, start time.Time,
	idleTimer *time.Timer, idle, total <-chan time.Time) (r clientrun.Report, broken bool) {
	dropped := a.dropWatch(ctx, c)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	progress := a.progressOf(wctx, c, cs.Progress)
	for {
		select {
		case <-c.Done():
			if _, err := c.Await(ctx); a.is2026 && errors.Is(err, transport.ErrNoAnswer) {
				return clientrun.Report{Outcome: clientrun.OutcomeError, Error: err.Error()}, true
			}
			r := a.outcome(ctx, c)
			if r.Outcome == clientrun.OutcomeResult || r.Outcome == clientrun.OutcomeError {
				// The ID of a request that was answered: what the
				// reuses-id fault gives the next one.
				a.mu.Lock()
				a.lastID = c.ID
				a.mu.Unlock()
			}
			if cs.AbortAfterResponse && a.fault(FaultCancelsCompleted) {
				_, _ = a.s.NotifySeq(ctx, mcp.NotificationCancelled, map[string]any{"requestId": c.ID, "reason": "the user cancelled"})
			}
			return r, false
		case n := <-progress:
			if idleTimer != nil && cs.ResetTimeoutOnProgress {
				idleTimer.Reset(time.Duration(cs.TimeoutMs) * time.Millisecond)
			}
			if cs.AbortAfterProgress > 0 && n >= cs.AbortAfterProgress {
				return a.giveUp(ctx, c, stepN, index, !a.fault(FaultNoCancelOnAbort), clientrun.OutcomeAborted, "aborted after progress"), false
			}
		case <-idle:
			return a.giveUp(ctx, c, stepN, index, !a.fault(FaultNoCancelOnTimeout), clientrun.OutcomeTimeout,
				fmt.Sprintf("request timed out after %v without a response", time.Since(start).Round(time.Millisecond))), false
		case <-total:
			return a.giveUp(ctx, c, stepN, index, !a.fault(FaultNoCancelOnTimeout), clientrun.OutcomeTimeout,
				fmt.Sprintf("maximum total timeout of %dms reached", cs.MaxTotalTimeoutMs)), false
		case <-dropped:
			// The fault: a dropped stream taken for the end of the call.
			return a.giveUp(ctx, c, stepN, index, true, clientrun.OutcomeError, "the stream was dropped"), false
		case <-ctx.Done():
			return clientrun.Report{Outcome: clientrun.OutcomeError, Error: ctx.Err().Error()}, false
		}
	}
}

// progressOf delivers, for each progress notification naming the call's
// token, how many have arrived so far; read from the adapter's own
// chronology, so that a token two calls share counts for both.
func (a *adapter) progressOf(ctx context.Context, c *peer.Call, asked bool) <-chan int {
	out := make(chan int)
	token := c.Token
	if !token.IsValid() && asked {
		a.mu.Lock()
		token = a.token
		a.mu.Unlock()
	}
	if !token.IsValid() {
		return out
	}
	want := token.String()
	go func() {
		n := 0
		_, _ = a.log.WaitFor(ctx, c.SentSeq, func(ev chrono.Event) bool {
			if ev.Dir == chrono.In && ev.Summary != nil && ev.Summary.Method == mcp.NotificationProgress && ev.Summary.Token == want {
				n++
				select {
				case out <- n:
				case <-ctx.Done():
					return true
				}
			}
			return false
		})
	}()
	return out
}

// dropWatch, under FaultDropIsCancel, is closed when the transport saw
// the call's stream end before its response; nil otherwise.
func (a *adapter) dropWatch(ctx context.Context, c *peer.Call) <-chan struct{} {
	if !a.fault(FaultDropIsCancel) || a.in.Transport != clientrun.TransportHTTP {
		return nil
	}
	ch := make(chan struct{})
	go func() {
		_, err := a.log.WaitFor(ctx, c.SentSeq, func(ev chrono.Event) bool {
			return ev.Kind == chrono.KindDecision && strings.Contains(ev.Text, "the stream ended before its response")
		})
		if err == nil {
			close(ch)
		}
	}()
	return ch
}

// giveUp stops waiting for the call, cancelling it when cancel is set.
// Under FaultDeliversLateResponse a response that still comes is handed
// to the caller as well: a second report for the step.
func (a *adapter) giveUp(ctx context.Context, c *peer.Call, stepN, index int, cancel bool, outcome, why string) clientrun.Report {
	http2026 := a.is2026 && a.in.Transport == clientrun.TransportHTTP
	if cancel && a.fault(FaultCancelsWrongID) {
		if http2026 {
			_ = a.s.Cancel(ctx, c, why) // closes the stream
		}
		// A fresh ID: one that names no request in flight (CAN-5).
		_, _ = a.s.NotifySeq(ctx, mcp.NotificationCancelled, map[string]any{"requestId": a.s.NewID(), "reason": why})
		cancel = false
	}
	if !http2026 && a.in.Transport == clientrun.TransportHTTP && (a.fault(FaultClosesStreamThenCancels) || a.fault(FaultClosesStreamOnly)) {
		a.dropStreamOf(c)
		cancel = cancel && !a.fault(FaultClosesStreamOnly)
	}
	if cancel {
		_ = a.s.Cancel(ctx, c, why)
		if a.fault(FaultNotifies2026Cancel) && a.is2026 && a.in.Transport == clientrun.TransportHTTP {
			// Closing the stream was the cancel (CAN-43); the fault
			// announces it as well.
			_, _ = a.s.NotifySeq(ctx, mcp.NotificationCancelled, map[string]any{"requestId": c.ID, "reason": why})
		}
	}
	if a.fault(FaultDeliversLateResponse) {
		go func() {
			select {
			case <-c.Done():
				r := a.outcome(ctx, c)
				r.Step, r.Call = stepN, index
				a.report(r)
			case <-ctx.Done():
			}
		}()
	}
	return clientrun.Report{Outcome: outcome, Error: why}
}

// dropStreamOf closes the response stream of c's POST (2025-11-25
// Streamable HTTP, where that is a disconnection, not a cancel): the
// closes-stream-* faults.
func (a *adapter) dropStreamOf(c *peer.Call) {
	h, ok := a.conn.(*transport.HTTP)
	if !ok {
		return
	}
	from := c.SentSeq
	if from > 0 {
		from-- // Since(n) starts after seq n; the request's own frame is seq SentSeq
	}
	for _, ev := range a.log.Since(from) {
		if ev.Dir != chrono.Out || ev.Kind != chrono.KindFrame {
			continue
		}
		if m, err := ev.Message(); err == nil && m.ID.Key() == c.ID.Key() && m.Method == mcp.MethodToolsCall {
			_ = h.Drop(ev.Channel)
			return
		}
	}
}

// outcome reports a call that ended.
func (a *adapter) outcome(ctx context.Context, c *peer.Call) clientrun.Report {
	resp, err := c.Await(ctx)
	if err != nil {
		return clientrun.Report{Outcome: clientrun.OutcomeError, Error: err.Error()}
	}
	if resp.Error != nil {
		return clientrun.Report{Outcome: clientrun.OutcomeError, Error: fmt.Sprintf("%d %s", resp.Error.Code, resp.Error.Message)}
	}
	return clientrun.Report{Outcome: clientrun.OutcomeResult, Text: firstText(resp.Result)}
}

// taskCall runs a call as a durable task with hostcancel: the 2025-11-25
// tasks, or on a 2026-07-28 session the tasks extension (declared on the
// request itself, TSX-2; tasks/cancel with Mcp-Name over HTTP, TSX-52).
func (a *adapter) taskCall(ctx context.Context, cs clientrun.CallStep) clientrun.Report {
	cfg := hostcancel.Config{Session: a.s, Policy: hostcancel.Cancel, Grace: 5 * time.Second, NoListen: true, Revision: hostcancel.Rev20251125}
	if a.is2026 {
		cfg.Revision = hostcancel.RevTasksExtension
		if d := a.s.Discovered(); d != nil && d.ServerInfo != nil {
			cfg.Server = *d.ServerInfo
		}
	}
	ctl := hostcancel.New(cfg)
	op, err := ctl.Start(ctx, hostcancel.Call{Tool: cs.Tool, Arguments: orEmpty(cs.Arguments), TTL: time.Minute})
	if err != nil {
		return clientrun.Report{Outcome: clientrun.OutcomeError, Error: err.Error()}
	}
	if !cs.AbortAfterTaskCreated {
		t, err := op.Wait(ctx)
		if err != nil {
			return clientrun.Report{Outcome: clientrun.OutcomeError, Error: err.Error()}
		}
		return clientrun.Report{Outcome: clientrun.OutcomeResult, Text: t.Status}
	}
	if a.fault(FaultTaskCancelByNotification) {
		ids := op.RequestIDs()
		if len(ids) > 0 {
			_, _ = a.s.NotifySeq(ctx, mcp.NotificationCancelled, map[string]any{"requestId": ids[0], "reason": "aborted"})
		}
		op.Stop("aborted")
		return clientrun.Report{Outcome: clientrun.OutcomeAborted, Error: "task abandoned"}
	}
	if a.fault(FaultTaskCancelWithoutName) && a.is2026 && a.in.Transport == clientrun.TransportHTTP {
		// tasks/cancel as it should be, but with the routing header the
		// transport sets removed (TSX-52).
		err := a.s.Request(ctx, mcp.MethodTasksCancel, map[string]any{"taskId": op.TaskID()}, nil,
			peer.WithHeaders(http.Header{mcp.HeaderName: nil}))
		op.Stop("aborted")
		if err != nil {
			return clientrun.Report{Outcome: clientrun.OutcomeAborted, Error: "tasks/cancel: " + err.Error()}
		}
		return clientrun.Report{Outcome: clientrun.OutcomeAborted, Error: "task cancelled"}
	}
	res := op.Abort(ctx, "aborted as instructed")
	return clientrun.Report{Outcome: clientrun.OutcomeAborted, Error: "task " + string(res.Classification)}
}

// close ends the connection: closing the server's stdin first (STD-7).
func (a *adapter) close(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if a.fault(FaultKillsServerWithoutEOF) {
		if st, ok := a.conn.(*transport.Stdio); ok && st.Pid() > 0 {
			terminate(st.Pid())
			// Like a client that kills its server: wait for it to die.
			select {
			case <-st.Exited():
			case <-cctx.Done():
			}
		}
		if _, ok := a.conn.(*transport.Stream); ok {
			// In process there is no process to signal: leave without
			// closing the server's stdin.
			return
		}
	}
	a.s.Close(cctx)
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// firstText is the first text content of a tool result.
func firstText(result json.RawMessage) string {
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(result, &r) != nil {
		return ""
	}
	for _, c := range r.Content {
		if c.Type == "text" {
			return c.Text
		}
	}
	return ""
}

// Writer reports as the contract says: one JSON object a line.
func Writer(w io.Writer) func(clientrun.Report) {
	var mu sync.Mutex
	return func(r clientrun.Report) {
		raw, _ := json.Marshal(r)
		mu.Lock()
		defer mu.Unlock()
		_, _ = w.Write(append(raw, '\n'))
	}
}
