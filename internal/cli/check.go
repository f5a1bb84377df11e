package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/baseline"
	"github.com/mcpflight/mcpflight/cases"
	"github.com/mcpflight/mcpflight/negotiate"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/report"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/runner"
	"github.com/mcpflight/mcpflight/transport"
)

const checkUsage = `Usage: mcpflight check [flags]

Runs the catalogue against an MCP server over stdio or Streamable HTTP.
Without --stdio or --url the target is mcpflight's own reference server,
started as "mcpflight serve --stdio" (or, with --transport http, served
in this process on a free 127.0.0.1 port, a server for each case).

Cases run side by side (--jobs), each on a session (over stdio, a
process) of its own, except that over stdio the tidy cases, which leave
a server as they found it, go on one after another on server processes
other tidy cases started, sparing a start each; each still has a
chronology of its own, whose first event says whose session it
continues. A case that what the server declared in an earlier case's
session skips (it needs the control extension, a capability, or a server
without tasks) is decided on that declaration without a session of its
own; its chronology names the case (--isolate gives every case its own
session and decides each on it).

The text report is printed as the run goes, grouped by area (each area's
heading once, areas in catalogue order): a case's lines as soon as that
case and every case before it in the report have finished (not in
finishing order), so the output is the same whatever --jobs. Skips are
folded into one line per reason after the areas ("SKIP  39 cases: profile
names no slow tool; pass --profile"; -v lists each in its area); then come
the teardown grade, the schema check, and, when the run found anything,
a recap with one line per finding (verdict, case, requirement and the seq
of the first wrong event) just before the summary line, so that the last
screen names every finding. On a terminal a status line at the bottom
shows the cases done, those running and the time elapsed; it is erased
before anything else is printed and at the end. When stdout is not a
terminal there is no status line. -q prints only the summary line; with
--json - only the JSON is printed.

After the cases, every case's chronology is judged with the rules watch
applies to a live conversation (progress, responses, cancels, tasks,
logs): a rule that finds what no case reported, in a chronology whose
case does not cite its requirement, adds a result "passive/RULE" after
the areas, naming the case it was seen in.

Verdicts:
  pass     the case found what it expected
  fail     the target broke a MUST (or a definition the protocol rests on)
  warn     the target broke a SHOULD; --strict counts it as a fail
  info     the spec leaves the behaviour open (a MAY); says which branch
  skip     the case did not run or could not exercise its rule; says why
  blocked  not judged: a helper step failed; the case named judges that step
  error    the harness or the target broke; says nothing of conformance

Flags:
` + targetUsage + serveFlagsUsage + `  --transport NAME     stdio (default) or http, for the built-in server
` + checkProtocolUsage + `  --profile NAME|FILE  the target profile: a built-in name (reference,
                       server-everything) or a JSON/YAML file. Default:
                       reference for the built-in server; for --stdio,
                       server-everything when the command names it, else none
                       (cases that need a tool are skipped)
  --case GLOB          run only cases whose ID matches (repeatable), e.g.
                       'cancel/*'; an area alone (--case cancel) means all its
                       cases, cancel/*
  --strict             count warns (broken SHOULDs) as fails
  --json FILE          also write the report as JSON to FILE ("-": stdout,
                       instead of the text report)
  --jsonl-dir DIR      write each case's chronology to DIR/<case-id>@<revision>.jsonl
                       (render one with "mcpflight show FILE.jsonl")
  --junit FILE         also write the report as JUnit XML to FILE
  --html FILE          also write the report as one self-contained HTML page
  --baseline FILE      known failures and warnings (a JSON list of {"id",
                       "verdict"}): listed ones are shown but do not change
                       the exit code; new fails and stale entries (listed
                       but now passing) exit 1
  --write-baseline FILE
                       write this run's fails and warns as a baseline
  -v                   print every case's chronology, and every skip in its
                       area instead of one line per reason
  -q                   print only the summary line (and, with --baseline,
                       the comparison)
  --jobs N             run N cases at once; 1 runs them one after another,
                       each teardown before the next case. Default: 48 over
                       HTTP, 8 per CPU over stdio (starting at most one
                       server per CPU at a time). With N > 1 a case's
                       teardown (a server that needs SIGTERM) goes on beside
                       the next cases and is still graded. The report is the
                       same whatever N
  --isolate            give every case a session (over stdio, a server
                       process) of its own, the tidy cases too, and decide
                       each case's needs on it
  --max-frame BYTES    largest frame accepted from the server (default 4194304)
  --case-timeout D     deadline of one case, handshake included (default 15s)
  --timeout D          deadline of the whole run (default: none); when it is
                       reached, the case running and every case not yet run
                       get an error, the targets are killed, and the exit
                       code is 2 (1 if a case already failed)
  --grace D            observation window for things that must not happen
                       (default: the profile's)
  --target-fault NAME  start the built-in server with a fault (repeatable;
                       see "mcpflight serve --list-faults")

Exit codes:
  0  conformant: no fail (no warn under --strict), no error, and at least
     half of the cases that apply to the target's transport and the run's
     revision ran
  1  non-conformant: a fail (of a case, the teardown or the schema check)
  2  a usage error, an error of the harness or the target, or an
     interrupted run, with no fail
  3  incomplete: no fail and no error, but fewer than half of the
     applicable cases ran (the summary says how many did not, and what
     would let most of them run)
`

