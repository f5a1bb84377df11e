package mcpflighttest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpflight/mcpflight/cases"

	"github.com/mcpflight/mcpflight/mcpflighttest"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/runner"
)

// TestFaultyTarget is the test the tests below run in a child test
// binary, against the reference server with the faults and options that
// MCPFLIGHTTEST_FAULTY names; run directly, it is skipped.
func TestFaultyTarget(t *testing.T) {
	spec := os.Getenv("MCPFLIGHTTEST_FAULTY")
	if spec == "" {
		t.Skip("run by TestRunReports in a child process")
	}
	faults := refserver.FaultSet{}
	opts := []mcpflighttest.Option{mcpflighttest.ProfileFile("reference")}
	for _, word := range strings.Fields(spec) {
		switch {
		case word == "strict":
			opts = append(opts, mcpflighttest.Strict())
		case word == "noprofile":
			opts = opts[1:]
		case strings.HasPrefix(word, "case="):
			opts = append(opts, mcpflighttest.Cases(strings.TrimPrefix(word, "case=")))
		case strings.HasPrefix(word, "rev="):
			opts = append(opts, mcpflighttest.Revision(strings.TrimPrefix(word, "rev=")))
		case strings.HasPrefix(word, "jobs="):
			n, err := strconv.Atoi(strings.TrimPrefix(word, "jobs="))
			if err != nil {
				t.Fatal(err)
			}
			opts = append(opts, mcpflighttest.Jobs(n))
		default:
			f, err := refserver.ParseFault(word)
			if err != nil {
				t.Fatal(err)
			}
			faults[f] = true
		}
	}
	srv := refserver.New(refserver.Options{Faults: faults})
	// The most sessions served at once, which Jobs bounds.
	var live, most atomic.Int32
	mcpflighttest.Run(t, mcpflighttest.Pipes(func(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
		n := live.Add(1)
		defer live.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		return srv.Serve(ctx, in, out)
	}), opts...)
	t.Logf("most sessions at once: %d", most.Load())
}

