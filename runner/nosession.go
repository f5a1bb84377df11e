package runner

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/negotiate"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/results"
)

// ErrNoSession is matched (errors.Is) by RunProtocol's error when no
// session with the target could be opened, so that no case ran: the
// target could not be started or reached, exited at once, does not speak
// JSON-RPC, answered HTTP without MCP, or refused the handshake. The
// report then carries the one line that says which (results.NoSession).
var ErrNoSession = errors.New("no session with the target could be opened")

// noSessionError is ErrNoSession with its line; it matches the probe's own
// error too (transport.ErrExecutableNotFound, negotiate.ErrNotJSONRPC, a
// refused connection).
type noSessionError struct {
	line  string
	cause error
}

func (e *noSessionError) Error() string { return e.line }
func (e *noSessionError) Unwrap() []error {
	if e.cause == nil {
		return []error{ErrNoSession}
	}
	return []error{ErrNoSession, e.cause}
}

// noSession says why the negotiation's probes opened no session with the
// target, or nil when one of them did, or when the cases can still judge
// what went wrong. No session opens when the target wrote no JSON-RPC
// message at all (it could not be started or reached, exited, wrote
// something else, answered HTTP without MCP, or stayed silent), or when
// it answered initialize with a JSON-RPC error. A target that speaks
// JSON-RPC otherwise is left to the cases and the schema check: an
// answer of the wrong shape, an initialize that agreed to another
// revision (LIF-9), a server/discover it answered with an error under the
// 2026-07-28 the user asked for, where each case's requests stand alone.
//
// A target that named the revisions it offers (a -32022), or refused as a
// modern server does, is left to the negotiation's own error, which says
// so; err is the negotiation's, for a probe that could not even connect.
func noSession(sv *negotiate.Survey, err error) *results.NoSession {
	var probes []*negotiate.Probe
	for _, p := range []*negotiate.Probe{sv.Probe2025, sv.Probe2026} {
		if p == nil {
			continue
		}
		if p.OK() || peer.IsError2026(p.Err) {
			return nil
		}
		probes = append(probes, p)
	}
	if sv.Probe2025 != nil && errors.Is(sv.Probe2025.Err, peer.ErrVersionMismatch) {
		return nil
	}
	if len(probes) == 0 {
		if err == nil {
			return nil
		}
		// The probe's connection could not be opened.
		msg := strings.TrimPrefix(err.Error(), "negotiate: opening a probe connection: ")
		return &results.NoSession{Line: "no session could be opened: " + chrono.Sanitize(msg, false)}
	}
	if slices.ContainsFunc(probes, spoke) && !slices.ContainsFunc(probes, refusedHandshake) {
		// It speaks JSON-RPC: what it got wrong (an answer of the wrong
		// shape, a probe it left unanswered) is for the cases and the
		// schema check to find.
		return nil
	}
	ns := &results.NoSession{}
	for _, p := range probes {
		ns.Probes = append(ns.Probes, p.Method+": "+p.Failure)
		evidence(p, ns)
	}
	ns.Line = noSessionLine(probes, ns)
	return ns
}

// refusedHandshake reports whether the probe is an initialize the target
// answered with a JSON-RPC error: under 2025-11-25 no session opens
// without it, so every case would fail the same way.
func refusedHandshake(p *negotiate.Probe) bool {
	var je *jsonrpc.Error
	return p.Method == mcp.MethodInitialize && errors.As(p.Err, &je)
}

// spoke reports whether the target wrote a JSON-RPC message during the
// probe.
func spoke(p *negotiate.Probe) bool {
	if p.Log == nil {
		return false
	}
	return slices.ContainsFunc(p.Log.Snapshot(), func(ev chrono.Event) bool {
		return ev.Dir == chrono.In && ev.Kind == chrono.KindFrame && ev.Summary != nil && ev.Summary.Malformed == ""
	})
}

// evidence adds to ns what the probe's chronology shows of the target: the
// first frame that was not JSON-RPC, the first HTTP status, how its
// process ended when that ended the probe, and its last stderr lines.
func evidence(p *negotiate.Probe, ns *results.NoSession) {
	if p.Log == nil {
		return
	}
	// The process's exit says why the probe failed when the probe failed
	// because the connection ended (the exit may be recorded after the
	// end of its output), or when it came before the probe's decision;
	// else it is the probe's own teardown.
	closed := errors.Is(p.Err, peer.ErrConnectionClosed) || errors.Is(p.Err, syscall.EPIPE)
	decided := false
	events := p.Log.Snapshot()
	for _, ev := range events {
		switch {
		case ev.Kind == chrono.KindDecision && ev.Channel == "negotiate":
			decided = true
		case ev.Dir == chrono.In && ev.Kind == chrono.KindFrame && ev.Summary != nil && ev.Summary.Malformed != "" && ns.Stdout == "":
			line, _, _ := strings.Cut(string(ev.Raw), "\n")
			ns.Stdout = chrono.Sanitize(chrono.Clip(strings.TrimSpace(line), 80), false)
		case ev.Dir == chrono.In && ev.Kind == chrono.KindHTTP && strings.HasPrefix(ev.Text, "HTTP ") && ns.HTTP == "":
			ns.HTTP = chrono.Sanitize(chrono.Clip(ev.Text, 200), false)
		case ev.Kind == chrono.KindExit && (closed || !decided) && ns.Exit == "":
			ns.Exit = chrono.Sanitize(ev.Text, false)
		}
	}
	if gist := stderrGist(events); len(gist) > len(ns.Stderr) {
		ns.Stderr = gist
	}
}

// noSessionLine is the one sentence: the probes' failures, each said
// once, then what the target showed that they do not already say.
func noSessionLine(probes []*negotiate.Probe, ns *results.NoSession) string {
	var parts []string
	seen := map[string]bool{}
	failure := func(p *negotiate.Probe) string {
		var je *jsonrpc.Error
		if errors.As(p.Err, &je) && je.Message != "" {
			// The server's own words say more than its code.
			return p.Failure + ": " + chrono.Sanitize(chrono.Clip(je.Message, 200), false)
		}
		return p.Failure
	}
	for _, p := range probes {
		if f := failure(p); !seen[f] {
			seen[f] = true
			parts = append(parts, p.Method+" failed: "+f)
		}
	}
	if len(seen) == 1 && len(probes) > 1 {
		parts = []string{"initialize and server/discover failed: " + failure(probes[0])}
	}
	line := "no session could be opened: " + strings.Join(parts, "; ")
	said := strings.Join(parts, " ")
	if ns.Stdout != "" && !strings.Contains(said, ns.Stdout) {
		line += fmt.Sprintf("; it wrote %q on stdout, which is not JSON-RPC", ns.Stdout)
	}
	if ns.Exit != "" {
		line += "; " + ns.Exit
	}
	if ns.HTTP != "" && !strings.Contains(said, ns.HTTP) {
		line += "; it answered " + ns.HTTP
	}
	if len(ns.Stderr) > 0 {
		line += "; its stderr ended with: " + strings.Join(ns.Stderr, " | ")
	}
	return line
}
