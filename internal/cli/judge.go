package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/judge"
	"github.com/mcpflight/mcpflight/monitor"
	"github.com/mcpflight/mcpflight/report"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/spec"
)

const judgeUsage = `Usage: mcpflight judge [flags] FILE.jsonl|DIR

Judges a recorded conversation with the rules mcpflight watch applies
live: a capture watch wrote (DIR/chronology.jsonl, or the file itself),
or the chronologies check wrote with --jsonl-dir (every FILE.jsonl of DIR,
each a session of its own). Every rule reports, for the host (client) and
the server, a verdict with the requirement the recording proves broken,
in the words of the revision the session spoke; a rule the recording gave
nothing to judge is a skip that says so. Requests still open when their
session ended are listed, not judged.

Flags:
  --side SIDE          judge the server, the client or both (default both;
                       check's own chronologies: server, since their client
                       is mcpflight provoking the server on purpose)
  --protocol REV       the revision to judge a session under when it shows
                       none (no initialize, no 2026-07-28 request): 2025-11-25
                       (default) or 2026-07-28
  --window D           the crossing window: a response or progress for a
                       cancelled request within it may have been written
                       before the cancel was read (default 100ms)
  --grace D            how long a task may work on after its host stopped
                       waiting or had it cancelled before an alert (default 5s)
  --strict             count warns (broken SHOULDs) as fails
  --json FILE          also write the report as JSON to FILE ("-": stdout,
                       instead of the text report)
  --junit FILE         also write the report as JUnit XML to FILE
  --html FILE          also write the report as one self-contained HTML page
  -v                   print each finding's evidence
  -q                   print only the summary line

Exit codes: as for check (0 conformant, 1 a fail, 2 an error or a
recording that cannot be read, 3 fewer than half of the rules that apply
had anything to judge).
`

// judgeFlags are the flags judge and watch share: which side, the rules'
// windows and the fallback revision.
type judgeFlags struct {
	side     string
	protocol string
	window   time.Duration
	grace    time.Duration
}

func (f *judgeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.side, "side", "both", "")
	fs.StringVar(&f.protocol, "protocol", spec.V20251125, "")
	fs.DurationVar(&f.window, "window", monitor.DefaultWindow, "")
	fs.DurationVar(&f.grace, "grace", monitor.DefaultGrace, "")
}

// monitorOptions checks the flags and turns them into the rules' options.
func (f judgeFlags) monitorOptions(usage string) (monitor.Options, error) {
	var sides []monitor.Side
	switch f.side {
	case "both":
	case "server":
		sides = []monitor.Side{monitor.Server}
	case "client", "host":
		sides = []monitor.Side{monitor.Client}
	default:
		return monitor.Options{}, usagef(usage, "--side must be server, client or both")
	}
	if f.protocol != spec.V20251125 && f.protocol != spec.V20260728 {
		return monitor.Options{}, usagef(usage, "--protocol must be %s or %s", spec.V20251125, spec.V20260728)
	}
	if f.window <= 0 || f.grace <= 0 {
		return monitor.Options{}, usagef(usage, "--window and --grace must be positive")
	}
	return monitor.Options{Sides: sides, Fallback: f.protocol, Window: f.window, Grace: f.grace, Schema: true}, nil
}

func (e Env) judgeCmd(args []string) (int, error) {
	var o checkOptions
	var jf judgeFlags
	fs := flag.NewFlagSet("judge", flag.ContinueOnError)
	jf.register(fs)
	fs.BoolVar(&o.strict, "strict", false, "")
	fs.StringVar(&o.jsonFile, "json", "", "")
	fs.StringVar(&o.junitFile, "junit", "", "")
	fs.StringVar(&o.htmlFile, "html", "", "")
	fs.BoolVar(&o.verbose, "v", false, "")
	fs.BoolVar(&o.quiet, "q", false, "")
	pos, done, err := e.parseWith(fs, judgeUsage, args, true)
	if done || err != nil {
		return 0, err
	}
	if len(pos) != 1 {
		return 0, usagef(judgeUsage, "judge needs one capture: a FILE.jsonl or a DIR")
	}
	if o.quiet && o.verbose {
		return 0, usagef(judgeUsage, "-q and -v contradict each other; pass one")
	}
	mo, err := jf.monitorOptions(judgeUsage)
	if err != nil {
		return 0, err
	}
	files, err := captureFiles(pos[0])
	if err != nil {
		return 0, err
	}
	transport, err := captureTransport(files[0])
	if err != nil {
		return 0, err
	}
	j := judge.New(judge.Options{Target: pos[0], Transport: transport, Monitor: mo, Strict: o.strict})
	for _, f := range files {
		if err := e.judgeFile(j, f, len(files) > 1); err != nil {
			return 0, err
		}
	}
	rep := j.Report()
	return e.writeJudged(rep, o)
}

