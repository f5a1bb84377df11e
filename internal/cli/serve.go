package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"strings"
	"text/tabwriter"

	"github.com/mcpflight/mcpflight/cases"
	"github.com/mcpflight/mcpflight/internal/hostile"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/refserver"
)

const serveUsage = `Usage: mcpflight serve --stdio [--protocols LIST] [--fault NAME]... [--hostile MODE]
       mcpflight serve --http ADDR [--protocols LIST] [--allow-origin ORIGIN]... [--fault NAME]... [--hostile MODE]
       mcpflight serve --list-faults | --list-hostile

Runs mcpflight's reference MCP server. With --stdio it serves one
connection over stdin and stdout and exits when its input ends. With --http
it serves Streamable HTTP at http://ADDR/mcp (any path is the endpoint),
prints that URL on stdout and runs until interrupted. It is dual-era: a
client that opens with initialize gets 2025-11-25 (a session), a request
that carries the 2026-07-28 _meta envelope is served on its own (stateless
HTTP: no session, GET and DELETE 405). Diagnostics go to stderr.

Flags:
  --stdio               serve over stdin/stdout
  --http ADDR           serve Streamable HTTP on ADDR, e.g. 127.0.0.1:8080
                        (127.0.0.1:0 picks a free port); a host that is not
                        loopback needs --listen-any (HTTP-5)
  --listen-any          allow --http to bind a non-loopback address
                        (--allow-remote is an older name for it)
  --allow-origin ORIGIN accept this Origin besides loopback ones (repeatable)
  --retry-ms N          send retry: N in every priming event
  --max-frame BYTES     largest input frame or POST body (default 4 MiB);
                        larger ones are skipped and answered -32700 or 413
  --max-in-flight N     requests of one session handled at once (default
                        64, -1 for no limit); more are refused with -31000
  --no-tasks            serve without the tasks capability: task-augmented
                        requests are then ordinary ones (TSK-4, TSK-24), and
                        without the tasks extension under 2026-07-28
  --protocols LIST      the revisions served, comma-separated: 2026-07-28,
                        2025-11-25 (default both); 2026-07-28 alone answers
                        initialize with -32022 naming its version (LIF-49),
                        2025-11-25 alone knows no server/discover
  --listen-teardown T   what ends a subscriptions/listen stream the server
                        closes: result (default, SUB-6/SUB-7) or cancelled
                        (notifications/cancelled, CAN-41); see ambiguity A-11
  --fault NAME          break one contract on purpose (repeatable)
  --list-faults         print the faults and what each breaks
  --hostile MODE        attack the client instead: garbage, floods, hangs,
                        crashes (for testing checkers; see --list-hostile)
  --list-hostile        print the hostile modes and what each does
`

