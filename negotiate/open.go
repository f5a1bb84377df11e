package negotiate

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
)

// Outcome is what Open chose for a session and why.
type Outcome struct {
	// Revision is the revision the session now speaks.
	Revision string
	// Reason says why, in a few words ("server/discover listed it",
	// "server/discover failed (-32601 Method not found); initialize
	// agreed").
	Reason string
	// Probe2026 and Probe2025 are the probes made on the session, nil for one
	// not made.
	Probe2026, Probe2025 *Probe
	// Inconsistencies are contradictions between the probes' answers.
	Inconsistencies []Inconsistency
}

// String is "REVISION: REASON".
func (o *Outcome) String() string { return o.Revision + ": " + o.Reason }

// ErrBothOnOneSession is Open's error for ModeBoth: one session speaks
// one revision.
var ErrBothOnOneSession = errors.New("negotiate: a session speaks one revision; ModeBoth is for Survey")

// Open negotiates the revision on s, a fresh session, and leaves it ready
// to use: initialized for 2025-11-25, or with the 2026-07-28 envelope set
// (and server/discover's result kept) for 2026-07-28. Under ModeAuto the
// session is probed with server/discover first and falls back to
// initialize on the same connection (over stdio on the same process,
// STD-48), on any failure but a recognised modern error (STD-49,
// HTTP-106). Every frame is in the session's chronology, with a decision
// event naming the revision and the reason.
func Open(ctx context.Context, s *peer.Session, mode Mode, opts Options) (*Outcome, error) {
	if mode == ModeBoth {
		return nil, ErrBothOnOneSession
	}
	opts = opts.withDefaults()
	hctx, stop := heedSpeech(ctx, s.Log(), NotJSONRPCGrace, s.Conn())
	defer stop()
	var m, l *Probe
	if mode != Mode20251125 {
		m = heard(hctx, discoverProbe(hctx, s, opts))
	}
	d := decide(mode, m, l)
	if d.need2025 {
		s.ClearEnvelope()
		l = heard(hctx, initializeProbe(hctx, s, opts))
		d = decide(mode, m, l)
	}
	out := &Outcome{Probe2026: m, Probe2025: l, Inconsistencies: inconsistencies(m, l)}
	if d.err != nil {
		s.Log().Harness(chrono.KindDecision, "negotiate", "no revision: "+chrono.Sanitize(d.err.Error(), false))
		return out, d.err
	}
	out.Revision = d.revisions[0]
	out.Reason = d.reasons[out.Revision]
	if out.Revision == spec.V20260728 {
		if _, is2026 := s.Envelope(); !is2026 {
			// initialize's -32022 offered it: the session goes modern.
			s.SetEnvelope(opts.Envelope())
		}
	}
	s.Log().Harness(chrono.KindDecision, "negotiate", "speaking "+out.String())
	for _, inc := range out.Inconsistencies {
		s.Log().Harness(chrono.KindDecision, "negotiate", "inconsistent: "+inc.Summary)
	}
	return out, nil
}

// ProbeID is the request ID of the server/discover probe.
const ProbeID = "mcpflight-discover-probe"

