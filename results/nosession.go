package results

// NoSession says why a run could not open a single session with its
// target, so that it ran no case: the target could not be started or
// reached, exited at once, wrote something that is not JSON-RPC, answered
// HTTP without MCP, or answered the handshake with an error. The run's
// outcome is this one line, in every report, however many cases were
// selected: each case would only have failed the same way. Its strings
// come from the target, sanitised.
type NoSession struct {
	// Line is the one sentence the reports print.
	Line string `json:"line"`
	// Probes are the negotiation's attempts and how each failed
	// ("initialize: the connection ended before an answer").
	Probes []string `json:"probes,omitempty"`
	// Stdout is the start of what the target wrote on stdout that was
	// not JSON-RPC, one line; "" when nothing such.
	Stdout string `json:"stdout,omitempty"`
	// Stderr are the last lines the target wrote on stderr.
	Stderr []string `json:"stderr,omitempty"`
	// Exit says how the target's process ended, when it did.
	Exit string `json:"exit,omitempty"`
	// HTTP is the first HTTP status line with its headers, when the
	// target answered HTTP.
	HTTP string `json:"http,omitempty"`
}