func (e Env) serve(ctx context.Context, args []string) (int, error) {
	var (
		stdio, list, remote  bool
		listHostile, noTasks bool
		faults, origins      stringList
		httpAddr, hostileAt  string
		protocols, teardown  string
		retryMS              int
		maxFrame, maxFlight  int
	)
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.BoolVar(&stdio, "stdio", false, "")
	fs.StringVar(&httpAddr, "http", "", "")
	fs.BoolVar(&remote, "listen-any", false, "")
	fs.BoolVar(&remote, "allow-remote", false, "")
	fs.StringVar(&hostileAt, "hostile", "", "")
	fs.BoolVar(&listHostile, "list-hostile", false, "")
	fs.Var(&origins, "allow-origin", "")
	fs.IntVar(&retryMS, "retry-ms", 0, "")
	fs.IntVar(&maxFrame, "max-frame", refserver.MaxFrame, "")
	fs.IntVar(&maxFlight, "max-in-flight", refserver.DefaultMaxInFlight, "")
	fs.BoolVar(&list, "list-faults", false, "")
	fs.BoolVar(&noTasks, "no-tasks", false, "")
	fs.Var(&faults, "fault", "")
	fs.StringVar(&protocols, "protocols", "", "")
	fs.StringVar(&teardown, "listen-teardown", string(refserver.TeardownResult), "")
	if done, err := e.parse(fs, serveUsage, args); done || err != nil {
		return 0, err
	}
	if list {
		tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
		for _, f := range refserver.AllFaults() {
			fmt.Fprintf(tw, "%s\t%s\n", f, f.Description())
		}
		return 0, tw.Flush()
	}
	if listHostile {
		tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
		for _, in := range hostile.All() {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", in.Mode, in.Transport, in.Description)
		}
		return 0, tw.Flush()
	}
	if stdio == (httpAddr != "") {
		return 0, usagef(serveUsage, "serve needs --stdio or --http, not both")
	}
	set := refserver.FaultSet{}
	for _, name := range faults {
		f, err := refserver.ParseFault(name)
		if err != nil {
			return 0, usagef(serveUsage, "--fault: %v", err)
		}
		set[f] = true
	}
	var mode *hostile.Info
	if hostileAt != "" {
		kind := hostile.TransportStdio
		if httpAddr != "" {
			kind = hostile.TransportHTTP
		}
		in, err := hostile.Lookup(hostileAt, kind)
		if err != nil {
			return 0, usagef(serveUsage, "--hostile: %v", err)
		}
		mode = &in
	}
	if maxFrame <= 0 {
		return 0, usagef(serveUsage, "--max-frame must be positive")
	}
	if maxFlight == 0 {
		return 0, usagef(serveUsage, "--max-in-flight must be positive, or negative for no limit")
	}
	var served []string
	if protocols != "" {
		var err error
		if served, err = refserver.ParseProtocols(protocols); err != nil {
			return 0, usagef(serveUsage, "--protocols: %v", err)
		}
	}
	td, err := refserver.ParseListenTeardown(teardown)
	if err != nil {
		return 0, usagef(serveUsage, "--listen-teardown: %v", err)
	}
	srv := refserver.New(refserver.Options{Faults: set, Stderr: e.Stderr, Version: e.version(), MaxFrame: maxFrame, MaxInFlight: maxFlight, NoTasks: noTasks,
		Protocols: served, ListenTeardown: td})
	if httpAddr != "" {
		var wrap func(http.Handler) http.Handler
		if mode != nil {
			wrap = func(h http.Handler) http.Handler { return hostile.Handler(mode.Mode, h) }
		}
		return e.serveHTTP(ctx, srv, httpAddr, remote, refserver.HTTPOptions{AllowedOrigins: origins, RetryMillis: retryMS}, wrap)
	}
	if mode != nil {
		code, err := hostile.ServeStdio(ctx, mode.Mode, srv, e.Stdin, e.Stdout, e.Stderr)
		if err != nil && !(ctx.Err() != nil && errors.Is(err, ctx.Err())) {
			return code, fmt.Errorf("serve --hostile %s: %w", mode.Mode, err)
		}
		return code, nil
	}
	err = srv.Serve(ctx, e.Stdin, e.Stdout)
	switch {
	case err == nil:
		return 0, nil
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		// Asked to stop (SIGTERM, SIGINT): a normal end.
		return 0, nil
	}
	return 0, fmt.Errorf("serve: %w", err)
}

const casesUsage = `Usage: mcpflight cases [--json]

Lists the catalogue: ID, requirement IDs, protocol versions, what the case
needs of the target, and its title.
`

// caseJSON is one case in "mcpflight cases --json".
type caseJSON struct {
	ID           string   `json:"id"`
	Title        string   `json:"title"`
	Area         string   `json:"area"`
	Requirements []string `json:"requirements"`
	Versions     []string `json:"versions"`
	Needs        []string `json:"needs"`
	Sends        string   `json:"sends,omitempty"`
	Expect       string   `json:"expect,omitempty"`
}

func (e Env) listCases(args []string) (int, error) {
	var asJSON bool
	fs := flag.NewFlagSet("cases", flag.ContinueOnError)
	fs.BoolVar(&asJSON, "json", false, "")
	if done, err := e.parse(fs, casesUsage, args); done || err != nil {
		return 0, err
	}
	all := cases.All()
	if asJSON {
		out := make([]caseJSON, 0, len(all))
		for _, c := range all {
			out = append(out, caseJSON{
				ID: c.ID, Title: c.Title, Area: c.Area(),
				Requirements: nonNil(c.Reqs), Versions: nonNil(c.Versions), Needs: nonNil(NeedsList(c.Needs)),
				Sends: c.Sends, Expect: c.Expect,
			})
		}
		enc := json.NewEncoder(e.Stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return 0, enc.Encode(out)
	}
	tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tREQUIREMENTS\tVERSIONS\tNEEDS\tTITLE")
	for _, c := range all {
		needs := strings.Join(NeedsList(c.Needs), ",")
		if needs == "" {
			needs = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.ID, strings.Join(c.Reqs, ","), strings.Join(c.Versions, ","), needs, c.Title)
	}
	if err := tw.Flush(); err != nil {
		return 0, err
	}
	fmt.Fprintf(e.Stdout, "%d cases\n", len(all))
	return 0, nil
}

// NeedsList names what a case needs of the target: slow-tool (or
// slow-tool? for one that runs without it too), effect-tool, log-tool,
// control, capability:NAME, no-handshake, stdio.
func NeedsList(n probe.Needs) []string {
	var out []string
	add := func(on bool, name string) {
		if on {
			out = append(out, name)
		}
	}
	add(n.SlowTool, "slow-tool")
	add(n.UsesSlowTool, "slow-tool?")
	add(n.EffectTool, "effect-tool")
	add(n.LogTool, "log-tool")
	add(n.Control, "control")
	for _, c := range n.Capabilities {
		out = append(out, "capability:"+c)
	}
	add(n.NoHandshake, "no-handshake")
	add(n.Stdio, "stdio")
	add(n.HTTP, "http")
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
