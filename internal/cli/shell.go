package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/report"
)

const shellUsage = `Usage: mcpflight shell [--stdio CMD [--shell] | --url URL [--header 'NAME: VALUE']...] [--script FILE] [-v]

A scriptable MCP session. Commands, one per line ("#" starts a comment):

  list_tools                       tools/list
  call_tool NAME [JSON]            call a tool and wait for it
  timeout MS call_tool NAME [JSON] call, and send notifications/cancelled after MS
  bg call_tool NAME [JSON]         start a call without waiting; prints its id
  wait ID                          wait for a background call
  cancel ID                        send notifications/cancelled for request ID
  set_level LEVEL                  logging/setLevel; under 2026-07-28 the
                                   logLevel every later request carries
  ping                             ping
  task call NAME [JSON]            task-augmented tools/call (prints the task id)
  task get|result|cancel TASKID    tasks/get, tasks/result, tasks/cancel
  task list                        tasks/list
  sleep MS                         wait (scripts only: for pacing a demo)
  expect outcome completed|cancelled|failed|error
  expect progress >= N             the last call saw at least N progress notifications
  expect text SUBSTRING            the last result contains SUBSTRING
  expect status STATUS             the last task answer has this status
  expect code N                    the last answer was JSON-RPC error N
  quit

Without --stdio or --url the target is the built-in reference server. With --script
the commands come from FILE, and the exit code is 1 when an expect failed.

Flags:
  --stdio CMD        the server's command line (split like a shell, no shell)
  --shell            run --stdio's command line through /bin/sh -c
  --url URL          the MCP endpoint of a Streamable HTTP server
  --header 'NAME: VALUE'
                     send this header with every HTTP request (repeatable);
                     its value is redacted from every output
  --header-env NAME=VAR
                     send header NAME with the value of environment
                     variable VAR (keeps the secret out of the command line)
  --script FILE      read the commands from FILE
  -v                 print the chronology afterwards
` + protocolUsage

// shellState is what expect looks at: the last command's outcome.
type shellState struct {
	outcome  string // completed, cancelled, failed, error
	progress int
	text     string
	status   string
	code     int
	bg       map[string]*peer.Call
	failures int
	// redact knows the run's secrets, for clipping texts safely.
	redact *chrono.Redactor
}

func (e Env) shell(ctx context.Context, args []string) (int, error) {
	var o checkOptions
	var script string
	fs := flag.NewFlagSet("shell", flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	fs.Usage = func() { fmt.Fprint(e.Stderr, shellUsage) }
	fs.StringVar(&o.stdio, "stdio", "", "")
	fs.StringVar(&o.url, "url", "", "")
	o.headers.register(fs)
	fs.BoolVar(&o.shell, "shell", false, "")
	fs.StringVar(&script, "script", "", "")
	fs.BoolVar(&o.verbose, "v", false, "")
	o.protocol.register(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, nil
		}
		return 0, usagef(shellUsage, "%v", err)
	}
	mode, err := o.protocol.mode(shellUsage, false)
	if err != nil {
		return 0, err
	}
	in := e.Stdin
	interactive := false
	if script != "" {
		f, err := os.Open(script)
		if err != nil {
			return 0, usagef(shellUsage, "--script: %v", err)
		}
		defer f.Close()
		in = f
	} else if f, ok := e.Stdin.(*os.File); ok && isTerminal(f) {
		interactive = true
	}
	target, _, stopTarget, err := e.sessionTarget(o, shellUsage)
	if err != nil {
		return 0, err
	}
	defer stopTarget()
	s, out, log, closeSession, err := openSession(ctx, target, mode)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(e.Stderr, "mcpflight: speaking %s\n", chrono.Sanitize(out.String(), false))
	defer func() {
		closeSession()
		if o.verbose {
			fmt.Fprintln(e.Stdout, "chronology:")
			_ = report.Chronology(e.Stdout, log.Events())
		}
	}()
	st := &shellState{bg: map[string]*peer.Call{}, redact: e.redact}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for {
		if interactive {
			fmt.Fprint(e.Stdout, "mcpflight> ")
		}
		if !sc.Scan() {
			break
		}
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		if text == "quit" || text == "exit" {
			break
		}
		if err := e.shellCommand(ctx, s, st, text); err != nil {
			var ee *expectError
			if errors.As(err, &ee) {
				st.failures++
				fmt.Fprintf(e.Stdout, "line %d: expect failed: %s\n", line, ee.msg)
				continue
			}
			fmt.Fprintf(e.Stdout, "line %d: %s\n", line, chrono.Sanitize(err.Error(), false))
			if !interactive {
				return ExitError, nil
			}
		}
		if ctx.Err() != nil {
			return ExitInterrupted, nil
		}
	}
	if st.failures > 0 {
		fmt.Fprintf(e.Stdout, "%d expectation(s) failed\n", st.failures)
		return 1, nil
	}
	return 0, nil
}

