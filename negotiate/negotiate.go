// Package negotiate chooses the protocol revision a client speaks with a
// server: 2025-11-25 (the initialize handshake), 2026-07-28 (per-request
// _meta, server/discover), or under ModeAuto whichever the server answers
// to, by the backward-compatibility mechanics of 2026-07-28: probe with
// server/discover and fall back to initialize on any failure that is not
// a recognised modern error, never keyed to one error code (STD-48,
// STD-49; over Streamable HTTP the 400's body is what is inspected,
// HTTP-106). ModeBoth asks for every revision the server offers.
//
// Open negotiates on one session (call, shell); Survey probes a target
// with connections of its own and reports what each probe saw, the
// revisions to run and the inconsistencies between what server/discover
// and initialize said (the runner, tools). A -32022 whose supported list
// has no revision the mode accepts is a *NoCommonRevisionError, one clear
// sentence naming the revisions the server offers.
package negotiate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
)

// Mode is what the user asked for (--protocol).
type Mode string

// The modes.
const (
	Mode20251125 Mode = spec.V20251125
	Mode20260728 Mode = spec.V20260728
	ModeAuto     Mode = "auto"
	ModeBoth     Mode = "both"
)

// ErrUnknownMode is wrapped by ParseMode's error.
var ErrUnknownMode = errors.New("unknown protocol mode")

// Modes lists the modes as --protocol spells them.
func Modes() []string {
	return []string{string(Mode20251125), string(Mode20260728), string(ModeAuto), string(ModeBoth)}
}

// ParseMode reads a --protocol value; "" is ModeAuto.
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return ModeAuto, nil
	}
	if slices.Contains(Modes(), s) {
		return Mode(s), nil
	}
	return "", fmt.Errorf("%w %q (want %s)", ErrUnknownMode, chrono.Sanitize(s, false), strings.Join(Modes(), ", "))
}

// DefaultProbeTimeout is how long server/discover may stay unanswered
// before the server is taken for a legacy one that ignores it (STD-48's
// "does not respond within a reasonable timeout").
const DefaultProbeTimeout = 5 * time.Second

// DefaultHandshakeTimeout bounds an initialize probe.
const DefaultHandshakeTimeout = 15 * time.Second

// Options configures a negotiation.
type Options struct {
	// ClientInfo names the client, in initialize and in the envelope;
	// mcpflight if empty.
	ClientInfo peer.Implementation
	// Capabilities are the client capabilities, declared in initialize
	// and in the envelope; none if nil.
	Capabilities map[string]any
	// ProbeTimeout bounds server/discover; DefaultProbeTimeout if zero.
	ProbeTimeout time.Duration
	// HandshakeTimeout bounds initialize; DefaultHandshakeTimeout if zero.
	HandshakeTimeout time.Duration

	// otherProbeDone, set by SurveyTarget, is closed when the initialize
	// probe on another connection of the same target has ended: the
	// probe's silence is counted from then too (probeContext).
	otherProbeDone <-chan struct{}
}

func (o Options) withDefaults() Options {
	if o.ClientInfo.Name == "" {
		o.ClientInfo = peer.Implementation{Name: "mcpflight", Version: "dev"}
	}
	if o.ProbeTimeout <= 0 {
		o.ProbeTimeout = DefaultProbeTimeout
	}
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = DefaultHandshakeTimeout
	}
	return o
}

// Envelope is the envelope a 2026-07-28 session of these options
// carries.
func (o Options) Envelope() peer.Envelope {
	o = o.withDefaults()
	info := o.ClientInfo
	return peer.Envelope{ProtocolVersion: spec.V20260728, ClientInfo: &info, ClientCapabilities: o.Capabilities}
}

// Probe is what one probe sent and saw: server/discover under the
// 2026-07-28 envelope, or initialize asking for 2025-11-25.
type Probe struct {
	// Method is mcp.MethodServerDiscover or mcp.MethodInitialize.
	Method string
	// Discover is the server/discover result, Init the initialize
	// result; the one of Method, nil when it failed.
	Discover *peer.DiscoverResult
	Init     *peer.InitResult
	// Err says why it failed, nil when it succeeded; Failure says it in
	// a few words ("-32601 Method not found", "no answer within 5s").
	Err     error
	Failure string
	// Log is the probe's chronology when Survey made the probe on a
	// connection of its own, nil when it ran on the caller's session.
	Log *chrono.Log
}