// discoverProbe sets the 2026-07-28 envelope on s and sends
// server/discover, waiting at most the probe timeout. An unanswered
// probe over Streamable HTTP is cancelled by closing its stream; over
// stdio it is left (a legacy server may answer it late, and a cancel
// before initialize would be a message it does not expect).
func discoverProbe(ctx context.Context, s *peer.Session, opts Options) *Probe {
	s.SetEnvelope(opts.Envelope())
	p := &Probe{Method: mcp.MethodServerDiscover}
	// A string ID of its own: the probe does not shift the integer IDs
	// a script or a reader counts on (the first call is 1 on a modern
	// session, 2 after initialize, as without negotiation).
	c, err := s.Start(ctx, mcp.MethodServerDiscover, nil, peer.WithID(jsonrpc.StringID(ProbeID)))
	if err == nil && opts.otherProbeDone != nil {
		// The silence that means a legacy server counts from the end of
		// the initialize probe on another connection: until the target
		// has shown it is up, it may only be slow to start.
		select {
		case <-c.Done():
		case <-opts.otherProbeDone:
		case <-ctx.Done():
		}
	}
	pctx, cancel := context.WithTimeout(ctx, opts.ProbeTimeout)
	defer cancel()
	if err == nil {
		msg, aerr := c.Await(pctx)
		switch {
		case aerr != nil:
			err = aerr
			if rc, ok := s.Conn().(transport.RequestCloser); ok && rc.Closable() && errors.Is(aerr, context.DeadlineExceeded) {
				_ = s.Cancel(context.WithoutCancel(ctx), c, "server/discover probe unanswered")
			}
		case msg.Error != nil:
			err = peer.Error2026(msg.Error)
		default:
			if rt := c.ResultType(); rt != mcp.ResultTypeComplete {
				err = &peer.ResultTypeError{Method: mcp.MethodServerDiscover, ResultType: rt, Recognised: rt == mcp.ResultTypeInputRequired, Raw: msg.Result}
			} else {
				p.Discover, err = peer.ParseDiscoverResult(msg.Result)
				if err == nil {
					s.KeepDiscovered(p.Discover)
				}
			}
		}
	}
	if err != nil {
		p.Discover, p.Err, p.Failure = nil, err, Describe(err, opts.ProbeTimeout)
		if c != nil && errors.Is(err, transport.ErrNoAnswer) {
			if e := nullIDError(s.Log(), c.SentSeq); e != nil {
				p.Failure = "a JSON-RPC error with a null id, " + peer.ErrorName(e.Code) + ": " + chrono.Sanitize(chrono.Clip(e.Message, 120), false)
			}
		}
		var se *transport.StatusError
		if h, ok := s.Conn().(*transport.HTTP); ok && c != nil && !errors.As(err, &se) {
			// Over HTTP the status is part of the answer (HTTP-106).
			if st := h.StatusOf(c.ID); st != 0 && st != 200 {
				p.Failure = fmt.Sprintf("HTTP %d, %s", st, p.Failure)
			}
		}
		s.Log().Harness(chrono.KindDecision, "negotiate", "server/discover probe: "+p.Failure)
	} else {
		s.Log().Harness(chrono.KindDecision, "negotiate", "server/discover probe: lists "+orNothing(p.Discover.SupportedVersions))
	}
	return p
}

// nullIDError is the first JSON-RPC error with a null id received after
// seq: how a legacy Streamable HTTP server commonly refuses a request
// before initialize (a 400 whose body answers no request).
func nullIDError(log *chrono.Log, seq uint64) *jsonrpc.Error {
	for _, ev := range log.Since(seq) {
		if ev.Dir != chrono.In || ev.Kind != chrono.KindFrame {
			continue
		}
		if m, err := jsonrpc.Decode(ev.Raw); err == nil && m.NullID && m.Error != nil {
			return m.Error
		}
	}
	return nil
}

// initializeProbe runs the 2025-11-25 handshake on s.
func initializeProbe(ctx context.Context, s *peer.Session, opts Options) *Probe {
	p := &Probe{Method: mcp.MethodInitialize}
	hctx, cancel := context.WithTimeout(ctx, opts.HandshakeTimeout)
	defer cancel()
	init, err := s.Initialize(hctx, peer.InitOptions{ProtocolVersion: spec.V20251125, Capabilities: opts.Capabilities, ClientInfo: opts.ClientInfo})
	if err != nil {
		p.Err, p.Failure = err, Describe(err, opts.HandshakeTimeout)
		s.Log().Harness(chrono.KindDecision, "negotiate", "initialize probe: "+p.Failure)
		return p
	}
	p.Init = init
	return p
}

// Dialer opens a fresh connection to the target, recording into log;
// runner.Target.Dial is one.
type Dialer func(ctx context.Context, log *chrono.Log) (transport.Conn, error)

// Survey is what probing a target found, for a run.
type Survey struct {
	// Mode is what was asked for.
	Mode Mode
	// Revisions are the revisions to run, in order: one, or under
	// ModeBoth each revision the server offers.
	Revisions []string
	// Reasons says why each revision is used.
	Reasons map[string]string
	// Probe2026 and Probe2025 are the probes made, nil for one not made; each
	// on a connection of its own, with its chronology.
	Probe2026, Probe2025 *Probe
	// Inconsistencies are contradictions between the probes' answers.
	Inconsistencies []Inconsistency
}

