package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/runner"
)

// openSession starts target and completes the handshake. closeSession
// tears it down, bounded, even after ctx has ended.
func openSession(ctx context.Context, target runner.Target) (s *peer.Session, log *chrono.Log, closeSession func(), err error) {
	log = chrono.New()
	conn, err := target.Dial(ctx, log)
	if err != nil {
		return nil, log, func() {}, fmt.Errorf("starting %s: %w", target.Name, err)
	}
	s = peer.New(conn, peer.Options{Log: log})
	closeSession = func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		s.Close(cctx)
	}
	if _, err := s.Initialize(ctx, peer.InitOptions{}); err != nil {
		closeSession()
		return nil, log, func() {}, fmt.Errorf("handshake with %s: %w%s", target.Name, err, tailNote(log))
	}
	return s, log, closeSession, nil
}