// judgeFile feeds one recording to j, as a session of its own when it is
// one of several (check's chronologies: one per case).
func (e Env) judgeFile(j *judge.Judge, path string, own bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sink := j.Event
	if own {
		// One chronology, one session: its events go to a session keyed
		// by the file, whatever their channels say.
		key := filepath.Base(path)
		sink = func(ev chrono.Event) { j.EventIn(key, ev) }
		defer j.EndSession(key)
	}
	if err := chrono.EachJSONL(f, func(ev chrono.Event) error { sink(ev); return nil }); err != nil {
		return fmt.Errorf("%s: %w", chrono.Sanitize(path, false), err)
	}
	return nil
}

// captureFiles are the recordings at path: the file itself, or in a
// directory its watch capture (chronology.jsonl) when it has one, else
// every .jsonl file, in name order.
func captureFiles(path string) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []string{path}, nil
	}
	if _, err := os.Stat(filepath.Join(path, captureName)); err == nil {
		return []string{filepath.Join(path, captureName)}, nil
	}
	files, err := filepath.Glob(filepath.Join(path, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	files = slices.DeleteFunc(files, func(f string) bool { return filepath.Base(f) == "served-server.jsonl" })
	if len(files) == 0 {
		return nil, fmt.Errorf("%s holds no chronology (%s, or FILE.jsonl)", chrono.Sanitize(path, false), captureName)
	}
	slices.Sort(files)
	return files, nil
}

// captureName is the chronology a watch session writes in its folder.
const captureName = "chronology.jsonl"

// captureTransport reads the first frame of a recording for its
// transport: stdio's channels are stdin and stdout, Streamable HTTP's its
// exchanges.
func captureTransport(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	transport := ""
	errFound := fmt.Errorf("found")
	err = chrono.EachJSONL(f, func(ev chrono.Event) error {
		if ev.Kind != chrono.KindFrame {
			return nil
		}
		transport = "http"
		if ev.Channel == "stdin" || ev.Channel == "stdout" {
			transport = "stdio"
		}
		return errFound
	})
	if err != nil && err != errFound {
		return "", fmt.Errorf("%s: %w", chrono.Sanitize(path, false), err)
	}
	if transport == "" {
		return "stdio", nil
	}
	return transport, nil
}

// writeJudged writes a judged conversation's report: the files asked
// for, and on stdout the text report (or the summary line with -q, or
// the JSON with --json -). The exit code is the report's.
func (e Env) writeJudged(rep *results.Report, o checkOptions) (int, error) {
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
			return 0, fmt.Errorf("%s: %w", out.flag, err)
		}
	}
	switch {
	case o.jsonFile == "-":
		return rep.ExitCode(), report.JSON(e.Stdout, rep)
	case o.jsonFile != "":
		if err := e.writeFile(o.jsonFile, func(w io.Writer) error { return report.JSON(w, rep) }); err != nil {
			return 0, fmt.Errorf("--json: %w", err)
		}
	}
	if o.quiet {
		for _, n := range rep.Notes {
			if strings.HasPrefix(n, "the capture is incomplete") {
				fmt.Fprintln(e.Stdout, "note: "+chrono.Sanitize(n, false))
			}
		}
		fmt.Fprintln(e.Stdout, report.Summary(rep))
		return rep.ExitCode(), nil
	}
	return rep.ExitCode(), report.Text(e.Stdout, rep, report.TextOptions{Verbose: o.verbose, Color: useColor(e.Stdout, e.Getenv)})
}
