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
	"github.com/mcpflight/mcpflight/results"
)

// Exit codes.
const (
	ExitConformant    = 0
	ExitNonConformant = 1
	ExitError         = 2
	// ExitIncomplete: no fail and no error, but fewer than half of the
	// applicable cases ran (results.Completeness).
	ExitIncomplete = results.ExitIncomplete
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

// errUsage marks an error as a usage error: it is printed with one line
// that says where the command's flags are listed, and the exit code is 2.
var errUsage = errors.New("usage")

// usageError is a usage error with a message and the command it is about.
type usageError struct {
	msg     string
	command string // "" for the command line as a whole
}

func (e *usageError) Error() string { return e.msg }
func (e *usageError) Is(target error) bool {
	return target == errUsage
}

// usagef is a usage error of the command whose usage text is usage (its
// first line names it: "Usage: mcpflight NAME …").
func usagef(usage, format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...), command: usageCommand(usage)}
}

// usageCommand is the command a usage text is about, "" for the main
// usage.
func usageCommand(usage string) string {
	rest, ok := strings.CutPrefix(usage, "Usage: mcpflight ")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, " ")
	if name == "" || strings.HasPrefix(name, "<") || strings.HasPrefix(name, "[") {
		return ""
	}
	return strings.TrimSpace(name)
}

// helpPointer is the line a usage error ends with: where to read more,
// instead of the whole flag list.
func helpPointer(command string) string {
	if command == "" {
		return `Run "mcpflight help" for the commands.`
	}
	return fmt.Sprintf(`Run "mcpflight %s -h" for its flags.`, command)
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
			fmt.Fprintf(e.Stderr, "mcpflight: %s\n%s\n", msg, helpPointer(ue.command))
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
  requirements
            list the requirement registry by revision, area and level
  show      render a saved chronology (FILE.jsonl) as a sequence diagram
  watch     sit between a real host and server, forward every byte, judge it live
  judge     judge a recorded conversation (a watch capture, check's chronologies)
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
	case "requirements":
		return e.requirements(rest)
	case "show":
		return e.show(rest)
	case "judge":
		return e.judgeCmd(rest)
	case "watch":
		return e.watch(ctx, rest)
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
	if near := nearest(cmd, commandNames()); near != "" {
		return 0, usagef(mainUsage, "unknown command %q; did you mean %q?", cmd, near)
	}
	return 0, usagef(mainUsage, "unknown command %q", cmd)
}

// commandNames are the commands dispatch knows, for suggesting the
// nearest.
func commandNames() []string {
	return []string{"check", "explore", "check-client", "serve", "call", "tools", "shell", "cases", "requirements", "show", "watch", "judge", "version", "help"}
}

// parse parses a command's flags. -h prints the usage to stdout and
// returns done; any other problem is a usage error. Positional arguments
// are refused.
func (e Env) parse(fs *flag.FlagSet, usage string, args []string) (done bool, err error) {
	pos, done, err := e.parseWith(fs, usage, args, false)
	if done || err != nil {
		return done, err
	}
	if len(pos) > 0 {
		return false, usagef(usage, "unexpected argument %q", pos[0])
	}
	return false, nil
}

// parseWith parses a command's flags and returns its positional
// arguments; with interleaved, flags may come after them too, as
// "call TOOL ARGS --timeout 1s" reads naturally. A flag's error names it
// as it was typed (--jobs, not -jobs) and, for an unknown one, suggests
// the nearest the command has.
func (e Env) parseWith(fs *flag.FlagSet, usage string, args []string, interleaved bool) (pos []string, done bool, err error) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(e.Stdout, usage)
				return nil, true, nil
			}
			return nil, false, usagef(usage, "%s", flagError(fs, err, args))
		}
		rest = fs.Args()
		if !interleaved || len(rest) == 0 {
			return append(pos, rest...), false, nil
		}
		pos = append(pos, rest[0])
		rest = rest[1:]
	}
}

// flagError is the flag package's error with the flag as the user typed
// it (the package always writes one dash) and, for a flag the command
// does not have, the nearest one it has.
func flagError(fs *flag.FlagSet, err error, args []string) string {
	msg := err.Error()
	for _, a := range args {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		typed, _, _ := strings.Cut(a, "=")
		name := strings.TrimLeft(typed, "-")
		if name == "" {
			continue
		}
		single := "-" + name
		for _, suffix := range []string{"", ":", " "} {
			var ok bool
			if suffix == "" {
				ok = strings.HasSuffix(msg, " "+single)
			} else {
				ok = strings.Contains(msg, " "+single+suffix)
			}
			if !ok {
				continue
			}
			if strings.HasPrefix(msg, "flag provided but not defined") {
				var names []string
				fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
				if near := nearest(name, names); near != "" {
					dashes := "--"
					if len(near) == 1 {
						dashes = "-"
					}
					return "flag provided but not defined: " + typed + "; did you mean " + dashes + near + "?"
				}
			}
			if suffix == "" {
				return strings.TrimSuffix(msg, single) + typed
			}
			return strings.Replace(msg, " "+single+suffix, " "+typed+suffix, 1)
		}
	}
	return msg
}

// nearest is the candidate closest to s, when it is close enough to be a
// slip (an edit distance of at most a third of its length, at least one)
// or s is a prefix of it; "" otherwise.
func nearest(s string, candidates []string) string {
	best, bestD := "", 0
	for _, c := range candidates {
		d := editDistance(s, c)
		if len(s) >= 2 && strings.HasPrefix(c, s) {
			d = min(d, 1)
		}
		if best == "" || d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" || bestD > max(1, len(s)/3) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error {
	*s = append(*s, v)
	return nil
}
