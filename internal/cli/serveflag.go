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
                       Its stderr and stdout are recorded once for the
                       run (the reports' "served server" section, and
                       served-server.jsonl under --jsonl-dir); a case's
                       chronology gets the lines that name its
                       Mcp-Session-Id and a count of the others. The
                       teardown section says how it stopped
  --serve-timeout D    how long --serve's server may take to answer
                       (default 30s)
`

// serveFlags are --serve and --serve-timeout: the command that serves
// --url, started and stopped by mcpflight itself. The flag
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

// ServedJSONLName is the file name of --serve's server's chronology in
// --jsonl-dir: no case's file (JSONLName) has it, since every case ID
// has a "/".
const ServedJSONLName = "served-server.jsonl"

// servedServer is the server --serve started; its methods are no-ops on
// nil (no --serve).
type servedServer struct {
	srv *transport.Served
	// log is the server's own chronology, the run's record of its
	// output.
	log *chrono.Log
	// redact redacts the secrets of the run from its command line.
	redact *chrono.Redactor
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
	return &servedServer{srv: srv, log: log, redact: e.redact}, nil
}

// wrap attaches every HTTP connection of t to the server's stderr until
// it closes (transport.Served.Attach): its case's chronology gets the
// lines that name its session, and a count of all the lines printed
// while it was open. Every line, whoever it concerns, is in the server's
// own chronology, which grade puts in the report.
func (s *servedServer) wrap(t runner.Target) runner.Target {
	if s == nil || t.Dial == nil {
		return t
	}
	dial := t.Dial
	t.Dial = func(ctx context.Context, log *chrono.Log) (transport.Conn, error) {
		conn, err := dial(ctx, log)
		if h, ok := conn.(*transport.HTTP); ok && err == nil {
			// Nothing is sent before the first Send: attached now, the
			// connection sees every line its requests can cause.
			h.AfterClose(s.srv.Attach(log, h.SessionID))
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

// grade stops the server, adds how it ended to rep's teardown grade, and
// puts its command and its own chronology, complete now that it has
// stopped, in rep.Served.
func (s *servedServer) grade(ctx context.Context, rep *results.Report) {
	if s == nil || rep == nil {
		return
	}
	rep.Teardown = runner.GradeServed(rep.Teardown, s.srv.Command(), s.stop(ctx))
	rep.Served = &results.ServedServer{Command: s.redact.String(s.srv.Command()), Events: s.log.Events(), Log: s.log}
}
