package cases_test

import (
	"regexp"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpflight/mcpflight/cases"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/runner"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// notAboutEvidence matches the skips that say the case does not apply to
// the target (another revision or transport, a capability or extension
// the server does not declare, a tool tools/list does not list): nothing
// a user adds lets such a case run.
var notAboutEvidence = regexp.MustCompile(`^(applies to \S+ only|needs the (stdio|Streamable HTTP) transport|capability .* not advertised|the server does not declare|server/discover does not list|no tool of tools/list|the server assigned no session ID|over Streamable HTTP the cancel closes|stdin exists only|over stdio a second session|initialize agreed to|the server declares the tasks capability; this case is for servers without it)`)

// namesRemedy matches a skip that names what would let the case run: a
// profile field (--profile), the observer contract or the control
// extension.
var namesRemedy = regexp.MustCompile(`--profile|profile field|"observer"|docs/observer\.md|docs/control-extension\.md|would let it run`)

// TestSkipsNameWhatWouldLetThemRun runs the catalogue, under both
// revisions, against the reference server with the control extension
// hidden and a profile without an observer: every skip
// either says the case does not apply to the target, or names what would
// let it run (a profile field, the observer, the control extension). A
// skip that says only "needs the control extension" fails. A case the
// run did not exercise (a race lost on a loaded machine, which a full run
// under two busy loops saw once) says what happened instead.
func TestSkipsNameWhatWouldLetThemRun(t *testing.T) {
	t.Parallel()
	prof := wireProfile(t)
	for _, rev := range []string{spec.V20251125, spec.V20260728} {
		t.Run(rev, func(t *testing.T) {
			t.Parallel()
			// In a synctest bubble: the in-process server's paced tools
			// and the cases' windows run on the bubble's clock, which
			// advances whenever every goroutine waits on it.
			synctest.Test(t, func(t *testing.T) {
				skipsNameWhatWouldLetThemRun(t, prof, rev)
			})
		})
	}
}

// skipsNameWhatWouldLetThemRun is TestSkipsNameWhatWouldLetThemRun
// under rev.
func skipsNameWhatWouldLetThemRun(t *testing.T, prof *profile.Profile, rev string) {
	rep, err := runEachWithin(make(chan struct{}, 8), func(probe.Case) target { return hiddenControlTarget(nil, false) },
		runner.Config{Profile: prof, Cases: cases.All(), Version: rev, CloseTimeout: 300 * time.Millisecond, CaseTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	skips := 0
	for _, r := range rep.Results {
		o := r.Outcome
		if o.Verdict != verdict.Skip {
			continue
		}
		if notAboutEvidence.MatchString(o.Summary) {
			continue
		}
		if o.Unexercised {
			// The run lost a race its rule needs (a progress that
			// crossed the cancel on a loaded machine): the skip says
			// what happened, and the next run may exercise it.
			t.Logf("%s: %s", r.ID, o.Summary)
			continue
		}
		skips++
		t.Logf("%s: %s", r.ID, o.Summary)
		if !namesRemedy.MatchString(o.Summary) {
			t.Errorf("%s skips without naming what would let it run: %q", r.ID, o.Summary)
		}
	}
	if skips == 0 {
		t.Errorf("no case skipped for want of evidence under %s: the control-only cases ran against a server without the extension", rev)
	}
}
