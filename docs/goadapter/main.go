// Command goadapter is a complete check-client adapter for a Go client
// built on mcpflight's own packages: the example of docs/check-client.md.
// It reads the case's instructions from MCP_CONFORMANCE_CONTEXT, connects
// (stdio: spawns the server it is told to; HTTP: dials the URL), makes the
// handshake (2025-11-25: initialize; 2026-07-28: the dual-era negotiation
// of package negotiate, server/discover with a fallback to initialize),
// runs the steps, closes, and prints one report per line. A call that is
// to be a durable task goes through package hostcancel, which cancels it
// with tasks/cancel. Try it with
//
//	go build -o /tmp/goadapter ./docs/goadapter
//	mcpflight check-client --command /tmp/goadapter
//	mcpflight check-client --command /tmp/goadapter --transport http
//	mcpflight check-client --command /tmp/goadapter --protocol 2026-07-28 --dual-era
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
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

// clientInfo is how this client names itself.
var clientInfo = peer.Implementation{Name: "goadapter", Version: "1"}

// client is one connection to the server under the case's instructions.
type client struct {
	in     clientrun.Instructions
	s      *peer.Session
	log    *chrono.Log // peer's own record; the checker keeps the evidence
	is2026 bool        // the session speaks 2026-07-28
	report func(clientrun.Report)
	// logLevel is the level a 2026-07-28 session's calls carry in _meta
	// ("" for none); set by a setLogLevel step.
	logLevel string
}

func main() {
	in, err := clientrun.ReadInstructions(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var mu sync.Mutex
	report := func(r clientrun.Report) {
		raw, _ := json.Marshal(r)
		mu.Lock()
		defer mu.Unlock()
		os.Stdout.Write(append(raw, '\n'))
	}
	if in.ProtocolVersion != spec.V20251125 && in.ProtocolVersion != spec.V20260728 {
		report(clientrun.Report{Outcome: clientrun.OutcomeUnsupported, Error: "this adapter speaks 2025-11-25 and 2026-07-28, not " + in.ProtocolVersion})
		return
	}
	ctx := context.Background()
	c := &client{in: in, log: chrono.New(), report: report}
	var conn transport.Conn
	if in.Transport == clientrun.TransportHTTP {
		// A held call may stay silent for a while: the case, not the
		// transport, decides when it has waited long enough.
		conn, err = transport.DialHTTP(ctx, transport.HTTPConfig{URL: in.URL, Log: c.log, StallTimeout: time.Minute})
	} else {
		conn, err = transport.StartStdio(ctx, transport.StdioConfig{Argv: append([]string{in.Server.Command}, in.Server.Args...), Log: c.log})
	}
	if err != nil {
		report(clientrun.Report{Outcome: clientrun.OutcomeError, Error: err.Error()})
		os.Exit(1)
	}
	c.s = peer.New(conn, peer.Options{Log: c.log}) // answers the server's ping
	if c.connect(ctx) {
		report(clientrun.Report{Outcome: clientrun.OutcomeConnected})
		for i, st := range in.Steps {
			c.step(ctx, i+1, st)
		}
	}
	// Keep the connection open as long as the instructions ask (a host
	// that goes on running), then close: over stdio the server's stdin
	// first, then the process.
	if in.LingerMs > 0 {
		time.Sleep(time.Duration(in.LingerMs) * time.Millisecond)
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	c.s.Close(cctx)
	cancel()
	report(clientrun.Report{Step: len(in.Steps) + 1, Outcome: clientrun.OutcomeClosed})
}

// connect makes the handshake within connect.timeoutMs, and reports a
// failure. peer never cancels initialize (CAN-2).
func (c *client) connect(ctx context.Context) bool {
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if c.in.Connect.TimeoutMs > 0 {
		cctx, cancel = context.WithTimeout(ctx, time.Duration(c.in.Connect.TimeoutMs)*time.Millisecond)
	}
	defer cancel()
	var err error
	if c.in.ProtocolVersion == spec.V20260728 {
		// A dual-era client: server/discover under the per-request _meta
		// envelope, falling back to initialize on any failure of the probe
		// that is not a recognised modern error (STD-49, HTTP-106).
		var out *negotiate.Outcome
		out, err = negotiate.Open(cctx, c.s, negotiate.ModeAuto, negotiate.Options{ClientInfo: clientInfo, ProbeTimeout: 3 * time.Second})
		if err == nil {
			c.is2026 = out.Revision == spec.V20260728
		}
	} else {
		_, err = c.s.Initialize(cctx, peer.InitOptions{ProtocolVersion: spec.V20251125, ClientInfo: clientInfo})
	}
	switch {
	case err != nil && cctx.Err() != nil:
		c.report(clientrun.Report{Outcome: clientrun.OutcomeTimeout, Error: err.Error()})
		return false
	case err != nil:
		c.report(clientrun.Report{Outcome: clientrun.OutcomeError, Error: err.Error()})
		return false
	}
	return true
}

// step runs one step: a call, calls in parallel, or the log level.
func (c *client) step(ctx context.Context, n int, st clientrun.Step) {
	if st.Op == clientrun.OpSetLogLevel {
		r := c.setLogLevel(ctx, st.Level)
		r.Step = n
		c.report(r)
		return
	}
	calls := st.Calls
	if st.Op == clientrun.OpCall && st.Call != nil {
		calls = []clientrun.CallStep{*st.Call}
	}
	var wg sync.WaitGroup
	for j, cs := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var r clientrun.Report
			if cs.Task {
				r = c.task(ctx, cs)
			} else {
				r = c.call(ctx, cs)
			}
			r.Step = n
			if st.Op == clientrun.OpParallel {
				r.Call = j + 1
			}
			c.report(r)
		}()
	}
	wg.Wait()
}

