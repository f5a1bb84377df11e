// Package cli is the mcpflight command line: it parses arguments, builds a
// runner configuration, runs it and renders the report. It holds no
// global state and never exits the process: Main returns the exit code.
//
// Exit codes: 0 conformant, 1 non-conformant (a fail, or a warn under
// --strict), 2 a usage error, or an error of the harness or the target,
// 3 incomplete (fewer than half of the applicable cases ran).
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/runner"
)

// Exit codes.
const (
	ExitConformant    = 0
	ExitNonConformant = 1
	ExitError         = 2
	// ExitIncomplete: no fail and no error, but fewer than half of the
	// applicable cases ran (runner.Completeness).
	ExitIncomplete = runner.ExitIncomplete
)

// Env is everything the command line touches outside itself.
type Env struct {
	// Stdin, Stdout and Stderr are the process's standard streams.
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// ServeCommand is the argv that runs mcpflight itself; "check"
	// appends "serve --stdio" to start the built-in reference server as
	// a stdio child. Empty means os.Executable().
	ServeCommand []string
	// Getenv reads an environment variable (NO_COLOR); os.Getenv if nil.
	Getenv func(string) string
	// Version is what "mcpflight version" prints; the module version
	// from the build information if empty.
	Version string

	// redact knows the secrets of this run (--header values): Run
	// sends Stdout and Stderr through it, and every file and chronology
	// too.
	redact *chrono.Redactor
}

// Main runs the command line with the process's environment and returns
// the exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := Env{Stdin: stdin, Stdout: stdout, Stderr: stderr}
	return env.Run(ctx, args)
}

// takesSecrets are the commands with --header and --header-env.
var takesSecrets = map[string]bool{"check": true, "call": true, "tools": true, "shell": true, "explore": true}

// maxErrorText bounds the error message Run prints.
const maxErrorText = 16 << 10

// errUsage marks an error as a usage error: it is printed with the short
// usage, and the exit code is 2.
var errUsage = errors.New("usage")

// usageError is a usage error with a message and the usage of the command
// it is about.
type usageError struct {
	msg   string
	usage string
}

func (e *usageError) Error() string { return e.msg }
func (e *usageError) Is(target error) bool {
	return target == errUsage
}

func usagef(usage, format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...), usage: usage}
}

// Run runs the command line args (without the program name) and returns
// the exit code.
func (e Env) Run(ctx context.Context, args []string) int {
	if e.Stdin == nil {
		e.Stdin = strings.NewReader("")
	}
	if e.Stdout == nil {
		e.Stdout = io.Discard
	}
	if e.Stderr == nil {
		e.Stderr = io.Discard
	}
	if e.Getenv == nil {
		e.Getenv = os.Getenv
	}
	// The commands that take secrets (--header) write nothing to the
	// caller's streams that has not passed the redactor, which learns
	// the secrets as the flags are parsed. The others (serve above all,
	// whose stdout may be handed to a child as it is) keep the streams.
	e.redact = chrono.NewRedactor()
	if len(args) > 0 && takesSecrets[args[0]] {
		e.Stdout, e.Stderr = e.redact.Writer(e.Stdout), e.redact.Writer(e.Stderr)
		defer flushWriters(e.Stdout, e.Stderr)
	}
	code, err := e.dispatch(ctx, args)
	if err != nil {
		// An error may quote the target (its stderr, a JSON-RPC error
		// message): redacted, cut and sanitised like any untrusted text.
		msg := chrono.Sanitize(chrono.Clip(e.redact.String(err.Error()), maxErrorText), true)
		var ue *usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(e.Stderr, "mcpflight: %s\n\n%s", msg, ue.usage)
		} else {
			fmt.Fprintf(e.Stderr, "mcpflight: %s\n", msg)
		}
		return ExitError
	}
	return code
}

const mainUsage = `Usage: mcpflight <command> [flags]

Commands:
  check     run the conformance catalogue against an MCP server
  explore   look for races with seeded random operations; shrink and replay counterexamples
  check-client
            run the client catalogue against an MCP client (mcpflight plays the server)
  serve     run the built-in reference server (serve --stdio)
  call      call one tool, with live progress; Ctrl-C sends a real cancel
  tools     list a server's tools, their task support and profile use
  shell     a scriptable session (list_tools, call_tool, timeout, cancel, task, expect)
  profile   profile init: draft a target profile from tools/list
  cases     list the catalogue
  show      render a saved chronology (FILE.jsonl) as a sequence diagram
  version   print the version
  help      print this help

Run "mcpflight <command> -h" for a command's flags.
Exit codes: 0 conformant, 1 non-conformant, 2 usage, harness or target error,
3 incomplete (check: fewer than half of the applicable cases ran).
`

func (e Env) dispatch(ctx context.Context, args []string) (int, error) {
	if len(args) == 0 {
		return 0, usagef(mainUsage, "no command given")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "check":
		return e.check(ctx, rest)
	case "explore":
		return e.explore(ctx, rest)
	case "check-client":
		return e.checkClient(ctx, rest)
	case "client-relay":
		return e.clientRelay(ctx, rest)
	case "client-adapter":
		return e.clientAdapter(ctx, rest)
	case "serve":
		return e.serve(ctx, rest)
	case "call":
		return e.call(ctx, rest)
	case "tools":
		return e.tools(ctx, rest)
	case "shell":
		return e.shell(ctx, rest)
	case "cases":
		return e.listCases(rest)
	case "show":
		return e.show(rest)
	case "profile":
		return e.profileCmd(ctx, rest)
	case "version", "--version", "-version":
		return e.printVersion(rest)
	case "help", "-h", "--help", "-help":
		if len(rest) > 0 {
			// "mcpflight help check" is "mcpflight check -h".
			return e.dispatch(ctx, []string{rest[0], "-h"})
		}
		fmt.Fprint(e.Stdout, mainUsage)
		return 0, nil
	}
	return 0, usagef(mainUsage, "unknown command %q", cmd)
}

// parse parses a command's flags. -h prints the usage to stdout and
// returns done; any other problem is a usage error. Positional arguments
// are refused.
func (e Env) parse(fs *flag.FlagSet, usage string, args []string) (done bool, err error) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(e.Stdout, usage)
			return true, nil
		}
		return false, usagef(usage, "%v", err)
	}
	if fs.NArg() > 0 {
		return false, usagef(usage, "unexpected argument %q", fs.Arg(0))
	}
	return false, nil
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error {
	*s = append(*s, v)
	return nil
}
