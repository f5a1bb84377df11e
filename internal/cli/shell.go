package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/chzyer/readline"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/report"
	"github.com/mcpflight/mcpflight/shell"
)

const shellUsage = `Usage: mcpflight shell [--stdio CMD [--shell] | --url URL [--header 'NAME: VALUE']...] [--script FILE] [-v]

A scriptable MCP session (the language is package shell's). On a terminal
it reads commands with line editing, history (up and down arrows, Ctrl-R)
and Tab completion of the command words; "help" lists them. Without
--stdio or --url the target is the built-in reference server, and a call
gets the same argument defaults as "mcpflight call". With --script the
commands come from FILE (or, without a terminal, from stdin), the first
error ends the run (exit 2), and the exit code is 1 when an expect failed.

` + shell.Help + `
Flags:
` + targetUsage + protocolUsage + `  --script FILE        read the commands from FILE
  -v                   print the chronology afterwards
`

func (e Env) shell(ctx context.Context, args []string) (int, error) {
	var o checkOptions
	var script string
	fs := flag.NewFlagSet("shell", flag.ContinueOnError)
	o.targetFlags.register(fs, true)
	fs.StringVar(&script, "script", "", "")
	fs.BoolVar(&o.verbose, "v", false, "")
	if done, err := e.parse(fs, shellUsage, args); done || err != nil {
		return 0, err
	}
	mode, err := o.protocol.mode(shellUsage, false)
	if err != nil {
		return 0, err
	}
	in := e.Stdin
	var term *os.File
	if script != "" {
		f, err := os.Open(script)
		if err != nil {
			return 0, usagef(shellUsage, "--script: %v", err)
		}
		defer f.Close()
		in = f
	} else if f, ok := e.Stdin.(*os.File); ok && isTerminal(f) {
		term = f
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
	builtin := o.stdio == "" && o.url == ""
	interp := shell.New(s, shell.Config{Out: e.Stdout, Redact: e.redact,
		Defaults: func(task bool, tool string, args map[string]any) { callDefaults(builtin, task, tool, args) }})
	if term != nil {
		return e.shellTerminal(ctx, interp, term)
	}
	err = interp.Run(ctx, in)
	switch {
	case err == nil:
		return 0, nil
	case errors.Is(err, shell.ErrExpectations):
		fmt.Fprintln(e.Stdout, err)
		return ExitNonConformant, nil
	case ctx.Err() != nil:
		return ExitInterrupted, nil
	}
	fmt.Fprintln(e.Stdout, err)
	return ExitError, nil
}

// shellTerminal reads commands from a terminal with line editing and
// history; an error is printed and the session goes on.
func (e Env) shellTerminal(ctx context.Context, interp *shell.Interpreter, term *os.File) (int, error) {
	var items []readline.PrefixCompleterInterface
	for _, c := range shell.Commands() {
		items = append(items, readline.PcItem(c))
	}
	rl, err := readline.NewEx(&readline.Config{
		Prompt:          "mcpflight> ",
		Stdin:           term,
		Stdout:          e.Stdout,
		Stderr:          e.Stderr,
		AutoComplete:    readline.NewPrefixCompleter(items...),
		InterruptPrompt: "^C",
		EOFPrompt:       "quit",
		// The history stays in memory: a line may carry a secret.
		HistoryLimit:   500,
		FuncIsTerminal: func() bool { return true },
	})
	if err != nil {
		return 0, fmt.Errorf("shell: the terminal: %w", err)
	}
	defer rl.Close()
	fmt.Fprintln(e.Stdout, `type "help" for the commands, "quit" to end`)
	for {
		line, err := rl.Readline()
		switch {
		case errors.Is(err, readline.ErrInterrupt):
			if line == "" {
				return ExitInterrupted, nil
			}
			continue
		case errors.Is(err, io.EOF):
			return e.shellEnd(interp), nil
		case err != nil:
			return 0, err
		}
		err = interp.Exec(ctx, line)
		var ee *shell.ExpectError
		switch {
		case errors.Is(err, shell.ErrQuit):
			return e.shellEnd(interp), nil
		case errors.As(err, &ee):
			fmt.Fprintln(e.Stdout, ee.Error())
		case err != nil:
			fmt.Fprintln(e.Stdout, shell.Message(err))
		}
		if ctx.Err() != nil {
			return ExitInterrupted, nil
		}
	}
}

// shellEnd is the exit code of an interactive session: 1 when an expect
// failed.
func (e Env) shellEnd(interp *shell.Interpreter) int {
	if n := interp.Failures(); n > 0 {
		fmt.Fprintf(e.Stdout, "%d %v\n", n, shell.ErrExpectations)
		return ExitNonConformant
	}
	return 0
}
