package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/hostcancel"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/negotiate"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/report"
	"github.com/mcpflight/mcpflight/shell"
)

const callUsage = `Usage: mcpflight call [flags] TOOL ['{json arguments}']

Calls one tool and shows its progress and log messages as they arrive.
Without --stdio or --url the target is the built-in reference server, whose "slow"
tool then advances on its own every 250ms (tickMs) unless told otherwise.

A --timeout or Ctrl-C sends a real notifications/cancelled (under
2026-07-28 over Streamable HTTP it closes the request's response stream,
which is the cancellation there); a second Ctrl-C stops waiting at once.
The last line says what actually happened.

Flags:
` + targetUsage + protocolUsage + `  --timeout D          cancel the call after D (e.g. 500ms); 0: no timeout
  --grace D            after a cancel, how long to wait for a late response
                       (default 2s)
  --log-level LEVEL    send logging/setLevel LEVEL first (debug … emergency);
                       under 2026-07-28 the call carries it in its _meta
  --task               call the tool as a durable task, under either revision:
                       2025-11-25 tasks, or under 2026-07-28 the tasks extension
                       (io.modelcontextprotocol/tasks); a timeout or Ctrl-C then
                       stops waiting and sends one tasks/cancel, the two-phase
                       controller verifies what happened, and its decision trail
                       is printed before the last line
  -v                   print the chronology afterwards

Exit codes: 0 completed, 1 the tool or the server reported an error,
2 usage or connection error, 124 cancelled by --timeout, 130 interrupted.
`

// Exit codes of call beyond the common ones.
const (
	ExitTimeout     = 124
	ExitInterrupted = 130
)

type callOptions struct {
	targetFlags
	timeout  time.Duration
	grace    time.Duration
	logLevel string
	verbose  bool
	maxFrame int
	task     bool
}

// callDefaults completes the arguments of a call of the built-in
// server's slow tool, for call and shell alike: a call that names a key
// uses the control extension, whose gates would wait for a release no
// one sends, so it advances every refserver.OrdinaryTickMs unless it says
// gated or tickMs itself. A plain call without a key is an ordinary one,
// paced so by the server itself; a task needs a key, "call" by default.
func callDefaults(builtin, task bool, tool string, args map[string]any) {
	if !builtin || tool != refserver.ToolSlow {
		return
	}
	_, keyed := args["key"]
	if task && !keyed {
		args["key"], keyed = "call", true
	}
	_, gated := args["gated"]
	_, ticked := args["tickMs"]
	if keyed && !gated && !ticked {
		args["tickMs"] = refserver.OrdinaryTickMs
	}
}

// outcomeLine is how call names the end of an operation, plain or task,
// in hostcancel's vocabulary (hostcancel.ClassifyCall, Operation.Settle).
func outcomeLine(r hostcancel.Result) string {
	switch r.Classification {
	case hostcancel.CompletedBeforeCancel:
		if r.CancelSent {
			return "completed before cancel"
		}
		return "completed"
	case hostcancel.CancelledVerified:
		return "task cancelled and verified"
	case hostcancel.Failed:
		return "failed"
	case hostcancel.StillWorkingPastGrace:
		return "ALERT: task still working past the grace period"
	case hostcancel.WorkerStillRunning:
		return "ALERT: task cancelled but its worker still running"
	case hostcancel.EffectCommitted:
		return "effect committed"
	case hostcancel.OutcomeUnknown:
		if r.Unknown == hostcancel.UnknownCancelUnanswered && r.TaskID == "" {
			return "cancelled; no response received"
		}
	}
	return "outcome unknown"
}