// OK reports whether the probe succeeded.
func (p *Probe) OK() bool { return p != nil && p.Err == nil }

// unsupported returns the probe's -32022, if that is how it failed.
func (p *Probe) unsupported() *peer.UnsupportedVersionError {
	var e *peer.UnsupportedVersionError
	if p != nil && errors.As(p.Err, &e) {
		return e
	}
	return nil
}

// refusal2026 reports whether the probe failed with an error that
// marks a modern server (-32020, -32021, -32022): no fallback then.
func (p *Probe) refusal2026() bool { return p != nil && peer.IsError2026(p.Err) }

// lists reports whether a successful discover probe lists version.
func (p *Probe) lists(version string) bool { return p.OK() && p.Discover.Supports(version) }

// Inconsistency is a contradiction between what the server said in
// different answers, with the requirements it bears on.
type Inconsistency struct {
	Summary      string
	Requirements []string
}

// NoCommonRevisionError reports a server that offers none of the
// revisions the mode accepts: it named its own (a -32022's
// data.supported, or server/discover's supportedVersions).
type NoCommonRevisionError struct {
	// Wanted are the revisions the mode accepts.
	Wanted []string
	// Offered are the revisions the server named, as sent.
	Offered []string
	// Via says where the server named them.
	Via string
}

// ErrRefusal2026 is wrapped by the error of a server/discover probe
// refused with -32020 or -32021: a modern server that did not accept the
// request, after which a client does not fall back to initialize.
var ErrRefusal2026 = errors.New("a modern server refused the probe")

// ErrNoCommonRevision is matched by a *NoCommonRevisionError.
var ErrNoCommonRevision = errors.New("the server offers no revision mcpflight can use here")

func (e *NoCommonRevisionError) Error() string {
	offered := "names no revision it supports"
	if len(e.Offered) > 0 {
		vs := make([]string, len(e.Offered))
		for i, v := range e.Offered {
			vs[i] = chrono.Sanitize(v, false)
		}
		offered = "offers " + strings.Join(vs, ", ")
	}
	return fmt.Sprintf("the server does not support %s: it %s (%s)", strings.Join(e.Wanted, " or "), offered, e.Via)
}

// Is makes errors.Is(err, ErrNoCommonRevision) hold.
func (e *NoCommonRevisionError) Is(target error) bool { return target == ErrNoCommonRevision }

// Describe says in a few words how a request failed, for a reason line:
// a JSON-RPC error by its code and name, an HTTP status, a timeout, or a
// closed connection.
func Describe(err error, timeout time.Duration) string {
	var (
		uve *peer.UnsupportedVersionError
		je  *jsonrpc.Error
		se  *transport.StatusError
	)
	switch {
	case err == nil:
		return ""
	case errors.As(err, &uve):
		s := "-32022 UnsupportedProtocolVersion"
		if len(uve.Supported) > 0 {
			s += ", supported: " + sanitized(uve.Supported)
		}
		return s
	case errors.As(err, &je):
		return peer.ErrorName(je.Code)
	case errors.As(err, &se):
		return fmt.Sprintf("HTTP %d without a JSON-RPC error", se.Status)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("no answer within %v", timeout)
	case errors.Is(err, peer.ErrConnectionClosed):
		return "the connection ended before an answer"
	case errors.Is(err, peer.ErrUndecodable):
		return "an answer that does not have the schema's shape"
	case errors.Is(err, transport.ErrNoAnswer):
		return "no JSON-RPC answer to it"
	}
	return chrono.Sanitize(chrono.Clip(err.Error(), 200), false)
}

func sanitized(vs []string) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = chrono.Sanitize(v, false)
	}
	return strings.Join(out, ", ")
}

// decision is what the probes say: the revisions to use and why, or an
// error, or that the initialize probe is needed to decide.
type decision struct {
	revisions []string
	reasons   map[string]string
	need2025  bool
	err       error
}

