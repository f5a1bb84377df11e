// Package results is the model of a run's results: what each case found
// (Result), the run as a whole (Report), how its sessions ended
// (TeardownGrade), what the schema check found (SchemaReport), how the
// revision was chosen (Negotiation) and what changed between revisions
// (RevisionChange).
//
// It is plain data. The runner and the client runner fill it; the
// reports, the baselines and the test helpers read it. Nothing in it
// holds a transport, a peer or a negotiation in progress, so a package
// that only renders or compares results depends on this one, the
// chronology and the verdicts, and nothing that dials a target.
package results

import (
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/verdict"
)

// Roles of Report.Role.
const (
	// RoleServer is the default: the target is a server (check).
	RoleServer = ""
	// RoleClient: the target is a client under test (check-client); in
	// the chronology Out is our server's frames, In the client's.
	RoleClient = "client"
	// RoleConversation: the target is a conversation mcpflight watched
	// or read from a capture (watch, judge), host and server both judged;
	// in the chronology Out is the host's frames, In the server's.
	RoleConversation = "conversation"
)

// Implementation is a peer's name and version as its handshake gave them
// (serverInfo, clientInfo). Its strings come from the target and are
// untrusted.
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// AreaPassive is the area of a check run's results that are no case's:
// those of the passive rules (the rules watch applies), judged on every
// case's chronology after the cases, "passive/RULE", one per rule that
// found what the cases did not.
const AreaPassive = "passive"

// Result is one case's result.
type Result struct {
	// ID, Title and Area come from the case.
	ID, Title, Area string
	// Reqs are the requirement IDs the case checks.
	Reqs []string
	// Outcome is the verdict, after --strict.
	Outcome verdict.Outcome
	// Transport is the transport the case ran over.
	Transport string
	// Duration is the case's wall time, teardown included.
	Duration time.Duration
	// Events is the case's whole chronology, teardown included; empty
	// for a case skipped before it had a connection.
	Events []chrono.Event
	// Teardown is how the case's connection ended; its ExitedAfter is
	// empty when the case had no connection, or handed it on.
	Teardown Teardown
	// ContinuedFrom names the case that opened the session this case went
	// on with (over stdio, tidy cases share server processes; runner
	// Config.Isolate); empty when the case opened its own.
	ContinuedFrom string `json:"continuedFrom,omitempty"`
	// HandedOn is set when the case's session went on to another tidy
	// case instead of being closed: its teardown is the last user's.
	HandedOn bool `json:"handedOn,omitempty"`
	// Log is the case's chronology, for exports such as JSON Lines.
	Log *chrono.Log `json:"-"`
	// Interrupted is set when the run's context ended before the case
	// and its teardown were over: its teardown was cut short by the
	// harness and is not graded.
	Interrupted bool
	// TargetMissing is set when the target could not be started or
	// reached at all (its executable does not exist, or its URL refuses
	// connections); the run stops after this case.
	TargetMissing bool `json:"targetMissing,omitempty"`
	// Server is the serverInfo of the case's handshake; nil when it had
	// none or it failed. Its strings come from the target and are
	// untrusted.
	Server *Implementation `json:"-"`
	// Schema is what the schema check found in Events.
	Schema CaseSchema `json:"-"`
	// Revision is the protocol revision the case ran under; "" when the
	// run had one revision only (Report.Version).
	Revision string
}

// HadSession reports whether the case closed a connection to the target
// (one it opened, or the last case to use a shared one).
func (r Result) HadSession() bool { return r.Teardown.ExitedAfter != "" }

// Report is the result of a run.
type Report struct {
	// Target is the target's name, Transport its transport.
	Target    string
	Transport string
	// Version is the protocol version tested.
	Version string
	// Profile names the profile used, empty for none.
	Profile string
	// Strict records whether warns were turned into fails.
	Strict bool
	// Server is the serverInfo of the first successful handshake, in the
	// order of Results (not the order the cases finished); nil when no
	// handshake succeeded. Its strings come from the target and
	// are untrusted.
	Server *Implementation
	// Started is when the run began, Duration how long it took.
	Started  time.Time
	Duration time.Duration
	// Results holds one result per case, in the order the cases were
	// given, however many ran at once.
	Results []Result
	// Counts is the number of results per verdict.
	Counts map[verdict.Verdict]int
	// Teardown grades how every session ended, separately from the cases.
	Teardown TeardownGrade
	// Interrupted is set when the run's context ended before every case
	// had run: the report is partial.
	Interrupted bool
	// Schema is the schema check of every inbound frame of the run: each
	// distinct violation once. A finding makes the run non-conformant.
	Schema SchemaReport
	// Negotiation is how the revisions were chosen: the probes, their
	// reasons, the inconsistencies between server/discover and
	// initialize. Nil for a run that did not negotiate.
	Negotiation *Negotiation
	// Revisions are the revisions the report covers, in the order run:
	// one, or two under --protocol both (Version then joins them).
	Revisions []string
	// Changes are the behaviours that pass under one revision and break
	// under the other (several revisions only).
	Changes []RevisionChange
	// NoSession, when not nil, says why no session with the target could
	// be opened: the run ran no case, and its outcome is that one line
	// (exit code 2).
	NoSession *NoSession `json:"noSession,omitempty"`
	// Notes are what the run learned about how it could test the target
	// that no verdict says and the reader must not miss, one sentence each
	// (the profile's slow tool answered at once with no progress).
	Notes []string `json:"notes,omitempty"`
	// Role is RoleClient when the target is a client under test
	// (check-client) and mcpflight played the server; RoleServer else.
	Role string
	// Served is the HTTP server the harness started for the run and
	// stopped at its end (check --serve); nil when it started none.
	Served *ServedServer
}

// ServedServer is an HTTP server the harness started for a run: its
// command line and its own chronology, the one record of everything it
// printed. The server is shared by every case of the run, several at a
// time, so a case's chronology holds only the lines that name its
// session, and a note counting the others.
type ServedServer struct {
	// Command is the command line as it was run.
	Command string
	// Events is the server's chronology: its start, the readiness check,
	// its stderr and stdout lines within its budget (the first ones, a
	// note counting those past it, and the last few), its end.
	Events []chrono.Event
	// Log is the same chronology, for exports such as JSON Lines.
	Log *chrono.Log `json:"-"`
}

// ExitCode maps the report to the process exit code: 1 when any case or
// the teardown grade failed, or the schema check found a violation
// (warns count as fails under --strict, which the runner has already
// applied); otherwise 2 when any case or the teardown ended in error,
// because the harness or the target broke, or when the run was
// interrupted, or when no session could be opened (NoSession); otherwise
// 3 (ExitIncomplete) when fewer than half of the applicable cases ran
// (Completeness); otherwise 0. A fail dominates an
// error: a conformance violation was shown even if something else broke.
func (r *Report) ExitCode() int {
	fail := r.Teardown.Verdict == verdict.Fail || len(r.Schema.Findings) > 0
	errored := r.Teardown.Verdict == verdict.Error || r.Interrupted || r.NoSession != nil
	for _, res := range r.Results {
		switch res.Outcome.Verdict {
		case verdict.Fail:
			fail = true
		case verdict.Error:
			errored = true
		}
	}
	switch {
	case fail:
		return 1
	case errored:
		return 2
	case r.Completeness().Incomplete:
		return ExitIncomplete
	}
	return 0
}

// Conformant reports whether the exit code is 0.
func (r *Report) Conformant() bool { return r.ExitCode() == 0 }
