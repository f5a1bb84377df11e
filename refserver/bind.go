package refserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// The reference server's listen policy: its Streamable HTTP endpoint binds
// a loopback address only, unless the operator opts in to any other
// (HTTP-5: servers running locally SHOULD bind only to localhost). The
// command line's --listen-any is that opt-in (BindOptions.Any).

// ErrNotLoopback is matched (errors.Is) by the error of ListenHTTP and
// CheckBind for an address that is not loopback, without BindOptions.Any.
var ErrNotLoopback = errors.New("not a loopback address")

// DefaultHeaderTimeout bounds the time a client may take to send a
// request's headers, so that slow-header clients cannot hold connections
// open.
const DefaultHeaderTimeout = 10 * time.Second

// BindOptions say how ListenHTTP serves the endpoint.
type BindOptions struct {
	// Any allows an address that is not loopback (0.0.0.0, a LAN
	// address, ":port").
	Any bool
	// HTTP configures the endpoint (Server.HTTPHandler).
	HTTP HTTPOptions
	// Wrap, when not nil, wraps the endpoint's handler (a hostile mode).
	Wrap func(http.Handler) http.Handler
	// Drain is how long Endpoint.Close waits for the requests in progress
	// (and connections a client opened but has not used yet) before it
	// closes every connection; 0 closes them at once.
	Drain time.Duration
	// HeaderTimeout bounds a request's headers; DefaultHeaderTimeout if
	// zero.
	HeaderTimeout time.Duration
}

// loopbackHost reports whether host names the loopback interface.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckBind applies the listen policy to addr ("host:port"): nil for a
// loopback host, or for any host when anyHost is set; an error matching
// ErrNotLoopback otherwise.
func CheckBind(addr string, anyHost bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q: %w", addr, err)
	}
	if !anyHost && !loopbackHost(host) {
		return fmt.Errorf("%q is %w; binding it needs an explicit opt-in (HTTP-5)", addr, ErrNotLoopback)
	}
	return nil
}

// NewHTTPServer is the http.Server of the reference server's endpoint. The
// headers of a request must arrive within headerTimeout and be at most
// 64 KiB; an idle keep-alive connection is closed after two minutes. There
// is no ReadTimeout or WriteTimeout, which would cut SSE streams: the
// endpoint bounds its POST bodies itself (HTTPOptions.BodyTimeout,
// Options.MaxFrame).
func NewHTTPServer(handler http.Handler, headerTimeout time.Duration) *http.Server {
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: headerTimeout,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
}

// Endpoint is a Streamable HTTP endpoint of the reference server that
// ListenHTTP started.
type Endpoint struct {
	// URL is the endpoint's MCP URL, http://HOST:PORT/mcp.
	URL   string
	once  sync.Once
	close func()
}

// Close stops the endpoint and ends every session (see BindOptions.Drain);
// later calls do nothing.
func (ep *Endpoint) Close() { ep.once.Do(ep.close) }

// ListenHTTP serves s's Streamable HTTP endpoint on addr, under the listen
// policy (CheckBind), until Close.
func (s *Server) ListenHTTP(addr string, o BindOptions) (*Endpoint, error) {
	if err := CheckBind(addr, o.Any); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	h := s.HTTPHandler(o.HTTP)
	var handler http.Handler = h
	if o.Wrap != nil {
		handler = o.Wrap(h)
	}
	timeout := o.HeaderTimeout
	if timeout <= 0 {
		timeout = DefaultHeaderTimeout
	}
	hs := NewHTTPServer(handler, timeout)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = hs.Serve(ln)
	}()
	drain := o.Drain
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
	return &Endpoint{URL: "http://" + ln.Addr().String() + "/mcp", close: stop}, nil
}