func decided(rev, reason string) decision {
	return decision{revisions: []string{rev}, reasons: map[string]string{rev: reason}}
}

// discoverSaid is the discover probe's outcome in a few words.
func discoverSaid(m *Probe) string {
	switch {
	case m.OK() && m.Discover.Supports(spec.V20260728):
		return "server/discover listed it"
	case m.OK():
		return "server/discover does not list 2026-07-28 (it lists " + orNothing(m.Discover.SupportedVersions) + ")"
	}
	return "server/discover failed (" + m.Failure + ")"
}

func orNothing(vs []string) string {
	if len(vs) == 0 {
		return "nothing"
	}
	return sanitized(vs)
}

// decide applies the rules of the mode to the probes; a nil probe was
// not made (yet).
func decide(mode Mode, m, l *Probe) decision {
	switch mode {
	case Mode20251125:
		if l == nil {
			return decision{need2025: true}
		}
		return decide2025(l, "as asked")
	case Mode20260728:
		if uve := m.unsupported(); uve != nil && !uve.Offers(spec.V20260728) {
			return decision{err: &NoCommonRevisionError{Wanted: []string{spec.V20260728}, Offered: uve.Supported,
				Via: "server/discover was answered -32022 UnsupportedProtocolVersion"}}
		}
		if m != nil && !m.OK() && !m.refusal2026() && !errors.Is(m.Err, ErrNotJSONRPC) {
			// A failed server/discover is how a 2025-11-25 server
			// answers (STD-48): initialize tells such a server, whose
			// answers would break 2026-07-28's rules only because they
			// are of another revision, from a modern one whose
			// server/discover is broken, which the cases judge.
			if l == nil {
				return decision{need2025: true}
			}
			if l.OK() {
				return decision{err: &NoCommonRevisionError{Wanted: []string{spec.V20260728}, Offered: []string{l.Init.ProtocolVersion},
					Via: discoverSaid(m) + ", and initialize agreed to " + chrono.Sanitize(l.Init.ProtocolVersion, false)}}
			}
		}
		return decided(spec.V20260728, "as asked; "+discoverSaid(m))
	case ModeAuto:
		if m.lists(spec.V20260728) {
			return decided(spec.V20260728, discoverSaid(m))
		}
		if uve := m.unsupported(); uve != nil {
			// A modern server: use a version it lists, never fall back
			// (STD-48); 2025-11-25 is used through initialize.
			if !uve.Offers(spec.V20251125) {
				return decision{err: &NoCommonRevisionError{Wanted: []string{spec.V20251125, spec.V20260728}, Offered: uve.Supported,
					Via: "server/discover was answered -32022 UnsupportedProtocolVersion"}}
			}
		} else if m.refusal2026() {
			return decision{err: fmt.Errorf("negotiate: %w: server/discover was refused with %s, so the server is a modern one (no fallback to initialize, STD-48) that did not accept the request", ErrRefusal2026, m.Failure)}
		}
		if l == nil {
			return decision{need2025: true}
		}
		if uve := l.unsupported(); uve != nil && uve.Offers(spec.V20260728) {
			return decided(spec.V20260728, "initialize was answered -32022 UnsupportedProtocolVersion offering it ("+discoverSaid(m)+")")
		}
		d := decide2025(l, discoverSaid(m))
		var nce *NoCommonRevisionError
		if errors.As(d.err, &nce) {
			nce.Wanted = []string{spec.V20251125, spec.V20260728}
		}
		return d
	case ModeBoth:
		if l == nil {
			return decision{need2025: true}
		}
		out := decision{reasons: map[string]string{}}
		if l.OK() {
			out.revisions = append(out.revisions, spec.V20251125)
			out.reasons[spec.V20251125] = "initialize agreed to " + chrono.Sanitize(l.Init.ProtocolVersion, false)
		}
		if m.lists(spec.V20260728) {
			out.revisions = append(out.revisions, spec.V20260728)
			out.reasons[spec.V20260728] = discoverSaid(m)
		}
		if len(out.revisions) > 0 {
			return out
		}
		var offered []string
		for _, p := range []*Probe{m, l} {
			if uve := p.unsupported(); uve != nil {
				offered = union(offered, uve.Supported)
			}
		}
		if m.OK() {
			offered = union(offered, m.Discover.SupportedVersions)
		}
		return decision{err: &NoCommonRevisionError{Wanted: []string{spec.V20251125, spec.V20260728}, Offered: offered,
			Via: discoverSaid(m) + "; initialize failed (" + l.Failure + ")"}}
	}
	return decision{err: fmt.Errorf("negotiate: %w %q", ErrUnknownMode, mode)}
}