// setLogLevel sets the level the caller wants: logging/setLevel under
// 2025-11-25 (LOG-3); under 2026-07-28, which removed it (PNG-40), each
// later call carries it in _meta (io.modelcontextprotocol/logLevel).
func (c *client) setLogLevel(ctx context.Context, level string) clientrun.Report {
	if c.is2026 {
		c.logLevel = level
		return clientrun.Report{Outcome: clientrun.OutcomeResult, Text: "logLevel " + level + " in each call's _meta"}
	}
	if err := c.s.Request(ctx, mcp.MethodLoggingSetLevel, map[string]any{"level": level}, nil); err != nil {
		return clientrun.Report{Outcome: clientrun.OutcomeError, Error: err.Error()}
	}
	return clientrun.Report{Outcome: clientrun.OutcomeResult, Text: "logging/setLevel " + level}
}

// call makes one call and gives up on it as the step says: after N
// progress notifications (abort), or on its timeout (reset by progress,
// bounded by the maximum). Session.Cancel sends notifications/cancelled,
// or on a 2026-07-28 Streamable HTTP session closes the request's stream
// (CAN-43). A 2026-07-28 request whose stream broke without its response
// is lost: it goes again as a new request, with a new ID (HTTP-94).
func (c *client) call(ctx context.Context, cs clientrun.CallStep) clientrun.Report {
	args := cs.Arguments
	if args == nil {
		args = map[string]any{}
	}
	params := map[string]any{"name": cs.Tool, "arguments": args}
	start := func() (*peer.Call, error) {
		var opts []peer.CallOption
		if cs.Progress || cs.AbortAfterProgress > 0 {
			opts = append(opts, peer.WithProgress())
		}
		if c.logLevel != "" {
			opts = append(opts, peer.WithLogLevel(c.logLevel))
		}
		return c.s.Start(ctx, mcp.MethodToolsCall, params, opts...)
	}
	never := make(chan time.Time)
	idle, total := (<-chan time.Time)(never), (<-chan time.Time)(never)
	var idleTimer *time.Timer
	if cs.TimeoutMs > 0 {
		idleTimer = time.NewTimer(time.Duration(cs.TimeoutMs) * time.Millisecond)
		defer idleTimer.Stop()
		idle = idleTimer.C
	}
	if cs.MaxTotalTimeoutMs > 0 {
		t := time.NewTimer(time.Duration(cs.MaxTotalTimeoutMs) * time.Millisecond)
		defer t.Stop()
		total = t.C
	}
	for reissued := false; ; reissued = true {
		pc, err := start()
		if err != nil {
			return clientrun.Report{Outcome: clientrun.OutcomeError, Error: err.Error()}
		}
		r, broken := c.await(ctx, pc, cs, idleTimer, idle, total)
		if !broken || reissued {
			return r
		}
	}
}