func (e Env) call(ctx context.Context, args []string) (int, error) {
	o, tool, arguments, done, err := e.parseCall(args)
	if done || err != nil {
		return 0, err
	}
	mode, err := o.protocol.mode(callUsage, false)
	if err != nil {
		return 0, err
	}
	callDefaults(o.stdio == "" && o.url == "", o.task, tool, arguments)
	target, _, stopTarget, err := e.sessionTarget(checkOptions{targetFlags: o.targetFlags, runFlags: runFlags{maxFrame: o.maxFrame}, profile: "reference"}, callUsage)
	if err != nil {
		return 0, err
	}
	defer stopTarget()

	// The first Ctrl-C ends ctx (main's signal.NotifyContext); only then
	// does call listen for a second one, which stops the wait at once.
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()

	log := chrono.New()
	conn, err := target.Dial(runCtx, log)
	if err != nil {
		return 0, fmt.Errorf("starting %s: %w", target.Name, err)
	}
	ui := &callUI{w: e.Stdout, terminal: isTerminal(e.Stdout), color: useColor(e.Stdout, e.Getenv), redact: e.redact,
		width: func() int { return terminalWidth(e.Stdout) }}
	s := peer.New(conn, peer.Options{Log: log})
	s.OnNotification(func(m *jsonrpc.Message) { showNotification(ui, m) })
	finish := func(code int) (int, error) {
		cctx, cancel := context.WithTimeout(runCtx, 5*time.Second)
		defer cancel()
		s.Close(cctx)
		if o.verbose {
			fmt.Fprintln(e.Stdout, "chronology:")
			_ = report.Chronology(e.Stdout, log.Events())
		}
		return code, nil
	}
	if !openCallSession(runCtx, s, log, ui, mode, o) {
		return finish(ExitError)
	}
	if o.task {
		return finish(e.callTask(ctx, runCtx, s, ui, o, tool, arguments))
	}
	c, err := s.Start(runCtx, mcp.MethodToolsCall, map[string]any{"name": tool, "arguments": arguments}, peer.WithProgress())
	if err != nil {
		ui.Line("mcpflight call: %s", chrono.Sanitize(err.Error(), false))
		return finish(ExitError)
	}
	code, reason := awaitCall(ctx, runCtx, s, c, ui, o)
	return finish(callExit(ui, c, code, reason))
}

// parseCall reads call's flags and its tool name and JSON arguments.
func (e Env) parseCall(args []string) (o callOptions, tool string, arguments map[string]any, done bool, err error) {
	fs := flag.NewFlagSet("call", flag.ContinueOnError)
	o.register(fs, true)
	fs.DurationVar(&o.timeout, "timeout", 0, "")
	fs.DurationVar(&o.grace, "grace", 2*time.Second, "")
	fs.StringVar(&o.logLevel, "log-level", "", "")
	fs.BoolVar(&o.verbose, "v", false, "")
	fs.BoolVar(&o.task, "task", false, "")
	fs.IntVar(&o.maxFrame, "max-frame", 0, "")
	pos, done, err := e.parseWith(fs, callUsage, args, true)
	if done || err != nil {
		return o, "", nil, done, err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return o, "", nil, false, usagef(callUsage, "call takes a tool name and optional JSON arguments")
	}
	if o.shell && o.stdio == "" {
		return o, "", nil, false, usagef(callUsage, "--shell needs --stdio")
	}
	arguments = map[string]any{}
	if len(pos) == 2 {
		if err := json.Unmarshal([]byte(pos[1]), &arguments); err != nil {
			return o, "", nil, false, usagef(callUsage, "tool arguments must be a JSON object: %v", err)
		}
	}
	return o, pos[0], arguments, false, nil
}

