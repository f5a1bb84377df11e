package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/mcpflight/mcpflight/baseline"
	"github.com/mcpflight/mcpflight/clientadapter"
	"github.com/mcpflight/mcpflight/clientcases"
	"github.com/mcpflight/mcpflight/clientrun"
	"github.com/mcpflight/mcpflight/report"
	"github.com/mcpflight/mcpflight/runner"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
)

const checkClientUsage = `Usage: mcpflight check-client [flags]

Runs the client catalogue against an MCP client: mcpflight plays the
server. The client is an adapter program for your SDK, run once per case
(see docs/check-client.md): MCP_CONFORMANCE_SCENARIO names the case,
MCP_CONFORMANCE_CONTEXT holds its instructions as JSON, and the server's
URL (http) or command line (stdio) is the last argument, or replaces
{server} in the command. Without --command the client is mcpflight's own
(peer and hostcancel behind an adapter).

Flags:
  --command CMD        the adapter's command line, split like a shell would
  --transport NAME     stdio (default: the client spawns mcpflight as its
                       server) or http (mcpflight listens on 127.0.0.1)
  --protocol REV       the revision the server speaks: 2025-11-25 (default)
                       or 2026-07-28
  --dual-era           the client supports 2026-07-28 and legacy servers: run
                       the versioning/probe-* cases
  --case GLOB          run only cases whose ID matches (repeatable)
  --strict             count warns as fails
  --jobs N             run N cases at once, each with its own server side and
                       client; 1 runs them one after another. Default: as
                       check's (16 over HTTP, 8 per CPU over stdio). The
                       report is the same whatever N
  --json FILE          also write the report as JSON ("-": stdout)
  --jsonl-dir DIR      write each case's chronology to DIR/<case-id>.jsonl
  --junit FILE         also write the report as JUnit XML
  --html FILE          also write the report as one HTML page
  --baseline FILE      known failures and warnings (see check)
  --write-baseline FILE
                       write this run's fails and warns as a baseline
  -v                   print every case's chronology
  -q                   print only the summary line (and, with --baseline,
                       the comparison)
  --case-timeout D     deadline of one case (default 15s)
  --max-frame BYTES    largest frame accepted from the client (default 4194304)
  --client-fault NAME  give the built-in client a fault (repeatable; see
                       --list-client-faults)
  --list-client-faults list the built-in client's faults
`

func (e Env) checkClient(ctx context.Context, args []string) (int, error) {
	var (
		o             checkOptions
		command       string
		tr            string
		protocol      string
		bothRevisions bool
		faults        stringList
		listFaults    bool
	)
	fs := flag.NewFlagSet("check-client", flag.ContinueOnError)
	fs.StringVar(&command, "command", "", "")
	fs.StringVar(&tr, "transport", clientrun.TransportStdio, "")
	fs.StringVar(&protocol, "protocol", spec.V20251125, "")
	fs.BoolVar(&bothRevisions, "dual-era", false, "")
	o.runFlags.register(fs)
	fs.Var(&faults, "client-fault", "")
	fs.BoolVar(&listFaults, "list-client-faults", false, "")
	if done, err := e.parse(fs, checkClientUsage, args); done || err != nil {
		return 0, err
	}
	if listFaults {
		for _, f := range sortedClientFaults() {
			fmt.Fprintf(e.Stdout, "%-30s %s\n", f, clientadapter.Faults()[clientadapter.Fault(f)])
		}
		return 0, nil
	}
	var known []baseline.Entry
	var err error
	if o.baseline != "" {
		if known, err = baseline.Read(o.baseline); err != nil {
			return 0, usagef(checkClientUsage, "--baseline: %v", err)
		}
	}
	switch {
	case tr != clientrun.TransportStdio && tr != clientrun.TransportHTTP:
		return 0, usagef(checkClientUsage, "--transport must be stdio or http")
	case protocol != spec.V20251125 && protocol != spec.V20260728:
		return 0, usagef(checkClientUsage, "--protocol must be %s or %s", spec.V20251125, spec.V20260728)
	case o.caseTimeout <= 0:
		return 0, usagef(checkClientUsage, "--case-timeout must be positive")
	case o.maxFrame <= 0:
		return 0, usagef(checkClientUsage, "--max-frame must be positive")
	case o.jobs < 0:
		return 0, usagef(checkClientUsage, "--jobs must be at least 1")
	case o.quiet && o.verbose:
		return 0, usagef(checkClientUsage, "-q and -v contradict each other; pass one")
	case len(faults) > 0 && command != "":
		return 0, usagef(checkClientUsage, "--client-fault applies to the built-in client only, not to --command")
	}
	self, err := e.self()
	if err != nil {
		return 0, err
	}
	var (
		argv []string
		name string
	)
	if command == "" {
		argv = append(append([]string{}, self...), "client-adapter")
		for _, f := range faults {
			if _, err := clientadapter.ParseFault(f); err != nil {
				return 0, usagef(checkClientUsage, "--client-fault: %v", err)
			}
			argv = append(argv, "--fault", f)
		}
		name = "built-in client"
		if len(faults) > 0 {
			name += " with faults " + strings.Join(faults, ", ")
		}
	} else {
		if argv, err = transport.SplitArgs(command); err != nil {
			return 0, usagef(checkClientUsage, "--command: %v", err)
		}
		if len(argv) == 0 {
			return 0, usagef(checkClientUsage, "--command: empty command line")
		}
		name = command
	}
	selected, err := clientrun.Select(clientcases.All(), o.cases)
	if err != nil {
		return 0, usagef(checkClientUsage, "%v", err)
	}
	jobs := o.jobs
	if jobs == 0 {
		jobs = runner.DefaultJobs(tr)
	}
	rep, runErr := clientrun.Run(ctx, clientrun.Config{
		Client:        clientrun.Command{Argv: argv},
		ClientName:    name,
		Transport:     tr,
		Revision:      protocol,
		BothRevisions: bothRevisions || command == "",
		Cases:         selected,
		Jobs:          jobs,
		CaseTimeout:   o.caseTimeout,
		Strict:        o.strict,
		RelayCommand:  self,
		MaxFrame:      o.maxFrame,
	})
	if rep == nil {
		return 0, runErr
	}
	// The client runner reports at the end: the text report is printed
	// whole (or, with -q, its summary; with --json -, only the JSON).
	var live *liveOutput
	if o.jsonFile != "-" {
		live = newLiveOutput(e.Stdout, caseAreas(selected), report.TextOptions{Verbose: o.verbose, Color: useColor(e.Stdout, e.Getenv)},
			false, o.quiet, 80, e.redact)
		live.wholeAtEnd()
	}
	return e.finishRun(rep, o, known, live, runErr)
}

