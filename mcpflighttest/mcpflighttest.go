// Package mcpflighttest runs mcpflight's conformance catalogue from a Go
// test, so that an MCP server's author checks it with "go test":
//
//	func TestConformance(t *testing.T) {
//		mcpflighttest.Run(t, mcpflighttest.Command("./myserver", "--stdio"),
//			mcpflighttest.ProfileFile("testdata/myserver.yaml"))
//	}
//
// Every case of the catalogue becomes a subtest named after the revision
// and the case ID (TestConformance/2025-11-25/cancel/id-zero), so that
// "go test -run 'TestConformance/.*/cancel/'" picks cases as --case does.
// A case that fails (a broken MUST, or a broken SHOULD under Strict) fails
// its subtest, and so does an error (the harness or the target broke, so
// nothing was shown); a skip skips it with the reason; a warn and an info
// are logged. Whatever did not pass is logged as the text report prints it
// (requirement, expected alternatives, the actual event) followed by its
// chronology as a sequence diagram, the first wrong event marked. A last
// subtest, teardown, grades how the sessions ended.
//
// The server under test is a Target: a command started once per case
// (Command), a Streamable HTTP endpoint (URL), an http.Handler served by
// the test process (Handler), or a function serving one session on a pair
// of pipes in the test process (Pipes), which is how a server built on the
// official Go SDK runs without a subprocess:
//
//	mcpflighttest.Run(t, mcpflighttest.Pipes(func(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
//		return newServer().Run(ctx, &mcp.IOTransport{Reader: in, Writer: out})
//	}), mcpflighttest.Profile(myProfile))
//
// The cases run together, after the subtests have been registered: each
// subtest calls t.Parallel and waits for the run, which the runner
// executes as one batch (with Jobs concurrent cases), so that a -run
// filter decides which cases run at all. Run returns when every subtest
// has reported.
package mcpflighttest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/cases"
	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/report"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/runner"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// Target is the server under test, as Run reaches it.
type Target struct {
	// open returns the runner's target for one Run and a function that
	// stops whatever open started.
	open func(tb testing.TB, s *settings) (runner.Target, func(), error)
}

// Command is a stdio server started as a child process for every case:
// argv[0] with the arguments argv[1:], run without a shell, in the test's
// working directory. mcpflight's shutdown ladder ends each one and grades
// how it went (the teardown subtest).
func Command(argv ...string) Target {
	argv = append([]string(nil), argv...)
	return Target{open: func(_ testing.TB, s *settings) (runner.Target, func(), error) {
		if len(argv) == 0 {
			return runner.Target{}, nil, errors.New("Command: empty command line")
		}
		return runner.StdioTarget(transport.QuoteArgs(argv), transport.StdioConfig{Argv: argv, MaxFrame: s.maxFrame}), func() {}, nil
	}}
}

// URL is a Streamable HTTP server's MCP endpoint, already running. Every
// case opens a session of its own.
func URL(endpoint string) Target {
	return Target{open: func(_ testing.TB, s *settings) (runner.Target, func(), error) {
		if endpoint == "" {
			return runner.Target{}, nil, errors.New("URL: empty endpoint")
		}
		return httpTarget(endpoint, endpoint, s), func() {}, nil
	}}
}

// Handler serves h as a Streamable HTTP endpoint on a loopback port of
// the test process (httptest.NewServer) for the whole Run, and checks it
// at the server's root URL; h sees every path.
func Handler(h http.Handler) Target {
	return Target{open: func(_ testing.TB, s *settings) (runner.Target, func(), error) {
		if h == nil {
			return runner.Target{}, nil, errors.New("Handler: nil http.Handler")
		}
		srv := httptest.NewServer(h)
		return httpTarget(srv.URL, "http.Handler served at "+srv.URL, s), srv.Close, nil
	}}
}

// Pipes runs serve in the test process for every case, on a pair of pipes
// that stand for a stdio server's stdin and stdout: the cases that need a
// stdio process run too, except that closing the input stands for the
// whole shutdown ladder (a serve that ignores it has its context
// cancelled, graded as SIGTERM).
func Pipes(serve transport.ServeFunc) Target {
	return Target{open: func(_ testing.TB, s *settings) (runner.Target, func(), error) {
		if serve == nil {
			return runner.Target{}, nil, errors.New("Pipes: nil serve function")
		}
		return runner.InProcessTarget("in-process server on pipes", serve, transport.StreamConfig{MaxFrame: s.maxFrame}), func() {}, nil
	}}
}

func httpTarget(endpoint, name string, s *settings) runner.Target {
	// As mcpflight check does: a response that keeps its headers back, or
	// a stream that goes silent, is named as stalled before the case's
	// own deadline ends it with a vaguer error.
	bound := s.caseTimeout * 3 / 4
	return runner.HTTPTarget(name, transport.HTTPConfig{URL: endpoint,
		MaxEvent: int64(s.maxFrame), StallTimeout: bound, HeaderTimeout: bound})
}

