//go:build unix

package runner

import (
	"context"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/internal/testchild"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// childEnv selects TestHelperServeStdio's part: "serve" plays the
// reference server over stdin and stdout, "ignore-eof" the same with the
// fault ignore-stdin-eof (it stays after its input ends, until SIGTERM),
// "uncontrolled" the same without the control extension.
const childEnv = "MCPFLIGHT_RUNNER_TEST_CHILD"

// TestHelperServeStdio is not a test: re-executed as a child process by
// TestTeardownOfARealChildOverlapsTheNextCase, it is the reference server
// over stdio, as `mcpflight serve --stdio` is.
func TestHelperServeStdio(t *testing.T) {
	mode := os.Getenv(childEnv)
	if mode == "" {
		t.Skip("helper process for the stdio teardown test")
	}
	// "uncontrolled" hides the control extension, as a user's server
	// has none (sharing_test.go).
	opts := refserver.Options{Faults: refserver.FaultSet{refserver.FaultIgnoreStdinEOF: mode == "ignore-eof"},
		HideControl: mode == "uncontrolled"}
	// No signal handler: SIGTERM ends the process, as it ends a server
	// that does not catch it.
	_ = refserver.New(opts).Serve(context.Background(), os.Stdin, os.Stdout)
	os.Exit(0)
}

// TestTeardownOfARealChildOverlapsTheNextCase is TestJobsTeardownOverlaps
// with real processes: the first case's server is a child
// that ignores the end of its input, so its teardown climbs the ladder to
// SIGTERM, and with Jobs 2 the next case's child is started and served
// while that teardown is under way. The first session's Close waits for
// the next dial before it begins (a checkpoint, not a sleep), so the
// overlap is certain when the scheduler allows it, and never seen when it
// does not: then the wait ends only at the safety net and the test fails.
// Every child is gone at the end: the grade counts no leftover.
func TestTeardownOfARealChildOverlapsTheNextCase(t *testing.T) {
	var overlapped atomic.Bool
	var firstPID atomic.Int64
	gate := newDialGate()
	target := Target{Name: "reference children", Transport: TransportStdio,
		Dial: func(ctx context.Context, log *chrono.Log) (transport.Conn, error) {
			n := gate.dial()
			cfg := transport.StdioConfig{
				Argv: []string{os.Args[0], "-test.run=^TestHelperServeStdio$"},
				Env:  []string{childEnv + "=serve", testchild.RaceEnv()},
				Log:  log,
			}
			if n == 1 {
				cfg.Env = []string{childEnv + "=ignore-eof", testchild.RaceEnv()}
				// This child never exits on its own: any grace ends in
				// SIGTERM, so a short one only keeps the test quick.
				// The others exit at the end of their input, within the
				// default grace.
				cfg.CloseGrace = 10 * time.Millisecond
			}
			s, err := transport.StartStdio(ctx, cfg)
			if err != nil || n != 1 {
				return s, err
			}
			firstPID.Store(int64(s.Pid()))
			return &closeAfterNextDial{Conn: s, log: log, until: gate.next, overlapped: &overlapped}, nil
		}}
	rep := run(t, Config{Target: target, Jobs: 2, CloseTimeout: safetyNet,
		Cases: []probe.Case{pingCase("t/slow-teardown"), pingCase("t/next"), pingCase("t/after")}})

	if !overlapped.Load() {
		t.Error("the next case's child was not started during the first case's teardown")
	}
	first := rep.Results[0]
	if first.Teardown.ExitedAfter != results.StepSIGTERM {
		t.Errorf("the first child's teardown graded %+v, want SIGTERM", first.Teardown)
	}
	if !hasNote(first.Events, "next case dialled during the teardown") {
		t.Errorf("the first case's chronology lacks the overlap:\n%v", first.Events)
	}
	if g := rep.Teardown; g.Verdict != verdict.Warn || g.Worst != results.StepSIGTERM || g.Steps[results.StepSIGTERM] != 1 || g.Sessions != 3 || g.Leftovers != 0 {
		t.Errorf("teardown grade %+v, want a warn for one SIGTERM of 3 sessions and no leftover", g)
	}
	if pid := int(firstPID.Load()); pid <= 0 || syscall.Kill(pid, 0) == nil {
		t.Errorf("the first child (pid %d) is still there after the run", pid)
	}
	if diff := cmp.Diff([]string{"pass: ping answered", "pass: ping answered", "pass: ping answered"}, verdicts(rep)); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
}

// closeAfterNextDial is a connection whose teardown begins only once
// another case has dialled (or the close context ends), and records in
// the case's chronology that it did; the teardown itself is the
// connection's own (for a child process, the shutdown ladder).
type closeAfterNextDial struct {
	transport.Conn
	log        *chrono.Log
	until      <-chan struct{}
	overlapped *atomic.Bool
}

func (c *closeAfterNextDial) Close(ctx context.Context) transport.Teardown {
	select {
	case <-c.until:
		c.overlapped.Store(true)
		c.log.Harness(chrono.KindNote, "test", "next case dialled during the teardown")
	case <-ctx.Done():
	}
	return c.Conn.Close(ctx)
}
