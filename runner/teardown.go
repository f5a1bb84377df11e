package runner

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// TeardownGrade grades how every session of a run ended, separately from
// the cases: a stdio server should exit once its input is closed (STD-46),
// so that the client's shutdown never has to escalate (STD-7, STD-44).
type TeardownGrade struct {
	// Sessions is the number of sessions that were closed.
	Sessions int
	// Worst is the furthest rung any session needed: StepNone (it had
	// exited before), StepCloseInput, StepSIGTERM or StepSIGKILL; empty
	// when there was no session.
	Worst transport.Step
	// Steps counts the sessions by the rung they needed.
	Steps map[transport.Step]int
	// Leftovers is the total number of the target's processes still
	// alive after teardown.
	Leftovers int
	// Errors lists the teardowns that themselves failed, by case ID.
	Errors []string
	// Verdict is pass when every session exited once its input closed
	// (or had already exited), and error when a teardown itself failed;
	// with no session it is skip. When a signal was needed, the
	// registry's level of the rule cited decides it (see Under): warn
	// for SIGTERM (STD-7 and STD-46 are SHOULDs; fail under --strict),
	// and fail, a written exception, when SIGKILL was needed or
	// processes were left over.
	Verdict verdict.Verdict
	// Requirement is the requirement a warn or fail cites, in the words of
	// Revision (see Under).
	Requirement string
	// Advice is a requirement of a later revision than the run's that
	// says the same of the server, cited as advice, not as the run's rule
	// (STD-46 on a 2025-11-25 run); empty when none.
	Advice string
	// Revision is the revision the grade cites under; empty when the
	// grade was not placed under one (Under).
	Revision string
	// Summary is one line saying what happened.
	Summary string
	// Slowest is the longest teardown.
	Slowest time.Duration
	// Strict records that the run was strict: a warn is graded fail.
	Strict bool
}

// rank orders the rungs of the shutdown ladder.
func rank(s transport.Step) int {
	switch s {
	case transport.StepNone:
		return 0
	case transport.StepCloseInput, transport.StepDelete:
		return 1
	case transport.StepSIGTERM:
		return 2
	case transport.StepSIGKILL:
		return 3
	}
	return -1
}

// GradeTeardown aggregates the teardowns of results that had a session,
// leaving out those an interruption of the run cut short. Under strict a
// warn becomes a fail, as for the cases.
func GradeTeardown(results []Result, strict bool) TeardownGrade {
	g := TeardownGrade{Steps: map[transport.Step]int{}}
	for _, r := range results {
		if !r.HadSession() || r.Interrupted {
			continue
		}
		td := r.Teardown
		g.Sessions++
		g.Steps[td.ExitedAfter]++
		if g.Worst == "" || rank(td.ExitedAfter) > rank(g.Worst) {
			g.Worst = td.ExitedAfter
		}
		g.Leftovers += td.Leftovers
		g.Slowest = max(g.Slowest, td.Waited)
		if td.Err != nil {
			g.Errors = append(g.Errors, r.ID+": "+td.Err.Error())
		}
	}
	g.Strict = strict
	switch {
	case g.Sessions == 0:
		g.Verdict, g.Summary = verdict.Skip, "no session was opened"
	case g.Leftovers > 0:
		g.Summary = fmt.Sprintf("%d of the target's processes were still alive after teardown", g.Leftovers)
	case g.Worst == transport.StepSIGKILL:
		g.Summary = fmt.Sprintf("%d of %d sessions had to be killed with SIGKILL (ignored closed stdin and SIGTERM)",
			g.Steps[transport.StepSIGKILL], g.Sessions)
	case len(g.Errors) > 0:
		g.Verdict = verdict.Error
		g.Summary = fmt.Sprintf("%d of %d teardowns failed: %s", len(g.Errors), g.Sessions, strings.Join(g.Errors, "; "))
	case g.Worst == transport.StepSIGTERM:
		g.Summary = fmt.Sprintf("%d of %d sessions did not exit when stdin closed and needed SIGTERM",
			g.Steps[transport.StepSIGTERM], g.Sessions)
	case g.Worst == transport.StepDelete:
		// Streamable HTTP: the sessions were ended with DELETE (HTTP-54);
		// a failed DELETE is a teardown error above.
		g.Verdict = verdict.Pass
		g.Summary = fmt.Sprintf("all %d sessions were ended with DELETE (or had none to end)", g.Sessions)
	default:
		g.Verdict = verdict.Pass
		g.Summary = fmt.Sprintf("all %d sessions exited when their input closed", g.Sessions)
		if g.Sessions == 1 {
			g.Summary = "the session exited when its input closed"
		}
	}
	// The grades that cite a rule take their verdict from the registry.
	return g.Under("")
}