// settings are what the options set.
type settings struct {
	profile     *profile.Profile
	revision    string
	globs       []string
	jobs        int
	strict      bool
	caseTimeout time.Duration
	grace       time.Duration
	maxFrame    int
	known       map[string]string
	err         error
}

// An Option changes how Run runs the catalogue.
type Option func(*settings)

// Profile says which of the server's tools serve the catalogue's needs (a
// slow tool with progress, a tool with a side effect, a tool that logs, a
// task tool). Without a profile the cases that need a tool are skipped.
func Profile(p *profile.Profile) Option {
	return func(s *settings) {
		if err := p.Validate(); err != nil {
			s.err = errors.Join(s.err, fmt.Errorf("Profile: %w", err))
			return
		}
		s.profile = p
	}
}

// ProfileFile is Profile with a built-in profile's name ("reference",
// "server-everything") or a JSON or YAML profile file, as mcpflight
// check's --profile.
func ProfileFile(nameOrPath string) Option {
	return func(s *settings) {
		p, err := profile.Resolve(nameOrPath)
		if err != nil {
			s.err = errors.Join(s.err, fmt.Errorf("ProfileFile: %w", err))
			return
		}
		s.profile = p
	}
}

// Revision is the MCP revision to check, "2025-11-25" by default.
func Revision(v string) Option { return func(s *settings) { s.revision = v } }

// Cases runs only the cases whose ID matches one of the globs
// (path.Match syntax, as --case: "cancel/*"). A glob that matches no case
// fails the test.
func Cases(globs ...string) Option {
	return func(s *settings) { s.globs = append(s.globs, globs...) }
}

// Jobs runs up to n cases at once (runner.Config.Jobs); by default the
// runner's choice for the target's transport (runner.DefaultJobs), and 1
// runs them one after the other.
func Jobs(n int) Option {
	return func(s *settings) {
		if n < 1 {
			s.err = errors.Join(s.err, fmt.Errorf("Jobs: %d is not a positive number of cases", n))
			return
		}
		s.jobs = n
	}
}

// Known lists a case the server is known to fail, with the reason (the
// finding, or the issue that tracks it): its fail, warn or error is then
// a skip that quotes the reason and the verdict, and the run goes on
// green; a known case that passes fails its subtest, so that a fixed
// server gets its entry removed (the baseline's "stale" rule).
func Known(caseID, reason string) Option {
	return func(s *settings) {
		if s.known == nil {
			s.known = map[string]string{}
		}
		s.known[caseID] = reason
	}
}

// Strict counts a broken SHOULD (warn) as a fail, as --strict does.
func Strict() Option { return func(s *settings) { s.strict = true } }

// CaseTimeout bounds each case, handshake included (15 s by default).
func CaseTimeout(d time.Duration) Option { return func(s *settings) { s.caseTimeout = d } }

// Grace is the observation window for things that must not happen, when
// the target offers no checkpoints; the profile's by default.
func Grace(d time.Duration) Option { return func(s *settings) { s.grace = d } }

// deadlineMargin is how long before the test binary's -timeout the run is
// stopped, so that the cases not yet run are reported as errors instead
// of the binary panicking.
const deadlineMargin = 10 * time.Second

// Run runs the catalogue against target, one subtest per case, under a
// subtest named after the revision. It returns when every subtest has
// reported. A configuration that cannot run (a bad option, a glob that
// matches nothing, a target that cannot be opened) fails t at once.
func Run(t *testing.T, target Target, opts ...Option) {
	t.Helper()
	s := settings{revision: spec.V20251125, caseTimeout: runner.DefaultCaseTimeout, maxFrame: transport.DefaultMaxFrame}
	for _, o := range opts {
		o(&s)
	}
	if s.err != nil {
		t.Fatalf("mcpflighttest: %v", s.err)
	}
	if s.revision != spec.V20251125 && s.revision != spec.V20260728 {
		t.Fatalf("mcpflighttest: %v %q (known: %s, %s)", runner.ErrUnknownVersion, s.revision, spec.V20251125, spec.V20260728)
	}
	if s.caseTimeout <= 0 || s.grace < 0 {
		t.Fatalf("mcpflighttest: CaseTimeout must be positive and Grace not negative")
	}
	if target.open == nil {
		t.Fatalf("mcpflighttest: the zero Target; use Command, URL, Handler or Pipes")
	}
	selected, err := runner.Select(cases.All(), s.globs)
	if err != nil {
		t.Fatalf("mcpflighttest: %v", err)
	}
	t.Run(s.revision, func(t *testing.T) {
		rt, stop, err := target.open(t, &s)
		if err != nil {
			t.Fatalf("mcpflighttest: %v", err)
		}
		t.Cleanup(stop)
		b := &batch{done: make(chan struct{}), known: s.known}
		for _, c := range selected {
			t.Run(c.ID, func(t *testing.T) {
				// Before Parallel, t.Run is still waiting: this is how the
				// batch learns which cases the -run filter kept.
				b.wanted = append(b.wanted, c)
				t.Parallel()
				b.wait(t)
				b.reportCase(t, c.ID)
			})
		}
		t.Run("teardown", func(t *testing.T) {
			t.Parallel()
			b.wait(t)
			b.reportTeardown(t)
		})
		cfg := runner.Config{
			Target:      rt,
			Profile:     s.profile,
			Version:     s.revision,
			CaseTimeout: s.caseTimeout,
			Grace:       s.grace,
			Strict:      s.strict,
			Jobs:        s.jobs,
		}
		if cfg.Jobs == 0 {
			cfg.Jobs = runner.DefaultJobs(rt.Transport)
		}
		if d, ok := t.Deadline(); ok {
			cfg.RunTimeout = max(time.Until(d)-deadlineMargin, time.Second)
		}
		// The subtests resume, and wait for the batch, once this function
		// returns; the context lasts until they have all reported.
		go b.run(t.Context(), cfg)
	})
}

