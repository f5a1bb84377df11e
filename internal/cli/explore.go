package cli

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/explore"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/report"
	"github.com/mcpflight/mcpflight/runner"
	"github.com/mcpflight/mcpflight/transport"
)

const exploreUsage = `Usage: mcpflight explore [flags]
       mcpflight explore --replay FILE [target flags]

Looks for races: each trial opens several sessions of the target at once
and drives them through seeded random operations (calls with and without
progress tokens, cancels at every point of a call, duplicate and invalid
cancels, token reuse, ping, dropped and resumed HTTP streams, closed
sessions, durable tasks). Against a server with the io.mcpflight/control
extension, calls advance only at the checkpoints the explorer releases, so
a seed replays the same interleaving. The history of all sessions, on one
clock, is checked against invariants from the spec; races the spec allows
are counted by which way they went. A violation is shrunk to the smallest
plan that still shows it and written as a replay file and its chronology.
Without --stdio or --url the target is the built-in reference server in
this process. See docs/explore.md.

Target (--stdio starts one process per session):
` + targetUsage + `  --transport NAME     the built-in server: inprocess (default), http (its
                       Streamable HTTP endpoint in this process) or stdio
                       (a "mcpflight serve --stdio" child per session)
  --target-fault NAME  start the built-in server with a fault (repeatable)
  --profile NAME|FILE  the slow tool of a target without the control
                       extension (as for check), and its observer, which
                       each stdio session reads when it opens and at its
                       end (docs/observer.md)
  --no-control         ignore the control extension: calls run ungated and
                       acceptance of a cancel is not evidenced
  --protocol REV       the protocol revision the sessions speak and whose
                       invariants are checked: 2025-11-25 (default;
                       initialize) or 2026-07-28 (the envelope on every
                       request and server/discover, no tasks; over HTTP a
                       cancel closes the request's stream). --revision is
                       the same flag. A replay runs under its file's revision
  --no-races           draw no racing variants (every release awaited, no
                       cancel right after a release): the seed alone then
                       orders everything the explorer sends
  --max-frame BYTES    largest frame accepted from the server (default 4194304)

Budget:
  --ops N              operations in all (default 2000 without --duration)
  --duration D         stop starting trials after D
  --sessions N         sessions open at once in each trial (default 4)
  --trial-ops N        operations per trial (default 25 per session)
  --workers N          trials run at once (default: the CPUs for the
                       built-in server in process, else 1)
  --seed N             the seed (default: random, printed)
  --op-timeout D       bound of each wait of an operation (default 5s); only
                       a response that never comes is shown by it

Counterexamples:
  --out DIR            where the replay file and chronology of a violation
                       go (default: the current directory)
  --no-shrink          report the failing trial as found
  --shrink-runs N      runs the shrinking may take (default 300)
  --replay FILE        run a replay file again (against the target it names
                       when it was the built-in server, else the target
                       flags) and report whether its violation reproduces

Output:
  --json FILE          the result as JSON ("-": stdout, instead of the text)
  -v                   print every violation, and the whole minimal chronology

Exit codes: 0 no violation, 1 a violation, 2 usage, harness or target error.
`

// exploreOptions are the parsed flags of explore.
type exploreOptions struct {
	target    checkOptions
	noControl bool
	noRaces   bool
	revision  string
	protocol  string
	// explicit is the revision given on the command line with --replay,
	// which must be the file's.
	explicit   string
	ops        int
	duration   time.Duration
	sessions   int
	trialOps   int
	workers    int
	seed       string
	opTimeout  time.Duration
	out        string
	noShrink   bool
	shrinkRuns int
	replay     string
	jsonFile   string
	verbose    bool
}

