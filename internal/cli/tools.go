package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/profile"
)

const toolsUsage = `Usage: mcpflight tools [--stdio CMD [--shell]] [--profile NAME|FILE]

Lists the server's tools with their task support (execution.taskSupport),
and which need of the catalogue the active profile fills with each.
Without --stdio the target is the built-in reference server.
`

func (e Env) tools(ctx context.Context, args []string) (int, error) {
	var o checkOptions
	fs := flag.NewFlagSet("tools", flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	fs.Usage = func() { fmt.Fprint(e.Stderr, toolsUsage) }
	fs.StringVar(&o.stdio, "stdio", "", "")
	fs.BoolVar(&o.shell, "shell", false, "")
	fs.StringVar(&o.profile, "profile", "", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, nil
		}
		return 0, usagef(toolsUsage, "%v", err)
	}
	if fs.NArg() > 0 {
		return 0, usagef(toolsUsage, "unexpected argument %q", fs.Arg(0))
	}
	target, prof, err := e.target(o)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	s, _, closeSession, err := openSession(ctx, target)
	if err != nil {
		return 0, err
	}
	defer closeSession()
	listed, err := s.ListTools(ctx)
	if err != nil {
		return 0, err
	}
	uses := profileUses(prof)
	tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tTASK SUPPORT\tPROFILE USE\tDESCRIPTION")
	for _, t := range listed {
		support := t.Execution.TaskSupport
		if support == "" {
			support = "forbidden"
		}
		use := uses[t.Name]
		if use == "" {
			use = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", chrono.Sanitize(t.Name, false), chrono.Sanitize(support, false),
			use, clipText(chrono.Sanitize(t.Description, false), 60))
		delete(uses, t.Name)
	}
	if err := tw.Flush(); err != nil {
		return 0, err
	}
	for name, use := range uses {
		fmt.Fprintf(e.Stderr, "mcpflight: the profile's %s tool %q is not offered by the server; cases that need it will fail to start\n", use, name)
	}
	return 0, nil
}

// profileUses maps tool names to the need they fill in the profile.
func profileUses(p *profile.Profile) map[string]string {
	uses := map[string]string{}
	if p == nil {
		return uses
	}
	for need, t := range map[string]*profile.Tool{"slow": p.Slow, "effect": p.Effect, "log": p.Log} {
		if t != nil {
			uses[t.Name] = need
		}
	}
	return uses
}

// tailNote renders the server's last stderr lines for an error message.
func tailNote(log *chrono.Log) string {
	if tail := stderrTail(log, 5); tail != "" {
		return "\nthe server's last stderr lines:\n" + tail
	}
	return ""
}

func clipText(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
