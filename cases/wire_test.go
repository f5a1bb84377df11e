package cases_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpflight/mcpflight/cases"
	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/runner"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// The wire-only evidence (what a case decides without the control
// extension), proved against the reference
// server with the control extension hidden (refserver.Options.HideControl):
// its slow tool and task worker then run on their own clock (tickMs), as
// a third-party server does, and the cases must decide from the wire.

// wireProfile is the reference profile for a server that hides the
// control extension: ungated, paced tools, and no observer.
func wireProfile(t *testing.T) *profile.Profile {
	t.Helper()
	p, err := profile.Builtin(profile.Reference)
	if err != nil {
		t.Fatal(err)
	}
	p.Slow.Arguments = map[string]any{"key": "w", "gated": false, "steps": 3, "tickMs": 150}
	p.Task.Arguments = map[string]any{"key": "t", "gated": false, "ticks": 3, "tickMs": 150}
	// Without the extension the cases cannot ask the log tool for its
	// messages: the profile names one at each of four levels, as a user's
	// log tool would log.
	var msgs []any
	for _, level := range []string{"debug", "info", "warning", "error"} {
		msgs = append(msgs, map[string]any{"level": level, "logger": "log", "data": "a " + level + " message"})
	}
	p.Log.Arguments = map[string]any{"messages": msgs}
	p.Observer = nil
	p.GraceMillis = 1000
	return p
}

// hiddenControlTarget serves the reference server without the control
// extension, over HTTP (httptest) or in process.
func hiddenControlTarget(faults refserver.FaultSet, overHTTP bool) target {
	return func() (runner.Target, func()) {
		srv := refserver.New(refserver.Options{Faults: faults, HideControl: true})
		if !overHTTP {
			return runner.InProcessTarget("reference (control hidden)", srv.ServePipes, transport.StreamConfig{}), func() {}
		}
		h := srv.HTTPHandler(refserver.HTTPOptions{})
		ts := httptest.NewServer(h)
		client := &http.Client{Transport: &http.Transport{}}
		return runner.HTTPTarget(ts.URL, transport.HTTPConfig{URL: ts.URL, StallTimeout: 20 * time.Second, Client: client}), func() {
			h.Close()
			ts.Close()
			client.CloseIdleConnections()
		}
	}
}

// wireCases are the cases that have a wire-only path.
var wireCases = []string{
	"http/disconnect-is-not-cancel", "http/resume-while-running", "http/resume-after-completion",
	"http/replay-only-disconnected-stream", "http/cancel-202-then-no-response",
	"tasks/result-blocks-while-working", "tasks/not-cancelled-unprompted",
	"tasks/notification-does-not-cancel", "tasks/result-equivalence",
	"tasks/result-error-equivalence", "tasks/iserror-fails-task",
}

// TestWireOnlyEvidence runs the cases that have a wire-only path against
// the reference server with its control extension hidden, in process and
// over HTTP, conforming and under each fault they must catch from the
// wire alone. Under -short only the in-process half runs, in a synctest
// bubble.
func TestWireOnlyEvidence(t *testing.T) {
	t.Parallel()
	var sel []probe.Case
	for _, c := range cases.All() {
		if slices.Contains(wireCases, c.ID) {
			sel = append(sel, c)
		}
	}
	if len(sel) != len(wireCases) {
		t.Fatalf("%d of %d wire cases found", len(sel), len(wireCases))
	}
	rows := []wireRow{
		{"", nil, nil},
		{refserver.FaultCancelOnDisconnect, []string{"http/disconnect-is-not-cancel"}, nil},
		{refserver.FaultReplayCrossesStreams, []string{"http/replay-only-disconnected-stream"}, nil},
		{refserver.FaultLoseEventsOnResume, []string{"http/resume-after-completion"}, nil},
		{refserver.FaultResponseAfterCancelOnStream, []string{"http/cancel-202-then-no-response"}, nil},
		{refserver.FaultResultAnswersEarly, []string{"tasks/result-blocks-while-working"}, nil},
		{refserver.FaultTaskCancelledUnprompted, []string{"tasks/not-cancelled-unprompted"},
			[]string{"tasks/notification-does-not-cancel", "tasks/result-equivalence"}},
	}
	for _, row := range rows {
		name := string(row.fault)
		if name == "" {
			name = "conforming"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if testing.Short() {
				// In process only, on a synctest bubble's clock (the
				// paced tools run in real time over HTTP, which a
				// bubble cannot hold): the full suite runs both.
				synctest.Test(t, func(t *testing.T) { row.check(t, sel, false, make(chan struct{}, 8)) })
				return
			}
			for _, overHTTP := range []bool{false, true} {
				row.check(t, sel, overHTTP, runSlots)
			}
		})
	}
}