func (e Env) explore(ctx context.Context, args []string) (int, error) {
	var o exploreOptions
	fs := flag.NewFlagSet("explore", flag.ContinueOnError)
	o.target.targetFlags.register(fs, false)
	fs.StringVar(&o.target.transport, "transport", "", "")
	fs.Var(&o.target.faults, "target-fault", "")
	fs.StringVar(&o.target.profile, "profile", "", "")
	fs.IntVar(&o.target.maxFrame, "max-frame", transport.DefaultMaxFrame, "")
	fs.BoolVar(&o.noControl, "no-control", false, "")
	fs.BoolVar(&o.noRaces, "no-races", false, "")
	fs.StringVar(&o.revision, "revision", "", "")
	fs.StringVar(&o.protocol, "protocol", "", "")
	fs.IntVar(&o.ops, "ops", 0, "")
	fs.DurationVar(&o.duration, "duration", 0, "")
	fs.IntVar(&o.sessions, "sessions", explore.DefaultSessions, "")
	fs.IntVar(&o.trialOps, "trial-ops", 0, "")
	fs.IntVar(&o.workers, "workers", 0, "")
	fs.StringVar(&o.seed, "seed", "", "")
	fs.DurationVar(&o.opTimeout, "op-timeout", explore.DefaultOpTimeout, "")
	fs.StringVar(&o.out, "out", ".", "")
	fs.BoolVar(&o.noShrink, "no-shrink", false, "")
	fs.IntVar(&o.shrinkRuns, "shrink-runs", explore.DefaultShrinkRuns, "")
	fs.StringVar(&o.replay, "replay", "", "")
	fs.StringVar(&o.jsonFile, "json", "", "")
	fs.BoolVar(&o.verbose, "v", false, "")
	if done, err := e.parse(fs, exploreUsage, args); done || err != nil {
		return 0, err
	}
	switch {
	case o.ops < 0 || o.sessions < 1 || o.sessions > explore.MaxSessions || o.trialOps < 0 || o.workers < 0 || o.shrinkRuns < 1:
		return 0, usagef(exploreUsage, "--ops, --trial-ops and --workers must not be negative, --shrink-runs must be positive, and --sessions must be 1..%d", explore.MaxSessions)
	case o.duration < 0 || o.opTimeout <= 0:
		return 0, usagef(exploreUsage, "--duration must not be negative and --op-timeout must be positive")
	case o.target.maxFrame <= 0:
		return 0, usagef(exploreUsage, "--max-frame must be positive")
	case o.target.transport != "" && !slices.Contains([]string{explore.TransportInProcess, explore.TransportHTTP, explore.TransportStdio}, o.target.transport):
		return 0, usagef(exploreUsage, "--transport must be inprocess, http or stdio")
	case o.target.transport != "" && (o.target.stdio != "" || o.target.url != ""):
		return 0, usagef(exploreUsage, "--transport applies to the built-in server only")
	case len(o.target.faults) > 0 && (o.target.stdio != "" || o.target.url != ""):
		return 0, usagef(exploreUsage, "--target-fault applies to the built-in server only")
	case o.target.shell && o.target.stdio == "":
		return 0, usagef(exploreUsage, "--shell needs --stdio")
	case o.target.headers.given() && o.target.url == "":
		return 0, usagef(exploreUsage, "%v", errHeadersNeedHTTP)
	}
	if err := o.pickRevision(); err != nil {
		return 0, err
	}
	if o.replay != "" {
		return e.exploreReplay(ctx, o)
	}
	seed, err := exploreSeed(o.seed)
	if err != nil {
		return 0, usagef(exploreUsage, "--seed: %v", err)
	}
	target, prof, stop, err := e.exploreTarget(o.target, nil)
	if err != nil {
		return 0, err
	}
	defer stop()
	cfg := explore.Config{Target: target, Revision: o.revision, Seed: seed, Ops: o.ops, Duration: o.duration, Sessions: o.sessions,
		OpsPerTrial: o.trialOps, Workers: o.workers, OpTimeout: o.opTimeout, NoControl: o.noControl, NoRaces: o.noRaces, Profile: prof,
		NoShrink: o.noShrink, ShrinkRuns: o.shrinkRuns}
	if cfg.Ops == 0 && cfg.Duration == 0 {
		cfg.Ops = 2000
	}
	if cfg.Workers == 0 {
		cfg.Workers = 1
		if target.Info().BuiltIn && target.Info().Transport == explore.TransportInProcess {
			cfg.Workers = runtime.GOMAXPROCS(0)
		}
	}
	defer debug.SetGCPercent(debug.SetGCPercent(explore.GCPercent))
	res, err := explore.Run(ctx, cfg)
	if err != nil {
		return 0, err
	}
	var files []string
	if res.Found != nil {
		if files, err = e.writeFound(o.out, res, cfg); err != nil {
			return 0, err
		}
	}
	if err := e.exploreOutput(o, func(w io.Writer) error { return exploreText(w, res, files, o.verbose) }, res); err != nil {
		return 0, err
	}
	if res.Found != nil {
		return ExitNonConformant, nil
	}
	return ExitConformant, nil
}

