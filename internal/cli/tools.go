package cli

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/negotiate"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/spec"
)

const toolsUsage = `Usage: mcpflight tools [--stdio CMD [--shell] | --url URL [--header 'NAME: VALUE']...] [--profile NAME|FILE] [--protocol REV]

Lists the server's tools with their task support (execution.taskSupport,
2025-11-25 only), and which need of the catalogue the active profile
fills with each. Without --stdio or --url the target is the built-in
reference server. The revision spoken, and why, goes to stderr; with
--protocol both the tools are listed under each revision the server
offers, in a REVISION column.

Flags:
` + targetUsage + protocolUsage + `  --protocol both      list the tools under each revision the server offers
  --profile NAME|FILE  the target profile (see "mcpflight check -h")
`

func (e Env) tools(ctx context.Context, args []string) (int, error) {
	var o checkOptions
	fs := flag.NewFlagSet("tools", flag.ContinueOnError)
	o.targetFlags.register(fs, true)
	fs.StringVar(&o.profile, "profile", "", "")
	if done, err := e.parse(fs, toolsUsage, args); done || err != nil {
		return 0, err
	}
	mode, err := o.protocol.mode(toolsUsage, true)
	if err != nil {
		return 0, err
	}
	target, prof, stopTarget, err := e.sessionTarget(o, toolsUsage)
	if err != nil {
		return 0, err
	}
	defer stopTarget()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	modes := []negotiate.Mode{mode}
	if mode == negotiate.ModeBoth {
		sv, err := negotiate.SurveyTarget(ctx, negotiate.Dialer(target.Dial), mode, negotiate.Options{})
		if err != nil {
			return 0, err
		}
		modes = modes[:0]
		for _, rev := range sv.Revisions {
			modes = append(modes, negotiate.Mode(rev))
		}
	}
	uses := profileUses(prof)
	tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
	if mode == negotiate.ModeBoth {
		fmt.Fprint(tw, "REVISION\t")
	}
	fmt.Fprintln(tw, "TOOL\tTASK SUPPORT\tPROFILE USE\tDESCRIPTION")
	offered := map[string]bool{}
	for _, m := range modes {
		s, out, _, closeSession, err := openSession(ctx, target, m)
		if err != nil {
			return 0, err
		}
		fmt.Fprintf(e.Stderr, "mcpflight: speaking %s\n", chrono.Sanitize(out.String(), false))
		listed, err := s.ListTools(ctx)
		closeSession()
		if err != nil {
			return 0, err
		}
		for _, t := range listed {
			support := t.Execution.TaskSupport
			switch {
			case out.Revision == spec.V20260728:
				support = "server-directed" // the tasks extension has no taskSupport (TSX-1)
			case support == "":
				support = "forbidden"
			}
			use := uses[t.Name]
			if use == "" {
				use = "-"
			}
			if mode == negotiate.ModeBoth {
				fmt.Fprintf(tw, "%s\t", out.Revision)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", chrono.Sanitize(t.Name, false), chrono.Sanitize(support, false),
				use, e.clip(chrono.Sanitize(t.Description, false), 60))
			offered[t.Name] = true
		}
	}
	for name := range offered {
		delete(uses, name)
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

// clip redacts s, then clips it to n runes with a marker: redacting
// first, so that the cut cannot leave part of a secret unrecognised.
func (e Env) clip(s string, n int) string {
	return clipText(e.redact.String(s), n)
}

// clipText shortens s to n runes, the last an ellipsis, for one-line
// listings.
func clipText(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