// wireRow is a row of TestWireOnlyEvidence: under fault, the killers
// must fail or warn, and the blamed must end blocked by a case that
// blames the fault's rule (its premise failed).
type wireRow struct {
	fault           refserver.Fault
	killers, blamed []string
}

// check runs the wire cases sel under the row's fault, in process or over
// HTTP, within slots, and holds their verdicts to the row.
func (row wireRow) check(t *testing.T, sel []probe.Case, overHTTP bool, slots chan struct{}) {
	set := refserver.FaultSet{}
	if row.fault != "" {
		set[row.fault] = true
	}
	breaks := row.fault.Breaks()
	rep, err := runEachWithin(slots, func(probe.Case) target { return hiddenControlTarget(set, overHTTP) },
		runner.Config{Profile: wireProfile(t), Cases: sel, CloseTimeout: 300 * time.Millisecond, CaseTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		o := r.Outcome
		t.Logf("%s [%s] %s: %s", r.ID, r.Transport, o.Verdict, chrono.Sanitize(o.Summary, false))
		if r.ID == "tasks/result-error-equivalence" || r.ID == "tasks/iserror-fails-task" {
			if o.Verdict != verdict.Skip || !strings.Contains(o.Summary, "io.mcpflight/control") {
				t.Errorf("%s: %s %q, want a skip naming what would let it run", r.ID, o.Verdict, o.Summary)
			}
			continue
		}
		if o.Verdict == verdict.Skip && !strings.HasPrefix(r.ID, "http/") {
			t.Errorf("%s skipped without the control extension: %s", r.ID, o.Summary)
		}
		if o.Verdict == verdict.Skip && strings.HasPrefix(r.ID, "http/") && overHTTP {
			t.Errorf("%s skipped over HTTP without the control extension: %s", r.ID, o.Summary)
		}
		switch o.Verdict {
		case verdict.Fail, verdict.Warn:
			if row.fault == "" {
				t.Errorf("%s [%s]: %s against the conforming server: %s", r.ID, r.Transport, o.Verdict, o.Summary)
				continue
			}
			// Blame lands on a rule the fault breaks; where the
			// evidence fits two causes the verdict names both.
			if !slices.Contains(breaks, o.Requirement) && !namesOneOf(o.Actual, breaks) {
				t.Errorf("%s [%s]: %s %s under %s, documented to break %v: %s", r.ID, r.Transport, o.Verdict, o.Requirement, row.fault, breaks, o.Summary)
			}
		case verdict.Blocked:
			if !slices.Contains(breaks, o.Blame.Requirement) {
				t.Errorf("%s [%s]: blocked under %q by a rule it does not break: %s", r.ID, r.Transport, row.fault, o.Summary)
			}
		case verdict.Error:
			t.Errorf("%s [%s]: error under %q: %s", r.ID, r.Transport, row.fault, o.Summary)
		}
		if !strings.HasPrefix(r.ID, "http/") || overHTTP {
			if slices.Contains(row.killers, r.ID) && o.Verdict != verdict.Fail && o.Verdict != verdict.Warn {
				t.Errorf("%s [%s] did not detect %s on the wire: %s %s", r.ID, r.Transport, row.fault, o.Verdict, o.Summary)
			}
			if slices.Contains(row.blamed, r.ID) && o.Verdict != verdict.Blocked {
				t.Errorf("%s [%s]: %s %s, want blocked by a case judging %v (its premise failed)", r.ID, r.Transport, o.Verdict, o.Summary, breaks)
			}
		}
	}
}

// namesOneOf reports whether text names one of the requirement IDs.
func namesOneOf(text string, ids []string) bool {
	for _, id := range ids {
		if strings.Contains(text, "("+id+")") {
			return true
		}
	}
	return false
}