// exploreSeed parses --seed, or draws one.
func exploreSeed(s string) (uint64, error) {
	if s != "" {
		return strconv.ParseUint(s, 10, 64)
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, err
	}
	var n uint64
	for _, x := range b[:6] { // 48 bits: short enough to type
		n = n<<8 | uint64(x)
	}
	return n, nil
}

// exploreTarget builds the target: the URL or command given, or the
// built-in server (with the faults of o, or of a replay file's target
// when o names none).
func (e Env) exploreTarget(o checkOptions, replayed *explore.TargetInfo) (explore.Target, *profile.Profile, func(), error) {
	nop := func() {}
	if o.url == "" && o.stdio == "" {
		if replayed != nil && replayed.BuiltIn && o.transport == "" && len(o.faults) == 0 {
			o.transport, o.faults = replayed.Transport, replayed.Faults
		}
		prof, _ := profile.Builtin(profile.Reference)
		if o.transport == "" || o.transport == explore.TransportInProcess || o.transport == explore.TransportHTTP {
			opts := explore.BuiltInOptions{Transport: o.transport}
			if opts.Transport == "" {
				opts.Transport = explore.TransportInProcess
			}
			for _, name := range o.faults {
				f, err := refserver.ParseFault(name)
				if err != nil {
					return nil, nil, nop, usagef(exploreUsage, "--target-fault: %v", err)
				}
				opts.Faults = append(opts.Faults, f)
			}
			b, err := explore.NewBuiltIn(opts)
			if err != nil {
				return nil, nil, nop, err
			}
			return b, prof, b.Close, nil
		}
		o.transport = ""
	}
	t, prof, stop, err := e.sessionTarget(o, exploreUsage)
	if err != nil {
		return nil, nil, nop, err
	}
	info := explore.TargetInfo{Name: t.Name, Transport: explore.TransportStdio}
	if t.Transport == runner.TransportHTTP {
		info.Transport = explore.TransportHTTP
	}
	if o.url == "" && o.stdio == "" {
		info.BuiltIn, info.Faults = true, slices.Sorted(slices.Values(o.faults))
	}
	return explore.Remote(info, t.Redacting(e.redact).Dial), prof, stop, nil
}

// writeFound writes the replay file and the minimal chronology of a
// violation into dir and returns their paths.
func (e Env) writeFound(dir string, res *explore.Result, cfg explore.Config) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	base := filepath.Join(dir, fmt.Sprintf("explore-%d", res.Seed))
	replay, jsonl := base+".replay.json", base+".jsonl"
	rp := explore.NewReplay(res, cfg)
	if err := e.writeFile(replay, func(w io.Writer) error { return explore.WriteReplay(w, rp) }); err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	files := []string{replay}
	if h := res.Found.History; h != nil {
		if err := e.writeFile(jsonl, func(w io.Writer) error { return chrono.WriteEventsJSONL(w, h.Events) }); err != nil {
			return nil, fmt.Errorf("--out: %w", err)
		}
		files = append(files, jsonl)
	}
	return files, nil
}

// exploreOutput writes the text (or with --json -, the JSON) on stdout
// and the JSON to --json FILE.
func (e Env) exploreOutput(o exploreOptions, text func(io.Writer) error, v any) error {
	writeJSON := func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	switch o.jsonFile {
	case "-":
		return writeJSON(e.Stdout)
	case "":
	default:
		if err := e.writeFile(o.jsonFile, writeJSON); err != nil {
			return fmt.Errorf("--json: %w", err)
		}
	}
	return text(e.Stdout)
}

