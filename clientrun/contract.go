// Package clientrun runs an MCP client under test: mcpflight plays the
// server. For each case it starts the server side (a stdio relay that the
// client spawns, or a Streamable HTTP endpoint on a free 127.0.0.1 port),
// launches the client's adapter with the case's instructions in its
// environment, serves the case's Script, and records every frame the
// client writes and every frame the server writes into one chronology with
// one clock. The cases (package clientcases) judge what the chronology and
// the adapter's reports show; Run collects their verdicts into a
// results.Report, so that the report renderers and baselines work as for
// "check".
//
// # The adapter contract
//
// It follows the official conformance suite's client mode where it fits:
// the scenario's name is in MCP_CONFORMANCE_SCENARIO, the protocol
// revision in MCP_CONFORMANCE_PROTOCOL_VERSION, and the scenario's data in
// MCP_CONFORMANCE_CONTEXT as JSON whose "name" is the scenario (here the
// Instructions). Over Streamable HTTP the server's URL is the last
// argument; over stdio the last argument (or the {server} placeholder) is
// the server's command line, which Instructions.Server also gives as an
// argv. The adapter prints one Report per line on stdout and exits 0. See
// docs/check-client.md.
package clientrun

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The environment of the adapter contract.
const (
	// EnvScenario names the scenario (the case ID).
	EnvScenario = "MCP_CONFORMANCE_SCENARIO"
	// EnvContext holds the Instructions as JSON.
	EnvContext = "MCP_CONFORMANCE_CONTEXT"
	// EnvProtocolVersion is the protocol revision the run tests.
	EnvProtocolVersion = "MCP_CONFORMANCE_PROTOCOL_VERSION"
	// ServerPlaceholder in the client's command line is replaced by the
	// server's command line (stdio) or URL (HTTP); without it, that is
	// appended as the last argument.
	ServerPlaceholder = "{server}"
)

// Transports of a client run.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
)

// Step operations.
const (
	// OpCall calls one tool and waits for its outcome.
	OpCall = "call"
	// OpParallel starts every call of Calls at once and waits for all.
	OpParallel = "parallel"
	// OpSetLogLevel sets the log level the caller wants (Level) as the
	// client library does it: under 2025-11-25 a logging/setLevel
	// request (LOG-3); under 2026-07-28, which removed it (PNG-40), the
	// level goes in each later request's _meta
	// (io.modelcontextprotocol/logLevel). The report is "result" once it
	// is set.
	OpSetLogLevel = "setLogLevel"
)

// Instructions tell the adapter what to do in one case. They are the
// value of MCP_CONFORMANCE_CONTEXT.
type Instructions struct {
	// Name is the scenario: the case ID.
	Name string `json:"name"`
	// ProtocolVersion is the revision the run tests ("2025-11-25",
	// "2026-07-28").
	ProtocolVersion string `json:"protocolVersion"`
	// Transport is "stdio" or "http".
	Transport string `json:"transport"`
	// Server is the command that starts the server, for stdio.
	Server *ServerCommand `json:"server,omitempty"`
	// URL is the MCP endpoint, for Streamable HTTP.
	URL string `json:"url,omitempty"`
	// Connect configures the connection (the initialize handshake, or
	// the server/discover probe).
	Connect Connect `json:"connect"`
	// Steps run in order after connecting; then the adapter closes the
	// connection and exits.
	Steps []Step `json:"steps"`
	// LingerMs, when positive, is how long the adapter keeps the
	// connection open after its last step (or after a connect that
	// failed) before it closes it, as a host that goes on running would:
	// what the client sends off the caller's path (a cancel sent from a
	// background goroutine or a timer) shows within it instead of racing
	// the close. The cases that judge what a client sends, or must not
	// send, after an abort or a timeout set it to their observation
	// window.
	LingerMs int `json:"lingerMs,omitempty"`
}