// showNotification draws a server notification of the call: its
// progress, or a log message.
func showNotification(ui *callUI, m *jsonrpc.Message) {
	switch m.Method {
	case mcp.NotificationProgress:
		if p, err := peer.ParseProgress(m.Params); err == nil {
			ui.Progress(p)
		}
	case mcp.NotificationMessage:
		var p struct {
			Level  string          `json:"level"`
			Logger string          `json:"logger"`
			Data   json.RawMessage `json:"data"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			data := string(p.Data)
			var str string
			if json.Unmarshal(p.Data, &str) == nil {
				data = str
			}
			ui.Log(p.Level, p.Logger, data)
		}
	}
}

// openCallSession opens the session under the revision mode picks and
// sets the log level asked for: logging/setLevel under 2025-11-25, the
// call's own _meta under 2026-07-28 (LOG-43). It reports false, having
// said why, when the session cannot be used.
func openCallSession(ctx context.Context, s *peer.Session, log *chrono.Log, ui *callUI, mode negotiate.Mode, o callOptions) bool {
	hctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	_, err := negotiate.Open(hctx, s, mode, negotiate.Options{})
	cancel()
	if err != nil {
		ui.Line("mcpflight call: opening the session failed: %s", chrono.Sanitize(err.Error(), false))
		if tail := stderrTail(log, 5); tail != "" {
			ui.Line("the server's last stderr lines:\n%s", tail)
		}
		return false
	}
	if o.logLevel != "" && !s.SetLogLevel(o.logLevel) {
		if err := s.Request(ctx, mcp.MethodLoggingSetLevel, map[string]any{"level": o.logLevel}, nil); err != nil {
			ui.Line("mcpflight call: logging/setLevel %s: %s", chrono.Sanitize(o.logLevel, false), chrono.Sanitize(err.Error(), false))
			return false
		}
	}
	return true
}

// awaitCall waits for the call's outcome; on --timeout or Ctrl-C it
// cancels the call (a notification, or the close of its 2026-07-28
// stream) and waits up to --grace for a late response, a second Ctrl-C
// stopping that wait. It returns the exit code so far and why it gave up
// ("" when the call ended on its own).
func awaitCall(ctx, runCtx context.Context, s *peer.Session, c *peer.Call, ui *callUI, o callOptions) (int, string) {
	sigs := make(chan os.Signal, 1)
	defer signal.Stop(sigs)
	var timeout <-chan time.Time
	if o.timeout > 0 {
		t := time.NewTimer(o.timeout)
		defer t.Stop()
		timeout = t.C
	}
	var reason string
	select {
	case <-c.Done():
		return 0, ""
	case <-timeout:
		reason = "timeout after " + o.timeout.String()
	case <-ctx.Done():
		reason = "interrupted"
		signal.Notify(sigs, os.Interrupt)
	}
	code := ExitInterrupted
	if strings.HasPrefix(reason, "timeout") {
		code = ExitTimeout
	}
	// Progress from now on crossed the cancel in flight: the server
	// sent it before it saw the cancel (CAN-11, CAN-15), and it is
	// marked so. The mark is set before the cancel is written: the
	// read loop draws what the server writes the moment it reads the
	// cancel, which may be before Cancel returns here. A cancel that
	// was not sent takes the mark back.
	ui.SetCancelled(true)
	err := s.Cancel(runCtx, c, "mcpflight call: "+reason)
	if err != nil {
		ui.SetCancelled(false)
	}
	if err == nil && c.State() == peer.StateStreamClosed {
		ui.Line("cancelled request %s (%s) by closing its response stream, the cancellation of 2026-07-28 over HTTP", c.ID, reason)
	} else if err == nil {
		ui.Line("cancelling request %s (%s); waiting up to %v for a late response (Ctrl-C again to stop waiting)", c.ID, reason, o.grace)
		grace := time.NewTimer(o.grace)
		select {
		case <-c.Done():
		case <-grace.C:
		case <-sigs:
			ui.Line("stopped waiting")
		}
		grace.Stop()
	}
	return code, reason
}

// callExit says what became of the call and returns the exit code: 0
// when it completed (even if a cancel went out after it had), 1 when it
// failed, ExitError when its outcome is unknown and nothing stopped it.
func callExit(ui *callUI, c *peer.Call, code int, reason string) int {
	r := hostcancel.ClassifyCall(c)
	switch {
	case r.Classification == hostcancel.CompletedBeforeCancel:
		code = 0 // with a cancel: the response won the race before it went out
	case r.Classification == hostcancel.Failed:
		code = 1
	case r.Classification == hostcancel.OutcomeUnknown && reason == "":
		code = ExitError
	}
	detail := r.Detail
	if r.Result != nil {
		if text := shell.ToolText(r.Result); text != "" {
			detail = strings.TrimPrefix(detail+": "+text, ": ")
		}
	}
	if detail != "" {
		ui.Line("%s: %s", outcomeLine(r), detail)
	} else {
		ui.Line("%s", outcomeLine(r))
	}
	return code
}

// stderrTail returns the last n stderr lines in the chronology.
func stderrTail(log *chrono.Log, n int) string {
	var lines []string
	for _, ev := range log.Events() {
		if ev.Kind == chrono.KindStderr {
			lines = append(lines, "  "+chrono.Sanitize(string(ev.Raw), false))
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// callTask runs a task-augmented call under the two-phase controller:
// waiting polls tasks/get; a timeout or the first Ctrl-C is phase one (stop
// waiting locally) and phase two sends one tasks/cancel and verifies it; a
// second Ctrl-C stops the verification at once.
func (e Env) callTask(ctx, runCtx context.Context, s *peer.Session, ui *callUI, o callOptions, tool string, arguments map[string]any) int {
	ctrl := hostcancel.New(hostcancel.Config{Session: s, Grace: o.grace})
	op, err := ctrl.Begin(runCtx, hostcancel.Call{Tool: tool, Arguments: arguments, Progress: true})
	if err != nil {
		ui.Line("mcpflight call: %s", chrono.Sanitize(err.Error(), false))
		return ExitError
	}
	waitCtx, stopWaiting := context.WithCancelCause(runCtx)
	defer stopWaiting(nil)
	var timeout <-chan time.Time
	if o.timeout > 0 {
		t := time.NewTimer(o.timeout)
		defer t.Stop()
		timeout = t.C
	}
	reason := make(chan string, 1)
	go func() {
		select {
		case <-timeout:
			reason <- "timeout after " + o.timeout.String()
			stopWaiting(errors.New("mcpflight call: timeout after " + o.timeout.String()))
		case <-ctx.Done():
			reason <- "interrupted"
			stopWaiting(errors.New("mcpflight call: interrupted"))
		case <-waitCtx.Done():
		}
	}()
	t, werr := op.Created(waitCtx)
	if werr == nil && t.TaskID != "" {
		ui.Line("task %s created (status %s)", chrono.Sanitize(t.TaskID, false), chrono.Sanitize(t.Status, false))
	}
	if werr == nil {
		_, werr = op.Wait(waitCtx)
	}
	code := 0
	settleCtx := runCtx
	if errors.Is(werr, hostcancel.ErrRefused) {
		werr = nil // nothing runs: Settle classifies the refusal
	}
	if werr != nil {
		why := "stopped"
		select {
		case why = <-reason:
		default:
		}
		code = ExitInterrupted
		if strings.HasPrefix(why, "timeout") {
			code = ExitTimeout
		}
		ui.Line("stopped waiting (%s); sending tasks/cancel and verifying for up to %v (Ctrl-C again to stop)", why, o.grace)
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, os.Interrupt)
		defer signal.Stop(sigs)
		var cancelSettle context.CancelFunc
		settleCtx, cancelSettle = context.WithCancel(runCtx)
		defer cancelSettle()
		go func() {
			select {
			case <-sigs:
				cancelSettle()
			case <-settleCtx.Done():
			}
		}()
	}
	res := op.Settle(settleCtx)
	ui.Line("decision trail:")
	for _, l := range strings.Split(strings.TrimRight(hostcancel.FormatTrail(hostcancel.DecisionTrail(op.Trail()), "  "), "\n"), "\n") {
		ui.Line("%s", l)
	}
	line := outcomeLine(res)
	switch {
	case werr == nil && res.Classification == hostcancel.CompletedBeforeCancel:
		line = "completed: " + shell.ToolText(res.Result)
	case res.Detail != "":
		line += ": " + res.Detail
	}
	ui.Line("%s", line)
	switch res.Classification {
	case hostcancel.CompletedBeforeCancel:
		return 0
	case hostcancel.Failed:
		return 1
	case hostcancel.StillWorkingPastGrace, hostcancel.OutcomeUnknown:
		if code == 0 {
			return ExitError
		}
	}
	return code
}
