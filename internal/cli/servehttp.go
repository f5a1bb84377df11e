package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/runner"
	"github.com/mcpflight/mcpflight/transport"
)

// loopbackHost reports whether host names the loopback interface.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// readHeaderTimeout bounds the time a client may take to send a request's
// headers, so that slow-header clients cannot hold connections open.
const readHeaderTimeout = 10 * time.Second

// httpServer is the http.Server of the reference server's endpoint. The
// headers of a request must arrive within headerTimeout and be at most
// 64 KiB; an idle keep-alive connection is closed after two minutes. There
// is no ReadTimeout or WriteTimeout, which would cut SSE streams: the
// endpoint bounds its POST bodies itself (HTTPOptions.BodyTimeout,
// Options.MaxFrame).
func httpServer(handler http.Handler, headerTimeout time.Duration) *http.Server {
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: headerTimeout,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
}

// listenHTTP serves srv's Streamable HTTP endpoint on addr and returns its
// URL and a function that stops it and ends every session. wrap, when not
// nil, wraps the endpoint's handler (a hostile mode).
func listenHTTP(srv *refserver.Server, addr string, remote bool, opts refserver.HTTPOptions, wrap func(http.Handler) http.Handler) (string, func(), error) {
	return listenHTTPDrain(srv, addr, remote, opts, wrap, 2*time.Second)
}

// listenHTTPDrain is listenHTTP whose stop waits up to drain for the
// requests in progress (and connections a client opened but has not used
// yet) before it closes every connection; with 0 it closes them at once.
func listenHTTPDrain(srv *refserver.Server, addr string, remote bool, opts refserver.HTTPOptions, wrap func(http.Handler) http.Handler, drain time.Duration) (string, func(), error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", nil, fmt.Errorf("--http %q: %w", addr, err)
	}
	if !remote && !loopbackHost(host) {
		return "", nil, fmt.Errorf("--http %q is not a loopback address; pass --listen-any to bind it (HTTP-5)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("--http: %w", err)
	}
	h := srv.HTTPHandler(opts)
	var handler http.Handler = h
	if wrap != nil {
		handler = wrap(h)
	}
	hs := httpServer(handler, readHeaderTimeout)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = hs.Serve(ln)
	}()
	stop := func() {
		h.Close()
		if drain > 0 {
			sctx, cancel := context.WithTimeout(context.Background(), drain)
			defer cancel()
			if err := hs.Shutdown(sctx); err == nil {
				<-done
				return
			}
		}
		_ = hs.Close()
		<-done
	}
	return "http://" + ln.Addr().String() + "/mcp", stop, nil
}

// serveHTTP runs the reference server over Streamable HTTP until ctx ends.
func (e Env) serveHTTP(ctx context.Context, srv *refserver.Server, addr string, remote bool, opts refserver.HTTPOptions, wrap func(http.Handler) http.Handler) (int, error) {
	url, stop, err := listenHTTP(srv, addr, remote, opts, wrap)
	if err != nil {
		return 0, fmt.Errorf("serve: %w", err)
	}
	fmt.Fprintln(e.Stdout, url)
	<-ctx.Done()
	stop()
	return 0, nil
}

// httpBound is how long a response of a case with deadline caseTimeout
// may keep its headers back, or stay silent once they are in: three
// quarters of the deadline, so that a server that never answers is named
// as such (transport.ErrStalled) before the case's own deadline ends the
// case with a vaguer error.
func httpBound(caseTimeout time.Duration) time.Duration { return caseTimeout * 3 / 4 }

// httpTarget is the runner's target for a Streamable HTTP endpoint: the
// URL given with --url, or the built-in reference server served in this
// process (--transport http), a server of its own for each case on a free
// loopback port, so that cases run side by side share nothing; it stops
// when the case is over.
func (e Env) httpTarget(o checkOptions) (target runner.Target, prof *profile.Profile, err error) {
	url, name, profileName := o.url, e.redactedURL(o.url), o.profile
	var set refserver.FaultSet
	if url == "" {
		set = refserver.FaultSet{}
		for _, f := range o.faults {
			fault, err := refserver.ParseFault(f)
			if err != nil {
				return target, nil, usagef(checkUsage, "--target-fault: %v", err)
			}
			set[fault] = true
		}
		name = "built-in reference server over HTTP (in this process, one per case on 127.0.0.1)"
		if len(o.faults) > 0 {
			name += " with faults " + strings.Join(o.faults, ", ")
		}
		if profileName == "" {
			profileName = profile.Reference
		}
	} else if profileName == "" && strings.Contains(url, "server-everything") {
		profileName = profile.ServerEverything
	}
	if profileName != "" {
		if prof, err = profile.Resolve(profileName); err != nil {
			return target, nil, usagef(checkUsage, "--profile: %v", err)
		}
	}
	maxBody := int64(o.maxFrame)
	redact := e.redact
	bound := httpBound(o.caseTimeout)
	dialURL := func(url string) func(ctx context.Context, log *chrono.Log) (transport.Conn, error) {
		return func(ctx context.Context, log *chrono.Log) (transport.Conn, error) {
			// The chronology redacts the headers' values wherever the
			// target echoes them: bodies, log messages, errors.
			log.SetRedactor(redact)
			return transport.DialHTTP(ctx, transport.HTTPConfig{URL: url, Log: log, Headers: o.header,
				MaxEvent: maxBody, StallTimeout: bound, HeaderTimeout: bound})
		}
	}
	target = runner.Target{Name: name, Transport: runner.TransportHTTP}
	if o.url != "" {
		target.Dial = dialURL(url)
		return target, prof, nil
	}
	version := e.version()
	target.PerCase = func(context.Context) (func(context.Context, *chrono.Log) (transport.Conn, error), func(), error) {
		srv := refserver.New(refserver.Options{Faults: set, Version: version})
		// The case and its teardown are over when the server stops:
		// nothing is left to drain.
		url, stop, err := listenHTTPDrain(srv, "127.0.0.1:0", false, refserver.HTTPOptions{}, nil, 0)
		if err != nil {
			return nil, nil, err
		}
		return dialURL(url), stop, nil
	}
	return target, prof, nil
}