// expectError is a failed expect line.
type expectError struct{ msg string }

func (e *expectError) Error() string { return e.msg }

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
	if err := json.Unmarshal([]byte(s), &args); err != nil {
		return nil, fmt.Errorf("arguments must be a JSON object: %w", err)
	}
	return args, nil
}

func (e Env) shellCommand(ctx context.Context, s *peer.Session, st *shellState, text string) error {
	cmd, rest := splitCommand(text)
	switch cmd {
	case "ping":
		err := s.Ping(ctx)
		st.record(nil, err)
		if err == nil {
			fmt.Fprintln(e.Stdout, "pong")
		}
		return shellErr(err)
	case "list_tools":
		tools, err := s.ListTools(ctx)
		st.record(nil, err)
		for _, t := range tools {
			fmt.Fprintf(e.Stdout, "%s\t%s\n", chrono.Sanitize(t.Name, false), chrono.Sanitize(t.Execution.TaskSupport, false))
		}
		return shellErr(err)
	case "set_level":
		if s.SetLogLevel(rest) {
			// 2026-07-28 has no logging/setLevel: the level goes with
			// every request (LOG-43).
			st.record(nil, nil)
			return nil
		}
		err := s.Request(ctx, "logging/setLevel", map[string]any{"level": rest}, nil)
		st.record(nil, err)
		return shellErr(err)
	case "call_tool":
		return e.shellCall(ctx, s, st, rest, 0, false)
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
		return e.shellCall(ctx, s, st, callRest, time.Duration(ms)*time.Millisecond, false)
	case "bg":
		sub, callRest := splitCommand(rest)
		if sub != "call_tool" {
			return fmt.Errorf("bg applies to call_tool, got %q", sub)
		}
		return e.shellCall(ctx, s, st, callRest, 0, true)
	case "wait":
		c, ok := st.bg[rest]
		if !ok {
			return fmt.Errorf("no background call %q", rest)
		}
		wctx := ctx
		if c.CancelRequested() {
			// A cancelled request may never answer: wait a grace second.
			var cancel context.CancelFunc
			wctx, cancel = context.WithTimeout(ctx, time.Second)
			defer cancel()
		}
		_, err := c.Await(wctx)
		st.finish(c, err)
		e.printOutcome(c, st)
		return nil
	case "cancel":
		c, ok := st.bg[rest]
		if ok {
			return shellErr(s.Cancel(ctx, c, "mcpflight shell: cancel "+rest))
		}
		id, err := jsonrpc.ParseID([]byte(rest))
		if err != nil {
			return fmt.Errorf("cancel needs a request id (1 or \"a\"), got %q", rest)
		}
		return s.Notify(ctx, "notifications/cancelled", map[string]any{"requestId": id, "reason": "mcpflight shell"})
	case "task":
		return e.shellTask(ctx, s, st, rest)
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
		return st.expect(rest)
	}
	return fmt.Errorf("unknown command %q (see mcpflight shell -h)", cmd)
}

func shellErr(err error) error {
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		return nil // recorded in the state; expect code N checks it
	}
	return err
}

