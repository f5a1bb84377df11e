package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/control"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/negotiate"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/spec"
)

const profileUsage = `Usage: mcpflight profile init [--stdio CMD [--shell] | --url URL [--header 'NAME: VALUE']...] [--name NAME] [-o FILE]

Drafts a target profile from the server's tools/list, for you to confirm:
each tool's name and the minimal arguments its inputSchema accepts, the
task tool (execution.taskSupport "required", else "optional": tools/list
says so), and marked guesses, from the tools' names and descriptions, for
the slow, log and effect tools. A candidate for the slow tool is called,
with a progress token, only when its annotations say it only reads
(readOnlyHint): it is kept if it runs for a second or more or sends
progress. A tool that may write is never called. What the server has no
tool for is stated as lacks: [slow, log, task] (no candidate was left, no
tool allows a task, the server does not declare logging), so that the
cases that need one are not applicable. Without --stdio or --url the
target is the built-in reference server. The loop:

  mcpflight profile init --stdio 'node server.js' -o my-server.yaml
  $EDITOR my-server.yaml          # confirm or fix every GUESS
  mcpflight check --stdio 'node server.js' --profile my-server.yaml

Flags:
` + targetUsage + protocolUsage + `  --name NAME          the profile's name (default: the server's serverInfo.name)
  -o FILE              write the profile to FILE instead of stdout
`

// profileCmd is "mcpflight profile": only "init" for now.
func (e Env) profileCmd(ctx context.Context, args []string) (int, error) {
	if len(args) == 0 || args[0] != "init" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprint(e.Stderr, profileUsage)
			return 0, nil
		}
		return 0, usagef(profileUsage, "profile needs a subcommand: init")
	}
	var o checkOptions
	var name, out string
	fs := flag.NewFlagSet("profile init", flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	fs.Usage = func() { fmt.Fprint(e.Stderr, profileUsage) }
	o.targetFlags.register(fs, true)
	fs.StringVar(&name, "name", "", "")
	fs.StringVar(&out, "o", "", "")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, nil
		}
		return 0, usagef(profileUsage, "%v", err)
	}
	if fs.NArg() > 0 {
		return 0, usagef(profileUsage, "unexpected argument %q", fs.Arg(0))
	}
	mode, err := o.protocol.mode(profileUsage, false)
	if err != nil {
		return 0, err
	}
	target, _, stopTarget, err := e.sessionTarget(o, profileUsage)
	if err != nil {
		return 0, err
	}
	defer stopTarget()
	// The session, tools/list and at most three trials of a slow tool's
	// candidates (slowTrialTimeout each).
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	first := mode
	if mode == negotiate.ModeAuto {
		// execution.taskSupport is a 2025-11-25 field: under auto the
		// draft reads that revision's tools/list when the server speaks
		// it, and whatever auto agrees on otherwise.
		first = negotiate.Mode(spec.V20251125)
	}
	s, outcome, _, closeSession, err := openSession(ctx, target, first)
	if err != nil && first != mode {
		s, outcome, _, closeSession, err = openSession(ctx, target, mode)
	}
	if err != nil {
		return 0, err
	}
	defer closeSession()
	fmt.Fprintf(e.Stderr, "mcpflight: speaking %s\n", chrono.Sanitize(outcome.String(), false))
	listed, err := s.ListTools(ctx)
	if err != nil {
		return 0, fmt.Errorf("tools/list: %w", err)
	}
	tools := make([]profile.ListedTool, 0, len(listed))
	for _, t := range listed {
		tools = append(tools, profile.ListedTool{Name: t.Name, Description: t.Description, TaskSupport: t.Execution.TaskSupport,
			InputSchema: t.InputSchema, ReadOnly: t.ReadOnly()})
	}
	if name == "" {
		name = "drafted"
		if srv := s.Server(); srv != nil && srv.ServerInfo.Name != "" {
			name = srv.ServerInfo.Name
		}
	}
	controlled := control.Detect(s) != nil
	draft := profile.DraftProfile(name, tools, controlled)
	draft.TrySlow(ctx, controlled, func(ctx context.Context, t profile.Tool) profile.SlowTrial {
		return trySlowCall(ctx, s, t)
	})
	srv := s.Server()
	draft.StateLacks(srv != nil && srv.HasCapability("logging"))
	for _, tr := range draft.Trials {
		fmt.Fprintf(e.Stderr, "mcpflight: slow tool: %s\n", chrono.Sanitize(tr, false))
	}
	write := func(w io.Writer) error { _, err := io.WriteString(w, draft.YAML()); return err }
	if out == "" {
		return 0, write(e.Stdout)
	}
	if err := e.writeFile(out, write); err != nil {
		return 0, err
	}
	fmt.Fprintf(e.Stderr, "mcpflight: wrote %s (%d tools, %d guesses to confirm)\n", chrono.Sanitize(out, false), len(tools), len(draft.Guesses))
	return 0, nil
}

// slowTrialTimeout bounds one call of a slow tool's candidate: long
// enough for a tool paced at a second or two, short enough that a tool
// that hangs costs the draft little.
const slowTrialTimeout = 10 * time.Second

// trySlowCall calls t on s with a progress token and reports how long it
// ran and how many progress notifications it sent (profile.SlowCaller).
func trySlowCall(ctx context.Context, s *peer.Session, t profile.Tool) profile.SlowTrial {
	cctx, cancel := context.WithTimeout(ctx, slowTrialTimeout)
	defer cancel()
	start := time.Now()
	call, err := s.Start(cctx, mcp.MethodToolsCall, map[string]any{"name": t.Name, "arguments": t.Arguments}, peer.WithProgress())
	if err != nil {
		return profile.SlowTrial{Failed: err.Error()}
	}
	msg, err := call.Await(cctx)
	tr := profile.SlowTrial{Took: time.Since(start)}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		// It runs longer than a trial waits: long-running enough.
		_ = s.Cancel(context.WithoutCancel(ctx), call, "mcpflight profile init: the trial has seen enough")
	case err != nil:
		tr.Failed = err.Error()
	case msg.Error != nil:
		tr.Failed = fmt.Sprintf("error %d: %s", msg.Error.Code, msg.Error.Message)
	}
	want := call.Token.String()
	for _, ev := range s.Log().Snapshot() {
		if ev.Dir == chrono.In && ev.Summary != nil && ev.Summary.Method == mcp.NotificationProgress && ev.Summary.Token == want {
			tr.Progress++
		}
	}
	return tr
}
