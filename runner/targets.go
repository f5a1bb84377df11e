package runner

import (
	"context"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/transport"
)

// The constructors of the three kinds of target, so that no caller writes
// a Dial of its own: each session gets a fresh connection configured as
// cfg says, recording into that session's chronology (cfg.Log is
// replaced).

// StdioTarget is a server started as a child process for every session
// (transport.StartStdio), named name in the report.
func StdioTarget(name string, cfg transport.StdioConfig) Target {
	cfg.Argv = append([]string(nil), cfg.Argv...)
	return Target{
		Name:      name,
		Transport: TransportStdio,
		Dial: func(ctx context.Context, log *chrono.Log) (transport.Conn, error) {
			c := cfg
			c.Log = log
			return transport.StartStdio(ctx, c)
		},
	}
}

// HTTPTarget is a Streamable HTTP endpoint, cfg.URL, on which every
// session is a connection of its own (transport.DialHTTP).
func HTTPTarget(name string, cfg transport.HTTPConfig) Target {
	return Target{
		Name:      name,
		Transport: TransportHTTP,
		Dial: func(ctx context.Context, log *chrono.Log) (transport.Conn, error) {
			c := cfg
			c.Log = log
			return transport.DialHTTP(ctx, c)
		},
	}
}

// InProcessTarget runs serve in this process for every session, on a pair
// of pipes that stand for a stdio server's stdin and stdout
// (transport.Pipes).
func InProcessTarget(name string, serve transport.ServeFunc, cfg transport.StreamConfig) Target {
	return Target{
		Name:      name,
		Transport: TransportInProcess,
		Dial: func(ctx context.Context, log *chrono.Log) (transport.Conn, error) {
			c := cfg
			c.Log = log
			conn, _ := transport.Pipes(ctx, serve, c)
			return conn, nil
		},
	}
}

// Redacting is t whose sessions' chronologies redact r's secrets (the
// values of --header), wherever the target echoes them: bodies, log
// messages, errors. A nil or empty r changes nothing.
func (t Target) Redacting(r *chrono.Redactor) Target {
	if r == nil {
		return t
	}
	wrap := func(dial func(context.Context, *chrono.Log) (transport.Conn, error)) func(context.Context, *chrono.Log) (transport.Conn, error) {
		if dial == nil {
			return nil
		}
		return func(ctx context.Context, log *chrono.Log) (transport.Conn, error) {
			log.SetRedactor(r)
			return dial(ctx, log)
		}
	}
	t.Dial = wrap(t.Dial)
	if perCase := t.PerCase; perCase != nil {
		t.PerCase = func(ctx context.Context) (func(context.Context, *chrono.Log) (transport.Conn, error), func(), error) {
			dial, release, err := perCase(ctx)
			return wrap(dial), release, err
		}
	}
	return t
}
