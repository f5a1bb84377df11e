package results

import (
	"time"

	"github.com/mcpflight/mcpflight/verdict"
)

// Step is a rung of the shutdown ladder a session needed before its peer
// exited (STD-7, STD-44: close stdin, then SIGTERM, then SIGKILL), or
// the DELETE that ends a Streamable HTTP session (HTTP-54).
type Step string

// The rungs, in the order a shutdown climbs them.
const (
	StepNone       Step = "none"
	StepCloseInput Step = "close-stdin"
	StepDelete     Step = "delete"
	StepSIGTERM    Step = "SIGTERM"
	StepSIGKILL    Step = "SIGKILL"
)

// Rank orders the rungs: 0 for StepNone, 1 for closing the input or a
// DELETE, 2 for SIGTERM, 3 for SIGKILL, -1 for anything else.
func (s Step) Rank() int {
	switch s {
	case StepNone:
		return 0
	case StepCloseInput, StepDelete:
		return 1
	case StepSIGTERM:
		return 2
	case StepSIGKILL:
		return 3
	}
	return -1
}

// Teardown is how one session's connection ended.
type Teardown struct {
	// ExitedAfter is the last rung that was needed before the peer
	// exited; empty when there was no connection.
	ExitedAfter Step
	// Waited is the time from the first rung to the exit.
	Waited time.Duration
	// ExitCode is the process exit code, or -1 when killed by a signal.
	ExitCode int
	// Signal names the signal that ended the process, if any.
	Signal string
	// Leftovers counts processes of the peer's group still alive after
	// teardown; it must be zero.
	Leftovers int
	// Err says why teardown itself failed; empty when it did not.
	Err string
}

// TeardownGrade grades how every session of a run ended, separately from
// the cases: a stdio server should exit once its input is closed (STD-46),
// so that the client's shutdown never has to escalate (STD-7, STD-44).
type TeardownGrade struct {
	// Sessions is the number of sessions that were closed.
	Sessions int
	// Worst is the furthest rung any session needed: StepNone (it had
	// exited before), StepCloseInput, StepSIGTERM or StepSIGKILL; empty
	// when there was no session.
	Worst Step
	// Steps counts the sessions by the rung they needed.
	Steps map[Step]int
	// Leftovers is the total number of the target's processes still
	// alive after teardown.
	Leftovers int
	// Errors lists the teardowns that themselves failed, by case ID.
	Errors []string
	// Verdict is pass when every session exited once its input closed
	// (or had already exited), and error when a teardown itself failed;
	// with no session it is skip. When a signal was needed, the
	// registry's level of the rule cited decides it: warn for SIGTERM
	// (STD-7 and STD-46 are SHOULDs; fail under --strict), and fail, a
	// written exception, when SIGKILL was needed or processes were left
	// over.
	Verdict verdict.Verdict
	// Requirement is the requirement a warn or fail cites, in the words of
	// Revision.
	Requirement string
	// Advice is a requirement of a later revision than the run's that
	// says the same of the server, cited as advice, not as the run's rule
	// (STD-46 on a 2025-11-25 run); empty when none.
	Advice string
	// Revision is the revision the grade cites under; empty when the
	// grade was not placed under one.
	Revision string
	// Summary is one line saying what happened.
	Summary string
	// Slowest is the longest teardown.
	Slowest time.Duration
	// Strict records that the run was strict: a warn is graded fail.
	Strict bool
}
