package probe

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

func TestBrokeCitesOnlyWhatTheCaseDeclares(t *testing.T) {
	e := &Env{Revision: spec.V20251125, Cites: []string{"CAN-8"}}
	if o := e.Breaks("CAN-8", nil, "a response came", 3); o.Verdict != verdict.Warn || o.Requirement != "CAN-8" || o.Level != "SHOULD" {
		t.Errorf("a declared SHOULD gave %+v", o)
	}
	o := e.Breaks("CAN-11", nil, "the target closed its output", 0)
	if o.Verdict != verdict.Error || !strings.Contains(o.Summary, "harness bug") || !strings.Contains(o.Summary, verdict.ErrNotCited.Error()) {
		t.Errorf("an undeclared requirement gave %+v, want an error naming the harness bug", o)
	}
	// The same rule under the other revision cites that revision's row.
	e2026 := &Env{Revision: spec.V20260728, Cites: []string{"CAN-54"}}
	rule := verdict.Req("CAN-8").Under(spec.V20260728, "CAN-54")
	if o := e2026.Broke(rule, nil, "a response came", 3); o.Verdict != verdict.Fail || o.Requirement != "CAN-54" {
		t.Errorf("under 2026-07-28 the rule gave %+v, want fail CAN-54", o)
	}
}

func TestCaseReqsFor(t *testing.T) {
	c := Case{Reqs: []string{"CAN-11"}, ReqsUnder: map[string][]string{spec.V20260728: {"CAN-54"}}}
	if got := c.ReqsFor(spec.V20251125); len(got) != 1 || got[0] != "CAN-11" {
		t.Errorf("ReqsFor(2025-11-25) = %v", got)
	}
	if got := c.ReqsFor(spec.V20260728); len(got) != 2 || got[1] != "CAN-54" {
		t.Errorf("ReqsFor(2026-07-28) = %v", got)
	}
	if len(c.Reqs) != 1 {
		t.Errorf("ReqsFor changed Reqs: %v", c.Reqs)
	}
}

// TestWithPatienceEndsBeforeTheCaseDeadline: a wait never runs into the
// case's own deadline, so what never comes is a verdict.
func TestWithPatienceEndsBeforeTheCaseDeadline(t *testing.T) {
	// On a synctest bubble's clock no time passes between the deadlines
	// taken, so the bounds below are exact.
	synctest.Test(t, func(t *testing.T) {
		e := &Env{Grace: 300 * time.Millisecond}
		if got, want := e.Patience(), 4200*time.Millisecond; got != want {
			t.Errorf("Patience = %v, want %v", got, want)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		wctx, wcancel, d := e.WithPatience(ctx)
		defer wcancel()
		if d <= 0 || d > time.Second {
			t.Errorf("bound %v, want at most a second before the deadline", d)
		}
		waitEnd, _ := wctx.Deadline()
		caseEnd, _ := ctx.Deadline()
		if !waitEnd.Before(caseEnd.Add(-900 * time.Millisecond)) {
			t.Errorf("the wait ends at %v, less than a second before the case's deadline %v", waitEnd, caseEnd)
		}
	})
}

// TestReadObserverWithoutOne: an Env whose profile names no observer (or
// no profile at all) gets an error from ReadObserver, never a panic.
func TestReadObserverWithoutOne(t *testing.T) {
	for _, e := range []*Env{{}, {Profile: &profile.Profile{}}} {
		if _, err := e.ReadObserver(context.Background()); err == nil || !strings.Contains(err.Error(), "names no observer") {
			t.Errorf("profile %v: error %v, want one saying it names no observer", e.Profile, err)
		}
	}
}
