// Package shell is mcpflight's script language over one MCP session: a
// line-oriented interpreter whose commands list and call tools, cancel
// calls, drive durable tasks and check what happened (expect). The
// "mcpflight shell" command reads it from a terminal or a script file;
// a test can run the same scripts over any peer.Session.
//
//	in := shell.New(session, shell.Config{Out: os.Stdout})
//	err := in.Run(ctx, strings.NewReader("call_tool slow {\"steps\":1}\nexpect outcome completed\n"))
//
// Help lists the commands. A call's outcome is classified as
// hostcancel.ClassifyCall classifies it; the script names it with one of
// the words completed, cancelled, failed or error (expect outcome).
package shell

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/hostcancel"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
)

// Help is the list of commands, as "help" prints it.
const Help = `Commands, one per line ("#" starts a comment):

  list_tools                       tools/list
  call_tool NAME [JSON]            call a tool and wait for it
  timeout MS call_tool NAME [JSON] call, and cancel it after MS
  bg call_tool NAME [JSON]         start a call without waiting; prints its id
  wait ID                          wait for a background call
  cancel ID                        cancel request ID (notifications/cancelled)
  set_level LEVEL                  logging/setLevel; under 2026-07-28 the
                                   logLevel every later request carries
  ping                             ping
  task call NAME [JSON]            task-augmented tools/call (prints the task id)
  task get|result|cancel TASKID    tasks/get, tasks/result, tasks/cancel
  task list                        tasks/list
  sleep MS                         wait (for pacing a demo)
  expect outcome completed|cancelled|failed|error
  expect progress >= N             the last call saw at least N progress notifications
  expect text SUBSTRING            the last result contains SUBSTRING
  expect status STATUS             the last task answer has this status
  expect code N                    the last answer was JSON-RPC error N
  help                             this list
  quit                             end the session (also: exit)
`

// Commands are the command words, for completion on a terminal.
func Commands() []string {
	return []string{"list_tools", "call_tool", "timeout", "bg", "wait", "cancel", "set_level", "ping", "task", "sleep", "expect", "help", "quit", "exit"}
}

// ErrQuit is Exec's answer to quit and exit.
var ErrQuit = errors.New("quit")

// ErrExpectations is matched (errors.Is) by Run's error when an expect
// line failed; the error says how many.
var ErrExpectations = errors.New("expectation(s) failed")

// ExpectError is a failed expect line.
type ExpectError struct{ Msg string }

func (e *ExpectError) Error() string { return "expect failed: " + e.Msg }

// LineError is the error that ended a script at Line.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, Message(e.Err)) }
func (e *LineError) Unwrap() error { return e.Err }

// Config is what an Interpreter needs besides its session.
type Config struct {
	// Out receives what the commands print.
	Out io.Writer
	// Redact, when not nil, knows the run's secrets: texts are redacted
	// before they are cut, so that a cut cannot hide part of a secret.
	Redact *chrono.Redactor
	// Defaults, when not nil, completes the arguments of every
	// call_tool and task call (task set), as "mcpflight call" completes
	// its own.
	Defaults func(task bool, tool string, args map[string]any)
	// CancelGrace is how long a cancelled call may still answer before
	// its outcome is taken; one second if zero.
	CancelGrace time.Duration
}

// Interpreter runs commands on one session. It is not safe for
// concurrent use.
type Interpreter struct {
	s   *peer.Session
	cfg Config
	// What expect looks at: the last command's outcome.
	outcome  string // completed, cancelled, failed, error
	progress int
	text     string
	status   string
	code     int
	bg       map[string]*peer.Call
	failures int
}

// New is an interpreter over s.
func New(s *peer.Session, cfg Config) *Interpreter {
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if cfg.CancelGrace <= 0 {
		cfg.CancelGrace = time.Second
	}
	return &Interpreter{s: s, cfg: cfg, bg: map[string]*peer.Call{}}
}

// Failures is how many expect lines have failed so far.
func (in *Interpreter) Failures() int { return in.failures }

