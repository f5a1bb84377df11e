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
	"github.com/mcpflight/mcpflight/negotiate"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/spec"
)

const profileUsage = `Usage: mcpflight profile init [--stdio CMD [--shell] | --url URL [--header 'NAME: VALUE']...] [--name NAME] [-o FILE]

Drafts a target profile from the server's tools/list, for you to confirm:
each tool's name and the minimal arguments its inputSchema accepts, the
task tool (execution.taskSupport "required", else "optional": tools/list
says so), and marked guesses, from the tools' names and descriptions, for
the slow, log and effect tools. Without --stdio or --url the target is the
built-in reference server. The loop:

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
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
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
		tools = append(tools, profile.ListedTool{Name: t.Name, Description: t.Description, TaskSupport: t.Execution.TaskSupport, InputSchema: t.InputSchema})
	}
	if name == "" {
		name = "drafted"
		if srv := s.Server(); srv != nil && srv.ServerInfo.Name != "" {
			name = srv.ServerInfo.Name
		}
	}
	draft := profile.DraftProfile(name, tools, control.Detect(s) != nil)
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