// await waits for one request of a call. broken reports a 2026-07-28
// request whose stream ended without its response.
func (c *client) await(ctx context.Context, pc *peer.Call, cs clientrun.CallStep, idleTimer *time.Timer, idle, total <-chan time.Time) (clientrun.Report, bool) {
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	progress := c.progressOf(wctx, pc)
	seen := 0
	for {
		select {
		case <-pc.Done():
			resp, err := pc.Await(ctx)
			if err != nil {
				return clientrun.Report{Outcome: clientrun.OutcomeError, Error: err.Error()}, c.is2026 && errors.Is(err, transport.ErrNoAnswer)
			}
			if resp.Error != nil {
				return clientrun.Report{Outcome: clientrun.OutcomeError, Error: fmt.Sprintf("%d %s", resp.Error.Code, resp.Error.Message)}, false
			}
			// Aborting now would name a finished request: peer refuses
			// (CAN-1), so abortAfterResponse needs nothing here.
			return clientrun.Report{Outcome: clientrun.OutcomeResult, Text: firstText(resp)}, false
		case <-progress:
			seen++
			if idleTimer != nil && cs.ResetTimeoutOnProgress {
				idleTimer.Reset(time.Duration(cs.TimeoutMs) * time.Millisecond)
			}
			if cs.AbortAfterProgress > 0 && seen >= cs.AbortAfterProgress {
				_ = c.s.Cancel(ctx, pc, "aborted by the user")
				return clientrun.Report{Outcome: clientrun.OutcomeAborted}, false
			}
		case <-idle:
			_ = c.s.Cancel(ctx, pc, "timed out")
			return clientrun.Report{Outcome: clientrun.OutcomeTimeout}, false
		case <-total:
			_ = c.s.Cancel(ctx, pc, "maximum timeout")
			return clientrun.Report{Outcome: clientrun.OutcomeTimeout}, false
		}
	}
}

// progressOf signals each progress notification for the call's token,
// read from the session's chronology.
func (c *client) progressOf(ctx context.Context, pc *peer.Call) <-chan struct{} {
	out := make(chan struct{})
	if !pc.Token.IsValid() {
		return out
	}
	want := pc.Token.String()
	go func() {
		_, _ = c.log.WaitFor(ctx, pc.SentSeq, func(ev chrono.Event) bool {
			if ev.Dir == chrono.In && ev.Summary != nil && ev.Summary.Method == mcp.NotificationProgress && ev.Summary.Token == want {
				select {
				case out <- struct{}{}:
				case <-ctx.Done():
					return true
				}
			}
			return false
		})
	}()
	return out
}

// task runs a call as a durable task with hostcancel: the 2025-11-25
// tasks, or on a 2026-07-28 session the io.modelcontextprotocol/tasks
// extension. Aborting it sends tasks/cancel (over 2026-07-28 HTTP with
// Mcp-Name set to the task's ID, TSX-52), never notifications/cancelled
// (CAN-4, CAN-57).
func (c *client) task(ctx context.Context, cs clientrun.CallStep) clientrun.Report {
	cfg := hostcancel.Config{Session: c.s, Policy: hostcancel.Cancel, Grace: 5 * time.Second, NoListen: true, Revision: hostcancel.Rev20251125}
	if c.is2026 {
		cfg.Revision = hostcancel.RevTasksExtension
		if d := c.s.Discovered(); d != nil && d.ServerInfo != nil {
			cfg.Server = *d.ServerInfo
		}
	}
	args := cs.Arguments
	if args == nil {
		args = map[string]any{}
	}
	op, err := hostcancel.New(cfg).Start(ctx, hostcancel.Call{Tool: cs.Tool, Arguments: args, TTL: time.Minute})
	if err != nil {
		return clientrun.Report{Outcome: clientrun.OutcomeError, Error: err.Error()}
	}
	if cs.AbortAfterTaskCreated {
		res := op.Abort(ctx, "aborted by the user")
		return clientrun.Report{Outcome: clientrun.OutcomeAborted, Error: "task " + string(res.Classification)}
	}
	t, err := op.Wait(ctx)
	if err != nil {
		return clientrun.Report{Outcome: clientrun.OutcomeError, Error: err.Error()}
	}
	return clientrun.Report{Outcome: clientrun.OutcomeResult, Text: t.Status}
}

// firstText is the first text content of a tool result.
func firstText(resp *jsonrpc.Message) string {
	var r struct {
		Content []struct{ Type, Text string } `json:"content"`
	}
	_ = json.Unmarshal(resp.Result, &r)
	for _, c := range r.Content {
		if c.Type == "text" {
			return c.Text
		}
	}
	return ""
}