// Run runs the script r line by line. A failed expect is printed and
// counted, and the script goes on; any other error ends it, named by
// its line. The error is nil when every line ran and every expectation
// held, and matches ErrExpectations when one failed.
func (in *Interpreter) Run(ctx context.Context, r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		err := in.Exec(ctx, sc.Text())
		var ee *ExpectError
		switch {
		case errors.Is(err, ErrQuit):
			return in.summary()
		case errors.As(err, &ee):
			fmt.Fprintf(in.cfg.Out, "line %d: %s\n", line, ee.Error())
		case err != nil:
			return &LineError{Line: line, Err: err}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return in.summary()
}

func (in *Interpreter) summary() error {
	if in.failures > 0 {
		return fmt.Errorf("%d %w", in.failures, ErrExpectations)
	}
	return nil
}

// Exec runs one line: nil when it ran (an answer that is a JSON-RPC
// error is recorded for expect code, not returned), ErrQuit for quit,
// an *ExpectError for a failed expect (counted in Failures), or the error
// that stopped the command.
func (in *Interpreter) Exec(ctx context.Context, line string) error {
	text := strings.TrimSpace(line)
	if text == "" || strings.HasPrefix(text, "#") {
		return nil
	}
	err := in.exec(ctx, text)
	var ee *ExpectError
	if errors.As(err, &ee) {
		in.failures++
	}
	return err
}

// Message is err as a line for a person: sanitised, and without the Go
// package prefixes ("peer: ", "transport: ") that say where it came from
// in the code rather than what happened.
func Message(err error) string {
	msg := chrono.Sanitize(err.Error(), false)
	for changed := true; changed; {
		changed = false
		for _, p := range []string{"peer: ", "transport: ", "jsonrpc: ", "negotiate: ", "control: ", "hostcancel: ", "shell: "} {
			if rest, ok := strings.CutPrefix(msg, p); ok {
				msg, changed = rest, true
			}
		}
	}
	return msg
}

// splitCommand splits "NAME rest" at the first space.
func splitCommand(s string) (string, string) {
	head, rest, _ := strings.Cut(strings.TrimSpace(s), " ")
	return head, strings.TrimSpace(rest)
}

func parseArgs(s string) (map[string]any, error) {
	args := map[string]any{}
	if s == "" {
		return args, nil
	}
	if err := json.Unmarshal([]byte(s), &args); err != nil || args == nil {
		return nil, fmt.Errorf("arguments must be a JSON object, got %s", clip(s, 60))
	}
	return args, nil
}

func (in *Interpreter) exec(ctx context.Context, text string) error {
	cmd, rest := splitCommand(text)
	s := in.s
	switch cmd {
	case "quit", "exit":
		return ErrQuit
	case "help":
		fmt.Fprint(in.cfg.Out, Help)
		return nil
	case "ping":
		err := s.Ping(ctx)
		in.record(nil, err)
		if err == nil {
			fmt.Fprintln(in.cfg.Out, "pong")
		}
		return answered(err)
	case "list_tools":
		tools, err := s.ListTools(ctx)
		in.record(nil, err)
		for _, t := range tools {
			fmt.Fprintf(in.cfg.Out, "%s\t%s\n", chrono.Sanitize(t.Name, false), chrono.Sanitize(t.Execution.TaskSupport, false))
		}
		return answered(err)
	case "set_level":
		if rest == "" {
			return errors.New("set_level needs a level (debug … emergency)")
		}
		if s.SetLogLevel(rest) {
			// 2026-07-28 has no logging/setLevel: the level goes with
			// every request (LOG-43).
			in.record(nil, nil)
			return nil
		}
		err := s.Request(ctx, mcp.MethodLoggingSetLevel, map[string]any{"level": rest}, nil)
		in.record(nil, err)
		return answered(err)
	case "call_tool":
		return in.call(ctx, rest, 0, false)
	case "timeout":
		msText, call := splitCommand(rest)
		ms, err := strconv.Atoi(msText)
		if err != nil || ms < 0 {
			return fmt.Errorf("timeout needs milliseconds, got %q", msText)
		}
		sub, callRest := splitCommand(call)
		if sub != "call_tool" {
			return fmt.Errorf("timeout applies to call_tool, got %q", sub)
		}
		return in.call(ctx, callRest, time.Duration(ms)*time.Millisecond, false)
	case "bg":
		sub, callRest := splitCommand(rest)
		if sub != "call_tool" {
			return fmt.Errorf("bg applies to call_tool, got %q", sub)
		}
		return in.call(ctx, callRest, 0, true)
	case "wait":
		c, ok := in.bg[rest]
		if !ok {
			return fmt.Errorf("no background call %q", rest)
		}
		wctx := ctx
		if c.CancelRequested() {
			// A cancelled request may never answer.
			var cancel context.CancelFunc
			wctx, cancel = context.WithTimeout(ctx, in.cfg.CancelGrace)
			defer cancel()
		}
		_, err := c.Await(wctx)
		in.finish(c, err)
		in.printOutcome(c)
		return nil
	case "cancel":
		if c, ok := in.bg[rest]; ok {
			return answered(s.Cancel(ctx, c, "mcpflight shell: cancel "+rest))
		}
		id, err := jsonrpc.ParseID([]byte(rest))
		if err != nil {
			return fmt.Errorf("cancel needs a request id (1 or \"a\"), got %q", rest)
		}
		return s.Notify(ctx, mcp.NotificationCancelled, map[string]any{"requestId": id, "reason": "mcpflight shell"})
	case "task":
		return in.task(ctx, rest)
	case "sleep":
		ms, err := strconv.Atoi(rest)
		if err != nil || ms < 0 {
			return fmt.Errorf("sleep needs milliseconds, got %q", rest)
		}
		t := time.NewTimer(time.Duration(ms) * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		return nil
	case "expect":
		return in.expect(rest)
	}
	return fmt.Errorf("unknown command %q (type help for the list)", cmd)
}

// answered is nil for an answer that is a JSON-RPC error: it is recorded
// in the state, where expect code N checks it.
func answered(err error) error {
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		return nil
	}
	return err
}

func (in *Interpreter) call(ctx context.Context, rest string, timeout time.Duration, background bool) error {
	name, argText := splitCommand(rest)
	if name == "" {
		return errors.New("call_tool needs a tool name")
	}
	args, err := parseArgs(argText)
	if err != nil {
		return err
	}
	if in.cfg.Defaults != nil {
		in.cfg.Defaults(false, name, args)
	}
	s := in.s
	c, err := s.Start(ctx, mcp.MethodToolsCall, map[string]any{"name": name, "arguments": args}, peer.WithProgress())
	if err != nil {
		return err
	}
	if background {
		in.bg[c.ID.String()] = c
		fmt.Fprintf(in.cfg.Out, "started request %s\n", c.ID)
		return nil
	}
	if timeout > 0 {
		t := time.NewTimer(timeout)
		select {
		case <-c.Done():
		case <-t.C:
			if err := s.Cancel(ctx, c, fmt.Sprintf("mcpflight shell: timeout %v", timeout)); err == nil {
				fmt.Fprintf(in.cfg.Out, "cancelled request %s after %v\n", c.ID, timeout)
				grace := time.NewTimer(in.cfg.CancelGrace)
				select {
				case <-c.Done():
				case <-grace.C:
				}
				grace.Stop()
			}
		}
		t.Stop()
	} else {
		_, err = c.Await(ctx)
	}
	in.finish(c, err)
	in.printOutcome(c)
	return nil
}

func (in *Interpreter) printOutcome(c *peer.Call) {
	fmt.Fprintf(in.cfg.Out, "%s request %s: %s (%d progress)\n", in.outcome, c.ID, in.clipped(in.text, 120), in.progress)
}

// record notes the outcome of a plain request.
func (in *Interpreter) record(raw json.RawMessage, err error) {
	in.progress, in.status, in.code, in.text = 0, "", 0, string(raw)
	var rpcErr *jsonrpc.Error
	switch {
	case errors.As(err, &rpcErr):
		in.outcome, in.code, in.text = "failed", rpcErr.Code, chrono.Sanitize(rpcErr.Message, false)
	case err != nil:
		in.outcome = "error"
	default:
		in.outcome = "completed"
	}
}

// Outcome is the script's word for how a call ended, classified by
// hostcancel.ClassifyCall: completed, failed, cancelled (cancelled, and
// no response came) or error (the connection ended, or no response).
func Outcome(r hostcancel.Result) string {
	switch {
	case r.Classification == hostcancel.CompletedBeforeCancel:
		return "completed"
	case r.Classification == hostcancel.Failed:
		return "failed"
	case r.Classification == hostcancel.OutcomeUnknown && r.Unknown == hostcancel.UnknownCancelUnanswered:
		return "cancelled"
	}
	return "error"
}

// finish notes the outcome of a tools/call.
func (in *Interpreter) finish(c *peer.Call, err error) {
	r := hostcancel.ClassifyCall(c)
	in.progress, in.status, in.code = c.ProgressCount(), "", 0
	in.outcome, in.text = Outcome(r), r.Detail
	switch {
	case err != nil && c.State() == peer.StateFailed:
		in.outcome = "error"
	case r.ResultError != nil:
		in.code = r.ResultError.Code
	case r.Result != nil:
		in.text = ToolText(r.Result)
	}
}

func (in *Interpreter) expect(rest string) error {
	what, arg := splitCommand(rest)
	fail := func(format string, args ...any) error { return &ExpectError{Msg: fmt.Sprintf(format, args...)} }
	switch what {
	case "outcome":
		if in.outcome != arg {
			return fail("outcome %s, want %s", in.outcome, arg)
		}
	case "progress":
		op, n := splitCommand(arg)
		want, err := strconv.Atoi(n)
		if op != ">=" || err != nil {
			return fmt.Errorf("expect progress >= N, got %q", arg)
		}
		if in.progress < want {
			return fail("%d progress notifications, want at least %d", in.progress, want)
		}
	case "text":
		if !strings.Contains(in.text, arg) {
			return fail("result %q does not contain %q", in.clipped(in.text, 80), arg)
		}
	case "status":
		if in.status != arg {
			return fail("status %q, want %q", in.status, arg)
		}
	case "code":
		want, err := strconv.Atoi(arg)
		if err != nil {
			return fmt.Errorf("expect code N, got %q", arg)
		}
		if in.code != want {
			return fail("error code %d, want %d", in.code, want)
		}
	default:
		return fmt.Errorf("unknown expectation %q (outcome, progress, text, status, code)", what)
	}
	return nil
}

func (in *Interpreter) task(ctx context.Context, rest string) error {
	sub, arg := splitCommand(rest)
	var method string
	params := map[string]any{}
	switch sub {
	case "call":
		name, argText := splitCommand(arg)
		if name == "" {
			return errors.New("task call needs a tool name")
		}
		args, err := parseArgs(argText)
		if err != nil {
			return err
		}
		if in.cfg.Defaults != nil {
			in.cfg.Defaults(true, name, args)
		}
		method = mcp.MethodToolsCall
		params = map[string]any{"name": name, "arguments": args, "task": map[string]any{}}
	case "get", "result", "cancel":
		method = map[string]string{"get": mcp.MethodTasksGet, "result": mcp.MethodTasksResult, "cancel": mcp.MethodTasksCancel}[sub]
		params["taskId"] = arg
	case "list":
		method = mcp.MethodTasksList
	default:
		return fmt.Errorf("task get|result|list|cancel|call, got %q", sub)
	}
	var raw json.RawMessage
	err := in.s.Request(ctx, method, params, &raw)
	in.record(raw, err)
	if err == nil {
		var t struct {
			Status string `json:"status"`
			TaskID string `json:"taskId"`
			Task   *struct {
				Status string `json:"status"`
				TaskID string `json:"taskId"`
			} `json:"task"`
		}
		_ = json.Unmarshal(raw, &t)
		in.status = t.Status
		if t.Task != nil {
			in.status = t.Task.Status
			fmt.Fprintf(in.cfg.Out, "task %s %s\n", chrono.Sanitize(t.Task.TaskID, false), chrono.Sanitize(t.Task.Status, false))
		}
	}
	fmt.Fprintf(in.cfg.Out, "%s %s: %s\n", method, in.outcome, in.clipped(chrono.Sanitize(in.text, false), 200))
	return answered(err)
}

// clipped redacts s, then clips it to n runes: redacting first, so that
// the cut cannot leave part of a secret unrecognised.
func (in *Interpreter) clipped(s string, n int) string {
	if in.cfg.Redact != nil {
		s = in.cfg.Redact.String(s)
	}
	return clip(s, n)
}

// clip shortens s to n runes, the last an ellipsis.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// ToolText is the text content of a CallToolResult, sanitised.
func ToolText(raw json.RawMessage) string {
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	_ = json.Unmarshal(raw, &r)
	var texts []string
	for _, c := range r.Content {
		if c.Type == "text" {
			texts = append(texts, chrono.Sanitize(c.Text, true))
		}
	}
	return strings.Join(texts, " ")
}