// runFlags are the flags of a catalogue run and its reports, declared
// once for check and check-client: --case, --strict, the report files,
// the baselines, -v, -q, --jobs, --case-timeout and --max-frame.
type runFlags struct {
	cases       stringList
	strict      bool
	jsonFile    string
	jsonlDir    string
	junitFile   string
	htmlFile    string
	baseline    string
	writeBase   string
	verbose     bool
	quiet       bool
	jobs        int
	maxFrame    int
	caseTimeout time.Duration
}

// register declares the run flags on fs.
func (r *runFlags) register(fs *flag.FlagSet) {
	fs.Var(&r.cases, "case", "")
	fs.BoolVar(&r.strict, "strict", false, "")
	fs.StringVar(&r.jsonFile, "json", "", "")
	fs.StringVar(&r.jsonlDir, "jsonl-dir", "", "")
	fs.StringVar(&r.junitFile, "junit", "", "")
	fs.StringVar(&r.htmlFile, "html", "", "")
	fs.StringVar(&r.baseline, "baseline", "", "")
	fs.StringVar(&r.writeBase, "write-baseline", "", "")
	fs.BoolVar(&r.verbose, "v", false, "")
	fs.BoolVar(&r.quiet, "q", false, "")
	fs.IntVar(&r.jobs, "jobs", 0, "")
	fs.IntVar(&r.maxFrame, "max-frame", transport.DefaultMaxFrame, "")
	fs.DurationVar(&r.caseTimeout, "case-timeout", runner.DefaultCaseTimeout, "")
}

// checkOptions are the parsed flags of check.
type checkOptions struct {
	targetFlags
	runFlags
	transport  string
	profile    string
	runTimeout time.Duration
	grace      time.Duration
	isolate    bool
	faults     stringList
	serve      serveFlags
	// header is what headers resolved to.
	header http.Header
}