// exploreText is the text report of a run.
func exploreText(w io.Writer, res *explore.Result, files []string, verbose bool) error {
	s := func(x string) string { return chrono.Sanitize(x, false) }
	fmt.Fprintf(w, "mcpflight explore: %s, revision %s, seed %d\n", s(res.Target.Name), res.Revision, res.Seed)
	fmt.Fprintf(w, "  %d sessions per trial over %s; control extension: %s; tasks: %s\n", res.Sessions, res.Features.Transport,
		yesNo(res.Features.Control), yesNo(res.Features.Tasks))
	fmt.Fprintf(w, "  %d trials, %d operations (%d skipped) in %v: %.0f operations/s, %d events\n",
		res.Trials, res.Ops, res.Skipped, res.Elapsed.Round(time.Millisecond), res.OpsPerSecond(), res.Events)
	fmt.Fprintf(w, "  operations: %s\n", counts(res.ByKind, res.Revision))
	if len(res.Figures.Races) > 0 {
		fmt.Fprintln(w, "  races, by the ordering that happened (the spec allows each; not violations):")
		for _, k := range slices.Sorted(maps.Keys(res.Figures.Races)) {
			fmt.Fprintf(w, "    %7d  %s\n", res.Figures.Races[k], k)
		}
	}
	if len(res.Figures.Counts) > 0 {
		fmt.Fprintln(w, "  counts:")
		for _, k := range slices.Sorted(maps.Keys(res.Figures.Counts)) {
			fmt.Fprintf(w, "    %7d  %s\n", res.Figures.Counts[k], k)
		}
	}
	for _, c := range res.Capped {
		fmt.Fprintf(w, "  incomplete evidence: %s\n", s(c))
	}
	f := res.Found
	if f == nil {
		fmt.Fprintf(w, "no violation of %d invariants\n", countHolding(res.Revision))
		return nil
	}
	fmt.Fprintln(w)
	writeViolation(w, f.Violation)
	fmt.Fprintf(w, "  found in trial %d (%s over %s)", f.Trial, plural(len(f.Original.Steps), "step", "steps"), plural(f.Original.Sessions, "session", "sessions"))
	switch {
	case !f.Shrunk:
		fmt.Fprintln(w, "; not shrunk (--no-shrink)")
	case f.Reproduced:
		fmt.Fprintf(w, ", shrunk to %s over %s in %s; the minimal plan reproduces it\n",
			plural(len(f.Minimal.Steps), "step", "steps"), plural(f.Minimal.Sessions, "session", "sessions"), plural(f.ShrinkRuns, "run", "runs"))
	default:
		fmt.Fprintf(w, ", shrunk to %s over %s in %s; the minimal plan broke the rule while shrinking but not on its last run (a race): the chronology shown is of a run that broke it\n",
			plural(len(f.Minimal.Steps), "step", "steps"), plural(f.Minimal.Sessions, "session", "sessions"), plural(f.ShrinkRuns, "run", "runs"))
	}
	return writePlanAndHistory(w, f.Minimal, f.History, f.Violation, f.Violations, files, verbose)
}

// writeViolation writes a violation's headline and requirement.
func writeViolation(w io.Writer, v explore.Violation) {
	s := func(x string) string { return chrono.Sanitize(x, false) }
	fmt.Fprintf(w, "VIOLATION %s: %s (%s)\n", v.Invariant, v.Requirement, v.Level)
	if q := v.Quote(); q != "" {
		fmt.Fprintf(w, "  %q\n", q)
	}
	fmt.Fprintf(w, "  session %s, event #%d: %s\n", v.Session, v.Seq, s(v.Text))
}

// writePlanAndHistory writes a minimal plan, the files written and the
// chronology as a sequence diagram with the violating event marked.
func writePlanAndHistory(w io.Writer, plan explore.Plan, h *explore.History, v explore.Violation, all []explore.Violation, files []string, verbose bool) error {
	fmt.Fprintf(w, "  minimal plan (%s):\n", plural(plan.Sessions, "session", "sessions"))
	for i, st := range plan.Steps {
		fmt.Fprintf(w, "    %3d  s%d  %s\n", i, st.Session+1, st.Op)
	}
	if len(files) > 0 {
		fmt.Fprintf(w, "  replay file: %s\n", files[0])
	}
	if len(files) > 1 {
		fmt.Fprintf(w, "  chronology:  %s (mcpflight show %s --mark %d)\n", files[1], files[1], v.Seq)
	}
	if verbose && len(all) > 1 {
		fmt.Fprintf(w, "  every violation of the minimal run:\n")
		for _, x := range all {
			fmt.Fprintf(w, "    #%d %s %s: %s\n", x.Seq, x.Invariant, x.Requirement, chrono.Sanitize(x.Text, false))
		}
	}
	if h == nil {
		return nil
	}
	events := h.Events
	if !verbose {
		events = window(events, v.Seq, 40)
	}
	fmt.Fprintln(w)
	return report.Sequence(w, events, report.SequenceOptions{Mark: v.Seq})
}

// window keeps the events around seq: those up to it, at most n before
// it, and a few after.
func window(events []chrono.Event, seq uint64, n int) []chrono.Event {
	i := int(seq)
	if i <= 0 || i > len(events) {
		return events
	}
	return events[max(0, i-n):min(len(events), i+5)]
}