func (e Env) shellCall(ctx context.Context, s *peer.Session, st *shellState, rest string, timeout time.Duration, background bool) error {
	name, argText := splitCommand(rest)
	if name == "" {
		return errors.New("call_tool needs a tool name")
	}
	args, err := parseArgs(argText)
	if err != nil {
		return err
	}
	c, err := s.Start(ctx, "tools/call", map[string]any{"name": name, "arguments": args}, peer.WithProgress())
	if err != nil {
		return err
	}
	if background {
		st.bg[c.ID.String()] = c
		fmt.Fprintf(e.Stdout, "started request %s\n", c.ID)
		return nil
	}
	if timeout > 0 {
		t := time.NewTimer(timeout)
		select {
		case <-c.Done():
		case <-t.C:
			if err := s.Cancel(ctx, c, fmt.Sprintf("mcpflight shell: timeout %v", timeout)); err == nil {
				fmt.Fprintf(e.Stdout, "cancelled request %s after %v\n", c.ID, timeout)
				grace := time.NewTimer(time.Second)
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
	st.finish(c, err)
	e.printOutcome(c, st)
	return nil
}

func (e Env) printOutcome(c *peer.Call, st *shellState) {
	fmt.Fprintf(e.Stdout, "%s request %s: %s (%d progress)", st.outcome, c.ID, e.clip(st.text, 120), st.progress)
	fmt.Fprintln(e.Stdout)
}

// record notes the outcome of a plain request.
func (st *shellState) record(raw json.RawMessage, err error) {
	st.progress, st.status, st.code, st.text = 0, "", 0, string(raw)
	var rpcErr *jsonrpc.Error
	switch {
	case errors.As(err, &rpcErr):
		st.outcome, st.code, st.text = "failed", rpcErr.Code, chrono.Sanitize(rpcErr.Message, false)
	case err != nil:
		st.outcome = "error"
	default:
		st.outcome = "completed"
	}
}

// finish notes the outcome of a tools/call.
func (st *shellState) finish(c *peer.Call, err error) {
	outcome, detail := classifyCall(c)
	st.progress, st.status, st.code, st.text = len(c.ProgressSeen()), "", 0, detail
	switch {
	case err != nil && c.State() == peer.StateFailed:
		st.outcome = "error"
	case outcome == outcomeCancelledSilent:
		st.outcome = "cancelled"
	case outcome == outcomeFailed:
		st.outcome = "failed"
		if resp, _ := c.Response(); resp != nil && resp.Error != nil {
			st.code = resp.Error.Code
		}
	case outcome == outcomeCompleted, outcome == outcomeLateResponse:
		st.outcome = "completed"
	default:
		st.outcome = "error"
	}
}

func (st *shellState) expect(rest string) error {
	what, arg := splitCommand(rest)
	fail := func(format string, args ...any) error { return &expectError{msg: fmt.Sprintf(format, args...)} }
	switch what {
	case "outcome":
		if st.outcome != arg {
			return fail("outcome %s, want %s", st.outcome, arg)
		}
	case "progress":
		op, n := splitCommand(arg)
		want, err := strconv.Atoi(n)
		if op != ">=" || err != nil {
			return fmt.Errorf("expect progress >= N, got %q", arg)
		}
		if st.progress < want {
			return fail("%d progress notifications, want at least %d", st.progress, want)
		}
	case "text":
		if !strings.Contains(st.text, arg) {
			return fail("result %q does not contain %q", clipText(st.redact.String(st.text), 80), arg)
		}
	case "status":
		if st.status != arg {
			return fail("status %q, want %q", st.status, arg)
		}
	case "code":
		want, err := strconv.Atoi(arg)
		if err != nil {
			return fmt.Errorf("expect code N, got %q", arg)
		}
		if st.code != want {
			return fail("error code %d, want %d", st.code, want)
		}
	default:
		return fmt.Errorf("unknown expectation %q", what)
	}
	return nil
}

func (e Env) shellTask(ctx context.Context, s *peer.Session, st *shellState, rest string) error {
	sub, arg := splitCommand(rest)
	var method string
	params := map[string]any{}
	switch sub {
	case "call":
		name, argText := splitCommand(arg)
		args, err := parseArgs(argText)
		if err != nil {
			return err
		}
		method = "tools/call"
		params = map[string]any{"name": name, "arguments": args, "task": map[string]any{}}
	case "get", "result", "cancel":
		method = "tasks/" + sub
		params["taskId"] = arg
	case "list":
		method = "tasks/list"
	default:
		return fmt.Errorf("task get|result|list|cancel|call, got %q", sub)
	}
	var raw json.RawMessage
	err := s.Request(ctx, method, params, &raw)
	st.record(raw, err)
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
		st.status = t.Status
		if t.Task != nil {
			st.status = t.Task.Status
			fmt.Fprintf(e.Stdout, "task %s %s\n", chrono.Sanitize(t.Task.TaskID, false), chrono.Sanitize(t.Task.Status, false))
		}
	}
	fmt.Fprintf(e.Stdout, "%s %s: %s\n", method, st.outcome, e.clip(chrono.Sanitize(st.text, false), 200))
	return shellErr(err)
}
