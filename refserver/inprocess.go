package refserver

import (
	"context"
	"io"
	"sync"
	"time"

	"github.com/mcpflight/mcpflight/transport"
)

// InProcess runs a server session over two io.Pipe pairs and returns the
// client's end as a transport.Stream, as if the server were a stdio child
// process: the stream's input is the server's output (InChannel "stdout"
// unless cfg says otherwise) and its output is the server's input
// (OutChannel "stdin"). cfg.Log is required, as for transport.NewStream;
// cfg.OnClose is replaced.
//
// Closing the stream closes the server's input and waits for Serve to
// return, grading Teardown{ExitedAfter: transport.StepCloseInput}, or
// StepNone when the server had already ended before the input was closed.
// If the Close context ends first (a server that ignores end of input),
// the session's context is cancelled, the in-process counterpart of the
// ladder's next rung, and the teardown is graded StepSIGTERM. ExitCode is 0 when Serve returned nil
// and 1 otherwise.
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
	inR, inW := io.Pipe()   // client -> server: the server's stdin
	outR, outW := io.Pipe() // server -> client: the server's stdout
	sctx, cancel := context.WithCancel(ctx)

	done := make(chan struct{})
	errc := make(chan error, 1)
	var serveErr error // written before done is closed
	go func() {
		err := srv.Serve(sctx, inR, outW)
		serveErr = err
		// Like a process exiting: its stdout ends and its stdin breaks.
		_ = outW.Close()
		_ = inR.CloseWithError(io.ErrClosedPipe)
		cancel()
		close(done)
		errc <- err
		close(errc)
	}()

	if cfg.InChannel == "" {
		cfg.InChannel = "stdout"
	}
	if cfg.OutChannel == "" {
		cfg.OutChannel = "stdin"
	}
	stdin := &stdinPipe{PipeWriter: inW, done: done}
	cfg.OnClose = func(cctx context.Context) transport.Teardown {
		exit := func(step transport.Step, start time.Time) transport.Teardown {
			td := transport.Teardown{ExitedAfter: step, Waited: time.Since(start)}
			if serveErr != nil {
				td.ExitCode = 1
			}
			return td
		}
		start := time.Now()
		if stdin.endedFirst() {
			<-done
			return exit(transport.StepNone, start)
		}
		select {
		case <-done:
			return exit(transport.StepCloseInput, start)
		case <-cctx.Done():
		}
		cancel()
		<-done
		return exit(transport.StepSIGTERM, start)
	}
	return transport.NewStream(outR, stdin, cfg), errc
}

// stdinPipe is the client's end of the server's input. It remembers
// whether the server had already ended when the client closed it.
type stdinPipe struct {
	*io.PipeWriter
	done  <-chan struct{}
	mu    sync.Mutex
	ended bool
	shut  bool
}

// Close records whether Serve had returned, then closes the pipe.
func (p *stdinPipe) Close() error {
	p.mu.Lock()
	if !p.shut {
		p.shut = true
		select {
		case <-p.done:
			p.ended = true
		default:
		}
	}
	p.mu.Unlock()
	return p.PipeWriter.Close()
}

// endedFirst reports whether Serve had returned before the input closed.
func (p *stdinPipe) endedFirst() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ended
}