// pickRevision settles the revision from --protocol and its other name
// --revision: one revision the explorer implements, 2025-11-25 when
// neither is given. auto and both are refused: a trial's sessions speak
// one revision, and its invariants are that revision's.
func (o *exploreOptions) pickRevision() error {
	given := o.protocol
	switch {
	case o.protocol != "" && o.revision != "" && o.protocol != o.revision:
		return usagef(exploreUsage, "--protocol %s and --revision %s disagree; they are one flag", o.protocol, o.revision)
	case given == "":
		given = o.revision
	}
	if given == "" {
		o.revision = explore.Revision20251125
		return nil
	}
	if !slices.Contains(explore.Revisions(), given) {
		return usagef(exploreUsage, "--protocol: %v", fmt.Errorf("%w %q (implemented: %s; explore speaks one revision, not auto or both)",
			explore.ErrRevision, given, strings.Join(explore.Revisions(), ", ")))
	}
	if o.replay != "" {
		// The file says which revision its plan was found under.
		o.explicit = given
	}
	o.revision = given
	return nil
}

func (e Env) exploreReplay(ctx context.Context, o exploreOptions) (int, error) {
	f, err := os.Open(o.replay)
	if err != nil {
		return 0, err
	}
	rp, err := explore.ReadReplay(f)
	f.Close()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", o.replay, err)
	}
	if o.explicit != "" && o.explicit != rp.Revision {
		return 0, usagef(exploreUsage, "--protocol %s: %s was found under %s, and runs under it", o.explicit, o.replay, rp.Revision)
	}
	target, prof, stop, err := e.exploreTarget(o.target, &rp.Target)
	if err != nil {
		return 0, err
	}
	defer stop()
	if o.noControl {
		rp.NoControl = true
	}
	if o.opTimeout != explore.DefaultOpTimeout {
		rp.OpTimeoutMs = o.opTimeout.Milliseconds()
	}
	res, err := explore.RunReplay(ctx, target, rp, prof)
	if err != nil {
		return 0, err
	}
	text := func(w io.Writer) error {
		fmt.Fprintf(w, "mcpflight explore --replay %s: %s over %s against %s, revision %s\n",
			chrono.Sanitize(o.replay, false), plural(len(rp.Steps), "step", "steps"), plural(rp.Sessions, "session", "sessions"),
			chrono.Sanitize(target.Info().Name, false), rp.Revision)
		switch {
		case res.Reproduced:
			fmt.Fprintf(w, "reproduced: the recorded violation happened again%s\n", runsNote(res.Runs, res.Reproduced))
		case rp.Violation != nil && res.Violation != nil:
			fmt.Fprintf(w, "not reproduced%s: the run broke another rule (recorded: %s %s)\n", runsNote(res.Runs, false), rp.Violation.Invariant, rp.Violation.Requirement)
		case rp.Violation != nil:
			fmt.Fprintf(w, "not reproduced%s: no violation (recorded: %s %s)\n", runsNote(res.Runs, false), rp.Violation.Invariant, rp.Violation.Requirement)
		case res.Violation == nil:
			fmt.Fprintln(w, "no violation")
		}
		if res.Violation == nil {
			return nil
		}
		fmt.Fprintln(w)
		writeViolation(w, *res.Violation)
		return writePlanAndHistory(w, rp.Plan, res.History, *res.Violation, res.Violations, nil, o.verbose)
	}
	if err := e.exploreOutput(o, text, res); err != nil {
		return 0, err
	}
	if res.Violation != nil {
		return ExitNonConformant, nil
	}
	return ExitConformant, nil
}

// runsNote says how many runs a replay took, when it took more than
// one (a target without the control extension: its timing decides).
func runsNote(runs int, reproduced bool) string {
	switch {
	case runs <= 1:
		return ""
	case reproduced:
		return fmt.Sprintf(" (on run %d of %d: without the control extension the target's timing, not the plan, orders a run)", runs, explore.ReplayTries)
	}
	return fmt.Sprintf(" in %d runs (without the control extension the target's timing, not the plan, orders a run)", runs)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// counts renders a kind → count map sorted by kind, each kind named as
// revision names it (explore.Kind.Label).
func counts(m map[explore.Kind]int, revision string) string {
	var parts []string
	for _, k := range explore.Kinds() {
		if n := m[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k.Label(revision), n))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// countHolding is how many invariants hold under revision.
func countHolding(revision string) int {
	n := 0
	for _, inv := range explore.Invariants() {
		if inv.Holds(revision) {
			n++
		}
	}
	return n
}
