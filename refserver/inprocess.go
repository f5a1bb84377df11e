package refserver

import (
	"context"
	"io"

	"github.com/mcpflight/mcpflight/transport"
)

// InProcess runs a server session over two io.Pipe pairs and returns the
// client's end as a transport.Stream, as if the server were a stdio child
// process (transport.Pipes says how the connection is named, closed and
// graded). cfg.Log is required, as for transport.NewStream; cfg.OnClose
// is replaced.
//
// The channel yields Serve's result once, then is closed. Ending ctx ends
// the session.
func InProcess(ctx context.Context, opts Options, cfg transport.StreamConfig) (*transport.Stream, <-chan error) {
	return New(opts).InProcess(ctx, cfg)
}

// InProcess is like the function InProcess, for one more session of srv:
// sessions of one Server share nothing a conforming server lets them see,
// which is what the task isolation cases need two of.
func (srv *Server) InProcess(ctx context.Context, cfg transport.StreamConfig) (*transport.Stream, <-chan error) {
	return transport.Pipes(ctx, srv.ServePipes, cfg)
}

// ServePipes is Serve as a transport.ServeFunc: one session of srv on the
// pipes a transport.Pipes (or runner.InProcessTarget) hands it.
func (srv *Server) ServePipes(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	return srv.Serve(ctx, in, out)
}
