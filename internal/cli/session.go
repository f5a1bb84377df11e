package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/negotiate"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/runner"
)

// openSession starts target and negotiates the revision for mode (the
// handshake, or the 2026-07-28 envelope and server/discover; see
// negotiate.Open). closeSession tears it down, bounded, even after ctx
// has ended.
func openSession(ctx context.Context, target runner.Target, mode negotiate.Mode) (s *peer.Session, out *negotiate.Outcome, log *chrono.Log, closeSession func(), err error) {
	log = chrono.New()
	s, closeSession, err = dialSession(ctx, target, log)
	if err != nil {
		return nil, nil, log, func() {}, err
	}
	if out, err = negotiate.Open(ctx, s, mode, negotiate.Options{}); err != nil {
		closeSession()
		return nil, out, log, func() {}, fmt.Errorf("opening a session with %s: %w%s", target.Name, err, tailNote(log))
	}
	return s, out, log, closeSession, nil
}

// dialSession starts target, recording into log, and returns a session on
// it, not yet negotiated; closeSession tears it down, bounded, even after
// ctx has ended. ctx bounds the connection's whole life.
func dialSession(ctx context.Context, target runner.Target, log *chrono.Log) (s *peer.Session, closeSession func(), err error) {
	conn, err := target.Dial(ctx, log)
	if err != nil {
		return nil, func() {}, fmt.Errorf("starting %s: %w", target.Name, err)
	}
	s = peer.New(conn, peer.Options{Log: log})
	return s, func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		s.Close(cctx)
	}, nil
}