// self is the argv that runs mcpflight itself.
func (e Env) self() ([]string, error) {
	if len(e.ServeCommand) > 0 {
		return e.ServeCommand, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("locating the mcpflight executable: %w", err)
	}
	return []string{exe}, nil
}

func sortedClientFaults() []string {
	var out []string
	for f := range clientadapter.Faults() {
		out = append(out, string(f))
	}
	sort.Strings(out)
	return out
}

// clientRelay is "mcpflight client-relay --socket PATH", the stdio server
// a client under test spawns: it relays its stdin and stdout to the
// checking process (clientrun.Relay). Not listed in the usage.
func (e Env) clientRelay(ctx context.Context, args []string) (int, error) {
	var socket string
	fs := flag.NewFlagSet("client-relay", flag.ContinueOnError)
	fs.StringVar(&socket, "socket", "", "")
	if done, err := e.parse(fs, "Usage: mcpflight client-relay --socket PATH\n", args); done || err != nil {
		return 0, err
	}
	if socket == "" {
		return 0, usagef("Usage: mcpflight client-relay --socket PATH\n", "--socket is required")
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sig)
	// Only a signal ends the relay early (it reports it first): the
	// process's own context ends on the same signal.
	err := clientrun.Relay(context.WithoutCancel(ctx), socket, e.Stdin, e.Stdout, sig)
	if err != nil {
		return 0, err
	}
	return 0, nil
}

// clientAdapter is "mcpflight client-adapter [--fault NAME]...", the
// built-in client under the adapter contract. Not listed in the usage.
func (e Env) clientAdapter(ctx context.Context, args []string) (int, error) {
	var faults stringList
	fs := flag.NewFlagSet("client-adapter", flag.ContinueOnError)
	fs.Var(&faults, "fault", "")
	usage := "Usage: mcpflight client-adapter [--fault NAME]... SERVER\n"
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return 0, usagef(usage, "%v", err)
	}
	set := map[clientadapter.Fault]bool{}
	for _, f := range faults {
		ff, err := clientadapter.ParseFault(f)
		if err != nil {
			return 0, usagef(usage, "%v", err)
		}
		set[ff] = true
	}
	in, err := clientrun.ReadInstructions(e.Getenv)
	if err != nil {
		return 0, err
	}
	// The server's command line or URL is the last argument; the
	// instructions carry both too.
	cctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if err := clientadapter.Run(cctx, in, clientadapter.Options{Faults: set}, clientadapter.Writer(e.Stdout)); err != nil {
		return 1, nil
	}
	return 0, nil
}