// ServerInfo is the server's name as the probes heard it: from
// server/discover's _meta, else from initialize; nil when neither said.
func (s *Survey) ServerInfo() *peer.Implementation {
	if s.Probe2026.OK() && s.Probe2026.Discover.ServerInfo != nil {
		info := *s.Probe2026.Discover.ServerInfo
		return &info
	}
	if s.Probe2025.OK() {
		info := s.Probe2025.Init.ServerInfo
		return &info
	}
	return nil
}

// Summary is one line per revision: "REVISION: REASON".
func (s *Survey) Summary() string {
	lines := make([]string, 0, len(s.Revisions))
	for _, r := range s.Revisions {
		lines = append(lines, r+": "+s.Reasons[r])
	}
	return strings.Join(lines, "; ")
}

// SurveyTarget probes the target for mode, each probe on a connection of its own
// that is closed before Run returns: server/discover unless the mode is
// 2025-11-25, initialize unless it is 2026-07-28 (under ModeAuto also
// when server/discover settled it, so that the two answers can be
// compared). It returns the revisions to run; the
// Survey is returned with the error too, for what the probes saw.
func SurveyTarget(ctx context.Context, dial Dialer, mode Mode, opts Options) (*Survey, error) {
	opts = opts.withDefaults()
	sv := &Survey{Mode: mode}
	if _, err := ParseMode(string(mode)); err != nil {
		return sv, err
	}
	probe := func(f func(context.Context, *peer.Session, Options) *Probe) (*Probe, error) {
		log := chrono.New()
		conn, err := dial(ctx, log)
		if err != nil {
			return nil, fmt.Errorf("negotiate: opening a probe connection: %w", err)
		}
		s := peer.New(conn, peer.Options{Log: log})
		hctx, stop := heedSpeech(ctx, log, NotJSONRPCGrace, conn)
		p := heard(hctx, f(hctx, s, opts))
		stop()
		closeWithin := opts.HandshakeTimeout
		if errors.Is(p.Err, ErrNotJSONRPC) {
			// Nothing it does on the way out is evidence of anything: it
			// is stopped at once (the transport's last rung).
			closeWithin = 0
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeWithin)
		s.Close(cctx)
		cancel()
		p.Log = log
		return p, nil
	}
	// Under auto and both the two probes run side by side, each on a
	// connection of its own; server/discover's silence then counts from
	// the later of its own start and the end of the initialize probe, so
	// that a target slow to start (a busy machine, a package manager
	// fetching the server) is not taken for a silent legacy server
	// (STD-49's "silent case after a timeout").
	var (
		err2025  error
		done2025 = make(chan struct{})
	)
	if mode != Mode20260728 {
		go func() {
			defer close(done2025)
			sv.Probe2025, err2025 = probe(initializeProbe)
		}()
	} else {
		close(done2025)
	}
	var err error
	if mode != Mode20251125 {
		mopts := opts
		if mode != Mode20260728 {
			mopts.otherProbeDone = done2025
		}
		sv.Probe2026, err = probe(func(ctx context.Context, s *peer.Session, _ Options) *Probe { return discoverProbe(ctx, s, mopts) })
	}
	<-done2025
	if err != nil {
		return sv, err
	}
	if err2025 != nil {
		return sv, err2025
	}
	d := decide(mode, sv.Probe2026, sv.Probe2025)
	if d.need2025 && sv.Probe2025 == nil {
		// Under 2026-07-28 only when server/discover failed.
		if sv.Probe2025, err = probe(initializeProbe); err != nil {
			return sv, err
		}
		d = decide(mode, sv.Probe2026, sv.Probe2025)
	}
	sv.Inconsistencies = inconsistencies(sv.Probe2026, sv.Probe2025)
	if d.err != nil {
		return sv, d.err
	}
	sv.Revisions, sv.Reasons = d.revisions, d.reasons
	return sv, nil
}
