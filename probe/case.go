// Package probe is the kit that drives and judges a session for the
// catalogue: the Case row and what it needs of the target (Needs), the
// Env a running case works with, the operations that drive the target
// (slow calls and their checkpoints, durable tasks, raw HTTP exchanges)
// and the judges that read the chronology (no response after a cancel,
// no answer to a notification, progress that strictly increases). The
// rows themselves, with their Run functions, are the catalogue in package
// cases; the runner runs them.
package probe

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/control"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// Needs says what a case requires of the target.
type Needs struct {
	// SlowTool: a long-running tool that can emit progress (profile "slow").
	SlowTool bool
	// EffectTool: a tool with an observable side effect (profile "effect").
	EffectTool bool
	// LogTool: a tool that emits log messages (profile "log").
	LogTool bool
	// Control: the io.mcpflight/control extension, for checkpoints and
	// cleanup counters. Without it the case is skipped.
	Control bool
	// Capabilities are server capabilities that must be declared.
	Capabilities []string
	// NoHandshake: the runner must not initialize the session.
	NoHandshake bool
	// Stdio: only meaningful over the stdio transport.
	Stdio bool
	// HTTP: only meaningful over the Streamable HTTP transport; the
	// session's Conn is then a *transport.HTTP.
	HTTP bool
	// Tasks: the profile names a task tool (profile "task") and the
	// server declares tasks.requests.tools.call (2025-11-25 tasks).
	Tasks bool
	// NoTasks: only meaningful on a server that does not declare the
	// tasks capability (TSK-24).
	NoTasks bool
}

// Case is one row of the catalogue.
type Case struct {
	// ID is a stable slug, "area/what-is-checked".
	ID string
	// Title is a short human description.
	Title string
	// Reqs are requirement IDs from REQUIREMENTS.md.
	Reqs []string
	// Versions the case applies to.
	Versions []string
	// Needs of the target.
	Needs Needs
	// Sends says what the case puts on the wire.
	Sends string
	// Expect says what must happen.
	Expect string
	// Run drives the session and judges.
	Run func(ctx context.Context, e *Env) verdict.Outcome
}

// Area is the part of the ID before the first slash.
func (c Case) Area() string {
	area, _, _ := strings.Cut(c.ID, "/")
	return area
}

// AppliesTo reports whether the case applies to a protocol version.
func (c Case) AppliesTo(version string) bool {
	for _, v := range c.Versions {
		if v == version {
			return true
		}
	}
	return false
}

// Env is what a running case works with.
type Env struct {
	// S is the session, initialized unless Needs.NoHandshake.
	S *peer.Session
	// Log is the case's chronology.
	Log *chrono.Log
	// Profile says which tools serve which needs.
	Profile *profile.Profile
	// Control is the checkpoint/counter client, nil when the target does
	// not offer the extension.
	Control *control.Client
	// Grace is how long a case watches for something that must not happen
	// when the target offers no checkpoints to synchronise on.
	Grace time.Duration
	// Transport names the transport ("stdio", "http", "inprocess").
	Transport string
	// Close ends the session's transport and grades teardown; for cases
	// that judge teardown themselves. The runner tolerates a second close.
	Close func(ctx context.Context) Teardown
	// Open opens and initializes another session to the same target,
	// recording into the same chronology; the runner closes it when the
	// case ends. Nil when the runner offers no second session.
	Open func(ctx context.Context) (*peer.Session, error)
}

// Patience bounds a wait for something that must happen and that nothing
// holds back: a checkpoint once its gates are open, an answer in flight,
// the end of a stream after its response. It is a safety net that a
// loaded machine cannot overrun (ten grace windows and two seconds),
// never the thing a case tests; what must not happen is judged after a
// barrier (Quiesce) or, on a target without checkpoints, over Grace.
func (e *Env) Patience() time.Duration { return 10*e.Grace + 2*time.Second }

// Teardown is the transport's teardown grade, re-exported for cases.
type Teardown = transport.Teardown

// Violation builds a fail (MUST) or warn (SHOULD) outcome.
func Violation(v verdict.Verdict, req string, expected []string, actual string, seq uint64) verdict.Outcome {
	return verdict.Outcome{Verdict: v, Requirement: req, Expected: expected, Actual: actual, ActualSeq: seq,
		Summary: fmt.Sprintf("%s violated: %s", req, actual)}
}