func (e Env) check(ctx context.Context, args []string) (int, error) {
	var o checkOptions
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	o.targetFlags.register(fs, true)
	o.runFlags.register(fs)
	fs.StringVar(&o.transport, "transport", "", "")
	fs.StringVar(&o.profile, "profile", "", "")
	fs.DurationVar(&o.runTimeout, "timeout", 0, "")
	fs.DurationVar(&o.grace, "grace", 0, "")
	fs.BoolVar(&o.isolate, "isolate", false, "")
	fs.Var(&o.faults, "target-fault", "")
	o.serve.register(fs)
	if done, err := e.parse(fs, checkUsage, args); done || err != nil {
		return 0, err
	}
	mode, err := o.protocol.mode(checkUsage, true)
	if err != nil {
		return 0, err
	}
	if mode == negotiate.ModeBoth && (o.baseline != "" || o.writeBase != "") {
		return 0, usagef(checkUsage, "a baseline lists the cases of one revision: --baseline and --write-baseline need --protocol 2025-11-25, 2026-07-28 or auto")
	}
	// A baseline that cannot be read is known before anything runs.
	var known []baseline.Entry
	if o.baseline != "" {
		if known, err = baseline.Read(o.baseline); err != nil {
			return 0, usagef(checkUsage, "--baseline: %v", err)
		}
	}

	switch {
	case o.maxFrame <= 0:
		return 0, usagef(checkUsage, "--max-frame must be positive")
	case o.caseTimeout <= 0:
		return 0, usagef(checkUsage, "--case-timeout must be positive")
	case o.runTimeout < 0:
		return 0, usagef(checkUsage, "--timeout must not be negative")
	case o.grace < 0:
		return 0, usagef(checkUsage, "--grace must not be negative")
	case o.jobs < 0:
		return 0, usagef(checkUsage, "--jobs must be at least 1")
	case o.quiet && o.verbose:
		return 0, usagef(checkUsage, "-q and -v contradict each other; pass one")
	case o.shell && o.stdio == "" && o.serve.cmd == "":
		return 0, usagef(checkUsage, "--shell needs --stdio or --serve")
	case len(o.faults) > 0 && o.stdio != "":
		return 0, usagef(checkUsage, "--target-fault applies to the built-in server only, not to --stdio")
	case len(o.faults) > 0 && o.url != "":
		return 0, usagef(checkUsage, "--target-fault applies to the built-in server only, not to --url")
	case o.url != "" && o.stdio != "":
		return 0, usagef(checkUsage, "--url and --stdio name two targets; pass one")
	case checkURL(o.url, checkUsage) != nil:
		return 0, checkURL(o.url, checkUsage)
	case o.transport != "" && o.transport != runner.TransportStdio && o.transport != runner.TransportHTTP:
		return 0, usagef(checkUsage, "--transport must be stdio or http")
	case o.transport == runner.TransportHTTP && o.stdio != "":
		return 0, usagef(checkUsage, "--transport http does not apply to --stdio")
	case o.transport == runner.TransportStdio && o.url != "":
		return 0, usagef(checkUsage, "--transport stdio does not apply to --url")
	case o.headers.given() && o.url == "" && o.transport != runner.TransportHTTP:
		return 0, usagef(checkUsage, "%v", errHeadersNeedHTTP)
	}
	if o.header, err = e.resolveHeaders(o.headers, checkUsage); err != nil {
		return 0, err
	}

	var (
		target runner.Target
		prof   *profile.Profile
	)
	if o.url != "" || o.transport == runner.TransportHTTP {
		target, prof, err = e.httpTarget(o)
	} else {
		target, prof, err = e.stdioTarget(o)
	}
	if err != nil {
		return 0, err
	}
	selected, err := runner.Select(cases.All(), areaGlobs(cases.All(), o.cases))
	if err != nil {
		return 0, usagef(checkUsage, "%v", err)
	}
	served, err := e.startServe(ctx, o, checkUsage)
	if err != nil {
		return 0, err
	}
	defer served.stop(ctx)
	target = served.wrap(target)
	jobs := o.jobs
	if jobs == 0 {
		jobs = runner.DefaultJobs(target.Transport)
	}
	cfg := runner.Config{
		Target:      target,
		Profile:     prof,
		Cases:       selected,
		CaseTimeout: o.caseTimeout,
		RunTimeout:  o.runTimeout,
		Grace:       o.grace,
		Strict:      o.strict,
		Jobs:        jobs,
		Starts:      runner.DefaultStarts(target.Transport),
		Isolate:     o.isolate,
	}
	var live *liveOutput
	if o.jsonFile != "-" {
		width := terminalWidth(e.Stdout)
		if width <= 0 {
			width = 80
		}
		live = newLiveOutput(e.Stdout, caseAreas(selected), report.TextOptions{Verbose: o.verbose, Color: useColor(e.Stdout, e.Getenv)},
			isTerminal(e.Stdout), o.quiet, width, e.redact)
		if mode == negotiate.ModeBoth {
			// One run per revision: the report, grouped by area across
			// them, is printed whole at the end.
			live.wholeAtEnd()
		}
		cfg.Watch = live
		defer live.Close()
	}
	if live != nil {
		live.Negotiating()
	}
	rep, runErr := runner.RunProtocol(ctx, cfg, mode, negotiate.Options{})
	served.grade(ctx, rep)
	if rep == nil {
		return 0, runErr
	}
	redactReport(rep, e.redact)
	if rep.NoSession != nil {
		return e.noSession(rep, o, live)
	}
	code, err := e.finishRun(rep, o, known, live, runErr)
	if hint := profileHint(prof, rep); hint != "" && err == nil {
		fmt.Fprintln(e.Stderr, hint)
	}
	return code, err
}

