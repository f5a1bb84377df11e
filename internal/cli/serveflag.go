package cli

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/runner"
	"github.com/mcpflight/mcpflight/transport"
)

// serveFlagsUsage documents the flags of serveFlags.
const serveFlagsUsage = `  --serve CMD          start the HTTP server at --url with this command line
                       (split like --stdio; --shell applies), wait until
                       the URL answers, run against it, and stop it at the
                       end (SIGTERM, then SIGKILL, its whole process group).
                       Its stderr and stdout appear in each case's
                       chronology ("server stderr"), and the teardown
                       section says how it stopped
  --serve-timeout D    how long --serve's server may take to answer
                       (default 30s)
`

// serveFlags are --serve and --serve-timeout: the command that serves
// --url, started and stopped by mcpflight itself (issue 12.5). The flag
// is named for what the command does, like --stdio: "check --url URL
// --serve CMD" reads as "check URL, served by CMD".
type serveFlags struct {
	cmd     string
	timeout time.Duration
}

func (f *serveFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.cmd, "serve", "", "")
	fs.DurationVar(&f.timeout, "serve-timeout", transport.DefaultStartTimeout, "")
}

// servedServer is the server --serve started; its methods are no-ops on
// nil (no --serve).
type servedServer struct {
	srv *transport.Served
}

// startServe starts --serve's command, if any, and waits until --url
// answers. A server that does not come up is one error line naming the
// command and its last stderr lines, and nothing of it is left running.
func (e Env) startServe(ctx context.Context, o checkOptions, usage string) (*servedServer, error) {
	f := o.serve
	switch {
	case f.cmd == "":
		return nil, nil
	case o.url == "":
		return nil, usagef(usage, "--serve starts the server of --url: pass --url too")
	case f.timeout <= 0:
		return nil, usagef(usage, "--serve-timeout must be positive")
	}
	argv := []string{f.cmd}
	if !o.shell {
		var err error
		if argv, err = transport.SplitArgs(f.cmd); err != nil {
			return nil, usagef(usage, "--serve: %v", err)
		} else if len(argv) == 0 {
			return nil, usagef(usage, "--serve: empty command line")
		}
	}
	log := chrono.New(chrono.WithRedactor(e.redact))
	srv, err := transport.StartServed(ctx, transport.ServedConfig{
		Argv: argv, Shell: o.shell, URL: o.url, Log: log, StartTimeout: f.timeout,
	})
	if err != nil {
		return nil, fmt.Errorf("--serve: %w", err)
	}
	return &servedServer{srv: srv}, nil
}

// wrap makes every connection of t record the server's stderr lines that
// arrive while it is open in its case's chronology.
func (s *servedServer) wrap(t runner.Target) runner.Target {
	if s == nil || t.Dial == nil {
		return t
	}
	dial := t.Dial
	t.Dial = func(ctx context.Context, log *chrono.Log) (transport.Conn, error) {
		detach := s.srv.Attach(log)
		conn, err := dial(ctx, log)
		if h, ok := conn.(*transport.HTTP); ok && err == nil {
			h.AfterClose(detach)
		} else {
			detach()
		}
		return conn, err
	}
	return t
}

// stop stops the server with the ladder, bounded even when ctx has
// ended (Ctrl-C), and returns how it ended.
func (s *servedServer) stop(ctx context.Context) transport.Teardown {
	if s == nil {
		return transport.Teardown{}
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	return s.srv.Close(cctx)
}

// grade stops the server and adds how it ended to rep's teardown grade.
func (s *servedServer) grade(ctx context.Context, rep *results.Report) {
	if s == nil || rep == nil {
		return
	}
	rep.Teardown = runner.GradeServed(rep.Teardown, s.srv.Command(), s.stop(ctx))
}
