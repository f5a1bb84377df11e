package transport

import (
	"context"
	"io"
	"sync"
	"time"
)

// ServeFunc serves one MCP session in the calling process: it reads the
// client's frames from in and writes its own to out, like a stdio server
// on its stdin and stdout, until in ends or ctx is cancelled. A server
// built on the official Go SDK is
//
//	func(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
//		return server.Run(ctx, &mcp.IOTransport{Reader: in, Writer: out})
//	}
type ServeFunc func(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error

// Pipes runs serve over two io.Pipe pairs and returns the client's end as
// a Stream, as if the server were a stdio child process: the stream's
// input is the server's output (InChannel "stdout" unless cfg says
// otherwise) and its output is the server's input (OutChannel "stdin").
// cfg.Log is required, as for NewStream; cfg.OnClose is replaced.
//
// Closing the stream closes the server's input and waits for serve to
// return, grading Teardown{ExitedAfter: StepCloseInput}, or StepNone when
// the server had already ended before its input was closed. If the Close
// context ends first (a server that ignores end of input), serve's
// context is cancelled, the in-process counterpart of the ladder's next
// rung, and the teardown is graded StepSIGTERM. ExitCode is 0 when serve
// returned nil and 1 otherwise.
//
// The channel yields serve's result once, then is closed. Ending ctx ends
// the session.
func Pipes(ctx context.Context, serve ServeFunc, cfg StreamConfig) (*Stream, <-chan error) {
	inR, inW := io.Pipe()   // client -> server: the server's stdin
	outR, outW := io.Pipe() // server -> client: the server's stdout
	sctx, cancel := context.WithCancel(ctx)

	done := make(chan struct{})
	errc := make(chan error, 1)
	var serveErr error // written before done is closed
	go func() {
		err := serve(sctx, inR, outW)
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
	cfg.OnClose = func(cctx context.Context) Teardown {
		exit := func(step Step, start time.Time) Teardown {
			td := Teardown{ExitedAfter: step, Waited: time.Since(start)}
			if serveErr != nil {
				td.ExitCode = 1
			}
			return td
		}
		start := time.Now()
		if stdin.endedFirst() {
			<-done
			return exit(StepNone, start)
		}
		select {
		case <-done:
			return exit(StepCloseInput, start)
		case <-cctx.Done():
		}
		cancel()
		<-done
		return exit(StepSIGTERM, start)
	}
	return NewStream(outR, stdin, cfg), errc
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

// Close records whether serve had returned, then closes the pipe.
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

// endedFirst reports whether serve had returned before the input closed.
func (p *stdinPipe) endedFirst() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ended
}