// profileHint is a line for stderr when the run had no profile and the
// server calls itself by the name of one a built-in profile was written
// for: the cases that need its tools skipped, and --profile would run
// them. "" otherwise.
func profileHint(prof *profile.Profile, rep *results.Report) string {
	if prof != nil || rep.Server == nil {
		return ""
	}
	name := profile.BuiltinFor(rep.Server.Name)
	if name == "" {
		return ""
	}
	// The name is one BuiltinFor knows, so it needs no sanitizing.
	return fmt.Sprintf("mcpflight: hint: the server calls itself %q, for which the built-in profile %s names the tools; with --profile %s the cases that need them run",
		rep.Server.Name, name, name)
}

// noSession ends a run that could open no session with its target: the
// report files say so, stdout stays empty (but for --json -), and the one
// line goes to stderr; the exit code is 2 whatever a baseline lists.
func (e Env) noSession(rep *results.Report, o checkOptions, live *liveOutput) (int, error) {
	o.baseline = ""
	if err := e.write(rep, o, nil, live); err != nil {
		return 0, err
	}
	fmt.Fprintln(e.Stderr, report.Summary(rep))
	return rep.ExitCode(), nil
}

// finishRun ends a run the way check and check-client share: the report
// compared with the --baseline entries known (when o names one) and
// written (e.write), an interrupted run said on stderr, the
// --write-baseline file written, the comparison printed, and the exit
// code: the comparison's with a baseline, else the report's.
func (e Env) finishRun(rep *results.Report, o checkOptions, known []baseline.Entry, live *liveOutput, runErr error) (int, error) {
	var cmp *results.BaselineComparison
	if o.baseline != "" {
		c := baseline.Compare(rep, known)
		cmp = &c
	}
	if err := e.write(rep, o, cmp, live); err != nil {
		return 0, err
	}
	if runErr != nil {
		// Interrupted: the partial report is out, and its exit code says
		// so (report.Interrupted).
		fmt.Fprintf(e.Stderr, "mcpflight: %v\n", runErr)
	}
	if o.writeBase != "" {
		entries := baseline.FromReport(rep)
		if err := e.writeFile(o.writeBase, func(w io.Writer) error { return baseline.Write(w, entries) }); err != nil {
			return 0, fmt.Errorf("--write-baseline: %w", err)
		}
		fmt.Fprintf(e.Stderr, "mcpflight: wrote a baseline of %s to %s\n", plural(len(entries), "known failure or warning", "known failures and warnings"), o.writeBase)
	}
	if cmp != nil {
		if o.jsonFile != "-" {
			fmt.Fprintln(e.Stdout)
			if err := report.Baseline(e.Stdout, rep, *cmp, o.baseline); err != nil {
				return 0, err
			}
		}
		return cmp.ExitCode(rep), nil
	}
	return rep.ExitCode(), nil
}