// ServerCommand is the argv of the stdio server to spawn.
type ServerCommand struct {
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// Connect configures how the adapter connects.
type Connect struct {
	// TimeoutMs bounds the connection's handshake (initialize, or the
	// probe and what follows); 0 leaves the SDK's default.
	TimeoutMs int `json:"timeoutMs,omitempty"`
}

// Step is one thing the adapter does.
type Step struct {
	// Op is OpCall, OpParallel or OpSetLogLevel.
	Op string `json:"op"`
	// Level is the log level of an OpSetLogLevel ("warning").
	Level string `json:"level,omitempty"`
	// Call is the call of an OpCall.
	Call *CallStep `json:"call,omitempty"`
	// Calls are the calls of an OpParallel.
	Calls []CallStep `json:"calls,omitempty"`
}

// CallStep is one tool call and how the caller gives up on it.
type CallStep struct {
	// Tool and Arguments name the tool and what to pass it.
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments,omitempty"`
	// Progress asks for progress notifications (a progress token).
	Progress bool `json:"progress,omitempty"`
	// AbortAfterProgress, when positive, aborts the call (the user
	// cancels) once that many progress notifications have arrived.
	AbortAfterProgress int `json:"abortAfterProgress,omitempty"`
	// AbortAfterResponse aborts the call's signal after its outcome has
	// been delivered: a user who cancels too late.
	AbortAfterResponse bool `json:"abortAfterResponse,omitempty"`
	// TimeoutMs, when positive, is the call's request timeout.
	TimeoutMs int `json:"timeoutMs,omitempty"`
	// ResetTimeoutOnProgress restarts the timeout at each progress
	// notification (LIF-18).
	ResetTimeoutOnProgress bool `json:"resetTimeoutOnProgress,omitempty"`
	// MaxTotalTimeoutMs, when positive, bounds the call whatever
	// progress arrives (LIF-19).
	MaxTotalTimeoutMs int `json:"maxTotalTimeoutMs,omitempty"`
	// Task calls the tool as a durable task (2025-11-25 task
	// augmentation, or the 2026-07-28 tasks extension).
	Task bool `json:"task,omitempty"`
	// AbortAfterTaskCreated aborts (cancels) the task once the server has
	// created it.
	AbortAfterTaskCreated bool `json:"abortAfterTaskCreated,omitempty"`
}

// Report outcomes, printed by the adapter.
const (
	// OutcomeConnected: the connection is up (step 0).
	OutcomeConnected = "connected"
	// OutcomeResult: the call returned a result; Text is its first text
	// content.
	OutcomeResult = "result"
	// OutcomeError: the call or the connection failed; Error says how.
	OutcomeError = "error"
	// OutcomeAborted: the call was aborted as instructed.
	OutcomeAborted = "aborted"
	// OutcomeTimeout: the call or the connection timed out.
	OutcomeTimeout = "timeout"
	// OutcomeUnsupported: the adapter cannot do what the step asks; the
	// case is skipped with Error as the reason.
	OutcomeUnsupported = "unsupported"
	// OutcomeClosed: the adapter closed the connection (last report).
	OutcomeClosed = "closed"
)

// Report is one line the adapter prints on stdout: what the caller saw.
type Report struct {
	// Step is 0 for the connection, 1… for Instructions.Steps.
	Step int `json:"step"`
	// Call is the 1-based index within a parallel step, 0 otherwise.
	Call int `json:"call,omitempty"`
	// Outcome is one of the Outcome constants.
	Outcome string `json:"outcome"`
	// Text is the first text content of a result.
	Text string `json:"text,omitempty"`
	// Error says what failed.
	Error string `json:"error,omitempty"`
}

// ParseReport decodes one line of the adapter's stdout; ok is false for a
// line that is not a report (an adapter may print other things).
func ParseReport(line []byte) (Report, bool) {
	var r Report
	s := strings.TrimSpace(string(line))
	if !strings.HasPrefix(s, "{") || json.Unmarshal([]byte(s), &r) != nil || r.Outcome == "" {
		return Report{}, false
	}
	return r, true
}

// String renders a report for an Actual line.
func (r Report) String() string {
	where := fmt.Sprintf("step %d", r.Step)
	if r.Step == 0 {
		where = "connect"
	}
	if r.Call > 0 {
		where += fmt.Sprintf(" call %d", r.Call)
	}
	s := where + ": " + r.Outcome
	if r.Text != "" {
		s += " " + fmt.Sprintf("%q", r.Text)
	}
	if r.Error != "" {
		s += " (" + r.Error + ")"
	}
	return s
}

// Environ is the adapter's environment for instructions.
func (in Instructions) Environ() ([]string, error) {
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("clientrun: encoding the instructions: %w", err)
	}
	return []string{
		EnvScenario + "=" + in.Name,
		EnvProtocolVersion + "=" + in.ProtocolVersion,
		EnvContext + "=" + string(raw),
	}, nil
}

// ReadInstructions reads the instructions from an environment lookup
// (os.Getenv): what an adapter written in Go calls first.
func ReadInstructions(getenv func(string) string) (Instructions, error) {
	raw := getenv(EnvContext)
	if raw == "" {
		return Instructions{}, fmt.Errorf("clientrun: %s is not set", EnvContext)
	}
	var in Instructions
	if err := json.Unmarshal([]byte(raw), &in); err != nil {
		return Instructions{}, fmt.Errorf("clientrun: %s: %w", EnvContext, err)
	}
	if in.Name == "" {
		in.Name = getenv(EnvScenario)
	}
	if in.ProtocolVersion == "" {
		in.ProtocolVersion = getenv(EnvProtocolVersion)
	}
	return in, nil
}