// decide2025 judges the initialize probe, after what came before.
func decide2025(l *Probe, before string) decision {
	if l.OK() {
		reason := before + "; initialize agreed"
		if v := l.Init.ProtocolVersion; v != spec.V20251125 {
			reason += " to " + chrono.Sanitize(v, false)
		}
		return decided(spec.V20251125, reason)
	}
	if uve := l.unsupported(); uve != nil {
		return decision{err: &NoCommonRevisionError{Wanted: []string{spec.V20251125}, Offered: uve.Supported,
			Via: "initialize was answered -32022 UnsupportedProtocolVersion"}}
	}
	if before == "as asked" {
		// Forced: the cases find out what is wrong with the handshake.
		return decided(spec.V20251125, "as asked; initialize failed ("+l.Failure+")")
	}
	return decision{err: &probeError{msg: fmt.Sprintf("negotiate: %s, and initialize failed (%s)", before, l.Failure), err: l.Err}}
}

// probeError is a failed negotiation whose text summarises both probes
// and which unwraps to the handshake's own error, so that a caller can
// tell a target that could not be reached (errors.Is) from one that
// answered badly.
type probeError struct {
	msg string
	err error
}

func (e *probeError) Error() string { return e.msg }
func (e *probeError) Unwrap() error { return e.err }

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, v := range b {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// inconsistencies lists what the probes' answers contradict.
func inconsistencies(m, l *Probe) []Inconsistency {
	var out []Inconsistency
	add := func(reqs []string, format string, args ...any) {
		out = append(out, Inconsistency{Summary: fmt.Sprintf(format, args...), Requirements: reqs})
	}
	if m.OK() && !m.Discover.Supports(spec.V20260728) {
		add([]string{"LIF-40"}, "server/discover answered a 2026-07-28 request with a result, yet does not list 2026-07-28 (it lists %s); a server that does not support the requested version answers -32022",
			orNothing(m.Discover.SupportedVersions))
	}
	if uve := m.unsupported(); uve != nil {
		if uve.Offers(spec.V20260728) {
			add([]string{"LIF-40"}, "server/discover was answered -32022 for 2026-07-28, yet its data.supported lists 2026-07-28")
		}
		if uve.Requested != "" && uve.Requested != spec.V20260728 {
			add([]string{"LIF-40"}, "server/discover's -32022 says %s was requested; 2026-07-28 was", chrono.Sanitize(uve.Requested, false))
		}
	}
	if m == nil || l == nil {
		return out
	}
	if m.OK() && l.OK() && !m.Discover.Supports(l.Init.ProtocolVersion) {
		add([]string{"LIF-9", "LIF-47"}, "initialize agreed to %s, which server/discover does not list (it lists %s): either the server agrees to a revision it does not list as supported (LIF-9), or its supportedVersions names only the revisions of the per-request era (the spec does not say which it must)",
			chrono.Sanitize(l.Init.ProtocolVersion, false), orNothing(m.Discover.SupportedVersions))
	}
	if m.OK() && m.Discover.Supports(spec.V20251125) && !l.OK() {
		add([]string{"LIF-47"}, "server/discover lists 2025-11-25, yet initialize failed (%s)", l.Failure)
	}
	if !m.OK() && !m.refusal2026() {
		if uve := l.unsupported(); uve != nil && uve.Offers(spec.V20260728) {
			add([]string{"LIF-42"}, "server/discover failed (%s), yet initialize's -32022 offers 2026-07-28, whose servers MUST implement server/discover", m.Failure)
		}
	}
	return out
}