// write renders the report: JSON to a file, chronologies to a directory,
// and on stdout the end of the text report that live has printed as the
// run went (or JSON with --json -, when live is nil). cmp, when not nil,
// is the run set against --baseline, which the JSON report includes.
func (e Env) write(rep *results.Report, o checkOptions, cmp *results.BaselineComparison, live *liveOutput) error {
	writeJSON := func(w io.Writer) error {
		if cmp != nil {
			return report.JSONWithBaseline(w, rep, *cmp, o.baseline)
		}
		return report.JSON(w, rep)
	}
	if o.jsonlDir != "" {
		if err := e.writeJSONL(o.jsonlDir, rep); err != nil {
			return err
		}
	}
	for _, out := range []struct {
		flag, file string
		render     func(io.Writer, *results.Report) error
	}{
		{"--junit", o.junitFile, report.JUnit},
		{"--html", o.htmlFile, report.HTML},
	} {
		if out.file == "" {
			continue
		}
		if err := e.writeFile(out.file, func(w io.Writer) error { return out.render(w, rep) }); err != nil {
			return fmt.Errorf("%s: %w", out.flag, err)
		}
	}
	switch o.jsonFile {
	case "-":
		return writeJSON(e.Stdout)
	case "":
	default:
		if err := e.writeFile(o.jsonFile, writeJSON); err != nil {
			return err
		}
	}
	return live.End(rep)
}

// areaGlobs reads a --case that is an area's name alone (cancel) as
// every case of the area (cancel/*); other globs stay as they are.
func areaGlobs(all []probe.Case, globs []string) []string {
	areas := map[string]bool{}
	for _, c := range all {
		areas[c.Area()] = true
	}
	out := make([]string, len(globs))
	for i, g := range globs {
		out[i] = g
		if areas[g] && !strings.ContainsAny(g, "/*?[") {
			out[i] = g + "/*"
		}
	}
	return out
}

// JSONLName is the file name of a case's chronology in --jsonl-dir,
// under the revision it ran under: "cancel_mid-work-no-response@2025-11-25.jsonl".
// The revision is in every name, so that a run of both revisions keeps
// both chronologies of a case, and a file says what it was run under.
func JSONLName(caseID, revision string) string {
	name := strings.ReplaceAll(caseID, "/", "_")
	if revision != "" {
		name += "@" + revision
	}
	return name + ".jsonl"
}

// writeJSONL writes every case's chronology to dir, one file per case and
// revision. Two results of one run with the same name would overwrite
// one's evidence with the other's: that is a harness bug, and an error.
func (e Env) writeJSONL(dir string, rep *results.Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--jsonl-dir: %w", err)
	}
	written := map[string]bool{}
	for _, res := range rep.Results {
		if res.Area == results.AreaPassive {
			continue // its evidence is the chronology of the case it names
		}
		rev := res.Revision
		if rev == "" {
			rev = rep.Version
		}
		name := JSONLName(res.ID, rev)
		if written[name] {
			return fmt.Errorf("--jsonl-dir: two chronologies of the run are named %s", name)
		}
		written[name] = true
		// A case skipped before it had a connection has an empty
		// chronology, and an empty file.
		log := res.Log
		err := e.writeFile(filepath.Join(dir, name), func(w io.Writer) error {
			if log == nil {
				return nil
			}
			return log.WriteJSONL(w)
		})
		if err != nil {
			return fmt.Errorf("--jsonl-dir: %w", err)
		}
	}
	if s := rep.Served; s != nil && s.Log != nil {
		if err := e.writeFile(filepath.Join(dir, ServedJSONLName), s.Log.WriteJSONL); err != nil {
			return fmt.Errorf("--jsonl-dir: %w", err)
		}
	}
	return nil
}

// writeFile writes a file through fill and the redactor, reporting the
// first error of either.
func (e Env) writeFile(path string, fill func(io.Writer) error) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	w := e.redact.Writer(f)
	if err := fill(w); err != nil {
		return err
	}
	return w.Flush()
}

// useColor reports whether the text report on w gets colours: only on a
// terminal, and never when NO_COLOR is set (https://no-color.org).
func useColor(w io.Writer, getenv func(string) string) bool {
	return getenv("NO_COLOR") == "" && isTerminal(w)
}

// isTerminal reports whether w is a character device, such as a terminal.
func isTerminal(w io.Writer) bool {
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok {
		w = u.Unwrap()
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// plural is "1 thing" or "n things".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