// TestRunReports runs TestFaultyTarget in a child test binary and checks
// what go test says: which subtests failed, passed or were skipped, and
// that a failure's log is the readable report (the requirement, its
// sentence, the expected alternatives and the chronology with the first
// wrong event marked).
func TestRunReports(t *testing.T) {
	pings := 0
	for _, c := range cases.All() {
		if strings.HasPrefix(c.ID, "ping/") {
			pings++
		}
	}
	ran := fmt.Sprintf(`in the run mcpflight: %d cases? —`, pings)
	tests := []struct {
		name    string
		spec    string
		run     string // the child's -test.run
		failing bool
		want    []string // regular expressions the output must match
		notWant []string
	}{
		{
			name: "a MUST broken fails its case",
			spec: "ping-broken case=ping/*", run: "^TestFaultyTarget$", failing: true,
			want: []string{
				`--- FAIL: TestFaultyTarget/2025-11-25/ping/`,
				`Requirement: PNG-1 MUST`,
				`Expected:`,
				`chronology:`,
				`seq +offset +checker`,
				`✗ first wrong event`,
				`--- PASS: TestFaultyTarget/2025-11-25/teardown`,
			},
			notWant: []string{`in in result`},
		},
		{
			name: "a SHOULD broken is logged as a warn and passes",
			spec: "respond-after-cancel case=cancel/mid-work-no-response", run: "^TestFaultyTarget$",
			want:    []string{`--- PASS: TestFaultyTarget/2025-11-25/cancel/mid-work-no-response`, `WARN +cancel/mid-work-no-response`, `Requirement: CAN-8 SHOULD`},
			notWant: []string{`--- FAIL`},
		},
		{
			name: "under Strict a SHOULD broken fails",
			spec: "respond-after-cancel strict case=cancel/mid-work-no-response", run: "^TestFaultyTarget$", failing: true,
			want: []string{`--- FAIL: TestFaultyTarget/2025-11-25/cancel/mid-work-no-response`, `warn under --strict`, `Requirement: CAN-8 SHOULD`},
		},
		{
			name: "a case that cannot run is skipped with its reason",
			spec: "noprofile case=cancel/mid-work-no-response", run: "^TestFaultyTarget$",
			want: []string{`--- SKIP: TestFaultyTarget/2025-11-25/cancel/mid-work-no-response`, `profile names no slow tool`},
		},
		{
			name: "under Revision 2026-07-28 the subtests are that revision's and a fault of it fails its case",
			spec: "ping-on-2026 rev=2026-07-28 case=rpc/*", run: "^TestFaultyTarget$", failing: true,
			want:    []string{`--- FAIL: TestFaultyTarget/2026-07-28/rpc/removed-methods `, `Requirement: `, `--- PASS: TestFaultyTarget/2026-07-28/teardown`},
			notWant: []string{`TestFaultyTarget/2025-11-25/`, `--- FAIL: TestFaultyTarget/2026-07-28/rpc/(?:[^r]|r[^e])`},
		},
		{
			name: "the same fault is no finding under 2025-11-25, where ping is the liveness request",
			spec: "ping-on-2026 case=rpc/*", run: "^TestFaultyTarget$",
			want:    []string{`--- SKIP: TestFaultyTarget/2025-11-25/rpc/removed-methods `, `--- PASS: TestFaultyTarget/2025-11-25/teardown`},
			notWant: []string{`--- FAIL`, `TestFaultyTarget/2026-07-28/`},
		},
		{
			name: "Jobs 1 serves one session at a time",
			spec: "jobs=1 case=cancel/*", run: "^TestFaultyTarget$",
			want:    []string{`--- PASS: TestFaultyTarget/2025-11-25/cancel/mid-work-no-response `, `most sessions at once: 1\n`},
			notWant: []string{`--- FAIL`},
		},
		{
			// How many overlap is the scheduler's business; the bound is
			// runner.DefaultJobsInProcess cases running, and as many
			// finished cases still closing their sessions beside them (a
			// teardown goes on beside the next cases, at most Jobs at
			// once): 5 was seen under load.
			name: "by default the cases may run side by side, with the same verdicts",
			spec: "case=cancel/*", run: "^TestFaultyTarget$",
			want:    []string{`--- PASS: TestFaultyTarget/2025-11-25/cancel/mid-work-no-response `, fmt.Sprintf(`most sessions at once: [1-%d]\n`, 2*runner.DefaultJobsInProcess)},
			notWant: []string{`--- FAIL`},
		},
		{
			name: "Jobs 0 is refused",
			spec: "jobs=0 case=cancel/*", run: "^TestFaultyTarget$", failing: true,
			want: []string{`Jobs: 0 is not a positive number of cases`},
		},
		{
			name: "the -run filter decides which cases run",
			spec: "ping-broken", run: "^TestFaultyTarget$/^2025-11-25$/^ping$/", failing: true,
			want:    []string{`--- FAIL: TestFaultyTarget/2025-11-25/ping/`, ran},
			notWant: []string{`TestFaultyTarget/2025-11-25/cancel/`, `TestFaultyTarget/2025-11-25/teardown`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run", tt.run, "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), "MCPFLIGHTTEST_FAULTY="+tt.spec)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			switch {
			case tt.failing && !errors.As(err, &exit):
				t.Errorf("the child test passed (%v); want it to fail", err)
			case !tt.failing && err != nil:
				t.Errorf("the child test failed: %v", err)
			}
			for _, w := range tt.want {
				if !regexp.MustCompile(w).Match(out) {
					t.Errorf("output lacks %q", w)
				}
			}
			for _, w := range tt.notWant {
				if regexp.MustCompile(w).Match(out) {
					t.Errorf("output has %q", w)
				}
			}
			if t.Failed() {
				t.Logf("child output:\n%s", out)
			}
		})
	}
}
