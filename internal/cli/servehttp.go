package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/transport"
)

// serveHTTP runs the reference server over Streamable HTTP until ctx ends,
// under refserver's listen policy: loopback only unless --listen-any
// (anyHost). wrap, when not nil, wraps the endpoint's handler (a hostile
// mode).
func (e Env) serveHTTP(ctx context.Context, srv *refserver.Server, addr string, anyHost bool, opts refserver.HTTPOptions, wrap func(http.Handler) http.Handler) (int, error) {
	// The drain is half the grace a shutdown ladder gives SIGTERM
	// (transport.DefaultTermGrace, as check --serve uses): a request still
	// open when the signal comes must not make the server outlive it
	// (seen under load: drain and grace both 2 s, the server killed).
	ep, err := srv.ListenHTTP(addr, refserver.BindOptions{Any: anyHost, HTTP: opts, Wrap: wrap, Drain: transport.DefaultTermGrace / 2})
	if errors.Is(err, refserver.ErrNotLoopback) {
		return 0, usagef(serveUsage, "--http %v; pass --listen-any to bind it", err)
	}
	if err != nil {
		return 0, fmt.Errorf("serve --http: %w", err)
	}
	fmt.Fprintln(e.Stdout, ep.URL)
	<-ctx.Done()
	ep.Close()
	return 0, nil
}