// batch is one runner.Run shared by the subtests of a Run.
type batch struct {
	// wanted is written while the subtests are registered, before run
	// starts; read-only afterwards.
	wanted []probe.Case
	known  map[string]string // Known
	done   chan struct{}
	// Set before done is closed.
	rep *results.Report
	err error
}

func (b *batch) run(ctx context.Context, cfg runner.Config) {
	defer close(b.done)
	if len(b.wanted) == 0 {
		b.rep = &results.Report{}
		return
	}
	cfg.Cases = b.wanted
	b.rep, b.err = runner.Run(ctx, cfg)
}

// wait blocks until the batch has run; a batch that could not run fails
// the subtest.
func (b *batch) wait(t *testing.T) {
	t.Helper()
	<-b.done
	if b.rep == nil {
		t.Fatalf("mcpflighttest: the run did not start: %v", b.err)
	}
}

func (b *batch) reportCase(t *testing.T, id string) {
	var res *results.Result
	for i := range b.rep.Results {
		if b.rep.Results[i].ID == id {
			res = &b.rep.Results[i]
			break
		}
	}
	if res == nil {
		t.Fatalf("mcpflighttest: the run has no result for %s (%v)", id, b.err)
	}
	o := res.Outcome
	if reason, known := b.known[id]; known {
		switch o.Verdict {
		case verdict.Fail, verdict.Warn, verdict.Error:
			t.Skipf("known (%s): %s", reason, describe(*res))
		case verdict.Pass, verdict.Info:
			t.Errorf("listed as known (%s), yet it %s: remove it from Known: %s", reason, o.Verdict, chrono.Sanitize(o.Summary, false))
			return
		}
	}
	switch o.Verdict {
	case verdict.Pass:
		if o.Summary != "" {
			t.Log(chrono.Sanitize(o.Summary, false))
		}
	case verdict.Skip, verdict.Blocked:
		// A blocked case judged nothing: the case it names carries the
		// finding, and fails there.
		t.Skip(chrono.Sanitize(o.Summary, false))
	case verdict.Info, verdict.Warn:
		t.Log(describe(*res))
	case verdict.Fail:
		t.Error(describe(*res) + "\nin the run " + report.Summary(b.rep))
	default: // verdict.Error
		t.Error("the harness or the target broke, so the case shows nothing either way\n" + describe(*res) + "\nin the run " + report.Summary(b.rep))
	}
}

func (b *batch) reportTeardown(t *testing.T) {
	if len(b.rep.Results) == 0 {
		t.Skip("no case ran")
	}
	g := b.rep.Teardown
	var sb strings.Builder
	_ = report.Teardown(&sb, g)
	text := strings.TrimRight(sb.String(), "\n")
	switch g.Verdict {
	case verdict.Skip:
		t.Skip(chrono.Sanitize(g.Summary, false))
	case verdict.Fail, verdict.Error:
		t.Error(text)
	default:
		t.Log(text)
	}
	if b.rep.Interrupted && b.err != nil {
		t.Error(chrono.Sanitize(b.err.Error(), false))
	}
	t.Log(report.Summary(b.rep))
}

// describe is a result as the text report prints it, then its chronology
// as a sequence diagram with the first wrong event marked.
func describe(res results.Result) string {
	var sb strings.Builder
	_ = report.Result(&sb, res)
	if len(res.Events) > 0 {
		sb.WriteString("chronology:\n")
		_ = report.Sequence(&sb, res.Events, report.SequenceOptions{Mark: res.Outcome.ActualSeq})
	}
	return strings.TrimRight(sb.String(), "\n")
}
