package cases_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/cases"
	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/runner"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// heldResults holds back the server's tools/call results (lines with
// "content") until release is closed, passing every other line at once.
type heldResults struct {
	io.WriteCloser
	release <-chan struct{}
}

func (h *heldResults) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(`"content"`)) {
		<-h.release
	}
	return h.WriteCloser.Write(p)
}

// TestLateResponseAfterNoiseIsNotACancel: a bogus cancel's case (CAN-14)
// calls the running request cancelled only when its response does not
// come within SlowBudget, not when it misses the pace's shorter budget,
// as a loaded machine makes it do. The reference server without the
// control extension holds its tools/call result until the case has
// written that the pace's budget ran out: the case then still passes.
func TestLateResponseAfterNoiseIsNotACancel(t *testing.T) {
	prof, err := profile.Builtin(profile.Reference)
	if err != nil {
		t.Fatal(err)
	}
	sel, err := runner.Select(cases.All(), []string{"cancel/unknown-id-ignored"})
	if err != nil {
		t.Fatal(err)
	}
	srv := refserver.New(refserver.Options{HideControl: true})
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free)
	serve := func(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
		return srv.ServePipes(ctx, in, &heldResults{WriteCloser: out, release: release})
	}
	target := runner.InProcessTarget("reference, results held", serve, transport.StreamConfig{})
	dial := target.Dial
	target.Dial = func(ctx context.Context, log *chrono.Log) (transport.Conn, error) {
		go func() {
			// Released once the case says the pace's budget ran out, or
			// once its session is being closed (a case that concluded
			// without waiting more: the test then fails on its verdict).
			if _, err := log.WaitFor(ctx, 0, func(e chrono.Event) bool {
				return strings.Contains(e.Text, "within the pace's budget; waiting up to") ||
					e.Kind == chrono.KindState && strings.Contains(e.Text+e.To, "closing")
			}); err == nil {
				free()
			}
		}()
		return dial(ctx, log)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // safety net
	defer cancel()
	rep, err := runner.Run(ctx, runner.Config{Target: target, Profile: prof, Cases: sel, CloseTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	if r.Outcome.Verdict != verdict.Pass {
		t.Fatalf("%s: %s %s: a response later than the pace's budget is the request completing", r.ID, r.Outcome.Verdict, r.Outcome.Summary)
	}
}
