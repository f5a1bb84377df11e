package runner

import (
	"fmt"
	"time"

	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// GradeServed adds to g how the HTTP server the harness started itself
// for the run (transport.Served) ended, so that the report's teardown
// section says it too.
//
// MCP has no rule on how an HTTP server stops, so the rung it needed
// changes no verdict: stopping on SIGTERM is said as such, and needing
// SIGKILL is said for the reader (in-flight work of such a server is lost
// at every restart). What does change the verdict is what leaves the run
// in doubt: a server that had exited before the run ended (every case
// after its exit met no server), processes of its group left alive, or a
// teardown that itself failed are an error.
func GradeServed(g results.TeardownGrade, command string, td transport.Teardown) results.TeardownGrade {
	name := fmt.Sprintf("the HTTP server mcpflight started (%s)", command)
	exit := fmt.Sprintf("exit code %d", td.ExitCode)
	if td.Signal != "" {
		exit = "signal " + td.Signal
	}
	var line string
	bad := false
	switch td.ExitedAfter {
	case transport.StepSIGTERM:
		line = fmt.Sprintf("%s stopped on SIGTERM in %v (%s)", name, td.Waited.Round(time.Millisecond), exit)
	case transport.StepSIGKILL:
		line = fmt.Sprintf("%s ignored SIGTERM and was killed with SIGKILL after %v", name, td.Waited.Round(time.Millisecond))
	default:
		bad = true
		line = fmt.Sprintf("%s had exited before the end of the run (%s): the cases after its exit met no server", name, exit)
	}
	if td.Leftovers > 0 {
		bad = true
		g.Leftovers += td.Leftovers
		line += fmt.Sprintf("; %d of its processes were still alive after SIGKILL", td.Leftovers)
	}
	if td.Err != nil {
		bad = true
		g.Errors = append(g.Errors, "served HTTP server: "+td.Err.Error())
		line += "; its teardown failed: " + td.Err.Error()
	}
	if g.Summary == "" {
		g.Summary = line
	} else {
		g.Summary += "; " + line
	}
	if bad {
		g.Verdict, g.Requirement = verdict.Error, ""
	}
	return g
}
