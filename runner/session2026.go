package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/negotiate"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// A case of a 2026-07-28 run opens a modern session: there is no
// handshake, the session carries the envelope on every request, and
// server/discover stands in for initialize as the server's account of
// itself (capabilities, serverInfo, the control extension), so that what
// the runner and the case read of the server is the same in both eras.

// envelope2026 is the envelope of a 2026-07-28 run's sessions.
func envelope2026() peer.Envelope { return negotiate.Options{}.Envelope() }

// caseEnvelope is envelope2026 with a control scope of the case's own
// (mcp.MetaControlScope): on a target that offers the control
// extension, the case's checkpoints, operation keys, counters and tasks
// are then its own even when other cases share the server, as a session
// of its own gives them under 2025-11-25. A server without the extension
// ignores the member (a MetaObject may carry any prefixed key).
func caseEnvelope(scope string) peer.Envelope {
	env := envelope2026()
	env.Extra = map[string]any{mcp.MetaControlScope: scope}
	return env
}

// newScope is a control scope for one run of case id.
func newScope(id string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return id + "#" + hex.EncodeToString(b[:])
}

// needsServerView reports whether a case cannot run without knowing what
// the server declared.
func needsServerView(n probe.Needs) bool {
	return n.Control || n.Tasks || n.TasksCapability || n.NoTasks || len(n.Capabilities) > 0
}

// open2026 makes s a 2026-07-28 session for case c and, unless the case
// opens its own session (NoHandshake), discovers the server. A failed
// server/discover ends a case that needs what the server declared (an
// error: a helper step broke, not a rule of the case); any other case
// runs without it. It returns what Server() says, or the outcome that
// ends the case.
func open2026(ctx context.Context, s *peer.Session, c probe.Case, scope string) (*peer.InitResult, *verdict.Outcome) {
	s.SetEnvelope(caseEnvelope(scope))
	if c.Needs.NoHandshake {
		return nil, nil
	}
	if _, err := s.Discover(ctx); err != nil {
		if needsServerView(c.Needs) {
			o := verdict.Errorf("server/discover failed, so what the server declares is unknown: %s", chrono.Sanitize(err.Error(), false))
			return nil, &o
		}
		s.Log().Harness(chrono.KindNote, "runner", "server/discover failed; the case needs nothing it declares and runs without it")
		return nil, nil
	}
	return s.Server(), nil
}

// opens2026 reports whether the run's sessions are 2026-07-28 ones.
func opens2026(cfg Config) bool { return cfg.Version == spec.V20260728 }

// openSecond readies a second session of a case the way the run opens
// its first: initialize, or the 2026-07-28 envelope.
func openSecond(ctx context.Context, cfg Config, x *peer.Session, scope string) error {
	if opens2026(cfg) {
		x.SetEnvelope(caseEnvelope(scope))
		return nil
	}
	if _, err := x.Initialize(ctx, peer.InitOptions{ProtocolVersion: cfg.Version}); err != nil {
		return fmt.Errorf("runner: initializing a second session: %w", err)
	}
	return nil
}
