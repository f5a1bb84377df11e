package runner

import (
	"fmt"
	"strings"

	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/verdict"
)

// GradeTeardown aggregates the teardowns of results that had a session,
// leaving out those an interruption of the run cut short. Under strict a
// warn becomes a fail, as for the cases.
func GradeTeardown(rs []results.Result, strict bool) results.TeardownGrade {
	g := results.TeardownGrade{Steps: map[results.Step]int{}}
	for _, r := range rs {
		if !r.HadSession() || r.Interrupted {
			continue
		}
		td := r.Teardown
		g.Sessions++
		g.Steps[td.ExitedAfter]++
		if g.Worst == "" || td.ExitedAfter.Rank() > g.Worst.Rank() {
			g.Worst = td.ExitedAfter
		}
		g.Leftovers += td.Leftovers
		g.Slowest = max(g.Slowest, td.Waited)
		if td.Err != "" {
			g.Errors = append(g.Errors, r.ID+": "+td.Err)
		}
	}
	g.Strict = strict
	switch {
	case g.Sessions == 0:
		g.Verdict, g.Summary = verdict.Skip, "no session was opened"
	case g.Leftovers > 0:
		g.Summary = fmt.Sprintf("%d of the target's processes were still alive after teardown", g.Leftovers)
	case g.Worst == results.StepSIGKILL:
		g.Summary = fmt.Sprintf("%d of %d sessions had to be killed with SIGKILL (ignored closed stdin and SIGTERM)",
			g.Steps[results.StepSIGKILL], g.Sessions)
	case len(g.Errors) > 0:
		g.Verdict = verdict.Error
		g.Summary = fmt.Sprintf("%d of %d teardowns failed: %s", len(g.Errors), g.Sessions, strings.Join(g.Errors, "; "))
	case g.Worst == results.StepSIGTERM:
		g.Summary = fmt.Sprintf("%d of %d sessions did not exit when stdin closed and needed SIGTERM",
			g.Steps[results.StepSIGTERM], g.Sessions)
	case g.Worst == results.StepDelete:
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
	return CiteTeardown(g, "")
}
