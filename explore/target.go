package explore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/transport"
)

// Dial opens the connection of one session, recording every frame into
// log. ctx bounds the connection's whole life.
type Dial func(ctx context.Context, log *chrono.Log) (transport.Conn, error)

// TargetInfo describes a target in reports and replay files.
type TargetInfo struct {
	// Name is how reports name the target (a command line, a URL).
	Name string `json:"name"`
	// Transport is TransportInProcess, TransportStdio or TransportHTTP.
	Transport string `json:"transport"`
	// BuiltIn is set for the reference server run by the explorer itself;
	// Faults are then the faults it was started with, so that a replay
	// file can start the same server again.
	BuiltIn bool     `json:"builtIn,omitempty"`
	Faults  []string `json:"faults,omitempty"`
}

// Target is a server the explorer runs against.
type Target interface {
	// Info describes the target.
	Info() TargetInfo
	// Trial prepares the server side of one trial and returns how to open
	// its sessions, and a function that ends what Trial started. The
	// sessions of one trial may share a server; different trials of the
	// built-in server never do, so that what one trial does cannot change
	// what another sees and a trial's plan gives the same history however
	// trials are scheduled.
	Trial(ctx context.Context) (Dial, func(), error)
}

// Remote is a target whose every session is opened by dial, in every
// trial: a stdio command (one process per session) or a URL.
func Remote(info TargetInfo, dial Dial) Target { return remote{info, dial} }

type remote struct {
	info TargetInfo
	dial Dial
}

func (r remote) Info() TargetInfo { return r.info }
func (r remote) Trial(context.Context) (Dial, func(), error) {
	return r.dial, func() {}, nil
}

// BuiltInOptions configures the built-in reference server.
type BuiltInOptions struct {
	// Transport is TransportInProcess (each session a pair of pipes to a
	// session of the server, in this process) or TransportHTTP (the
	// server's Streamable HTTP endpoint on a loopback port of this
	// process).
	Transport string
	// Faults start the server with deliberate defects (refserver.Fault).
	Faults []refserver.Fault
	// NoTasks starts it without the tasks capability.
	NoTasks bool
	// FaultQueried, when set, is told each time a trial's server asks
	// whether a fault is on, which it does once a request is one the
	// fault acts on (refserver.Options.FaultQueried).
	FaultQueried func(refserver.Fault)
}

// BuiltIn is the reference server run by the explorer: a fresh
// refserver.Server for every trial. Close it when done.
type BuiltIn struct {
	opts BuiltInOptions
	info TargetInfo

	// Streamable HTTP only: one listener for the whole run, routing
	// /trial/N/mcp to the endpoint of trial N.
	base   string
	client *http.Client
	hs     *http.Server
	served chan struct{}
	mu     sync.Mutex
	trials map[int]*refserver.HTTPHandler
	next   int
}

// ErrTransport reports a transport the built-in server cannot use.
var ErrTransport = errors.New("explore: unknown transport")

// NewBuiltIn starts the built-in target.
func NewBuiltIn(opts BuiltInOptions) (*BuiltIn, error) {
	b := &BuiltIn{opts: opts, trials: map[int]*refserver.HTTPHandler{}}
	b.info = TargetInfo{Name: "built-in reference server", Transport: opts.Transport, BuiltIn: true}
	for _, f := range opts.Faults {
		b.info.Faults = append(b.info.Faults, string(f))
	}
	slices.Sort(b.info.Faults)
	switch opts.Transport {
	case TransportInProcess:
		b.info.Name += " in process"
	case TransportHTTP:
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("explore: listening for the built-in server: %w", err)
		}
		b.base = "http://" + ln.Addr().String()
		b.info.Name += " over HTTP at " + b.base
		// Sessions keep several SSE streams open at once; enough idle
		// connections are kept that finished ones are reused.
		b.client = &http.Client{Transport: &http.Transport{MaxIdleConns: 512, MaxIdleConnsPerHost: 512, IdleConnTimeout: 30 * time.Second}}
		b.hs = &http.Server{Handler: http.HandlerFunc(b.route), ReadHeaderTimeout: 10 * time.Second}
		b.served = make(chan struct{})
		go func() {
			defer close(b.served)
			_ = b.hs.Serve(ln)
		}()
	default:
		return nil, fmt.Errorf("%w %q for the built-in server (inprocess or http)", ErrTransport, opts.Transport)
	}
	if len(b.info.Faults) > 0 {
		b.info.Name += " with faults " + strings.Join(b.info.Faults, ", ")
	}
	return b, nil
}

// Info describes the target.
func (b *BuiltIn) Info() TargetInfo { return b.info }

func (b *BuiltIn) server() *refserver.Server {
	set := refserver.FaultSet{}
	for _, f := range b.opts.Faults {
		set[f] = true
	}
	return refserver.New(refserver.Options{Faults: set, NoTasks: b.opts.NoTasks, FaultQueried: b.opts.FaultQueried})
}

// Trial starts a fresh server for one trial.
func (b *BuiltIn) Trial(context.Context) (Dial, func(), error) {
	srv := b.server()
	if b.opts.Transport == TransportInProcess {
		dial := func(ctx context.Context, log *chrono.Log) (transport.Conn, error) {
			conn, _ := srv.InProcess(ctx, transport.StreamConfig{Log: log})
			return conn, nil
		}
		return dial, func() {}, nil
	}
	h := srv.HTTPHandler(refserver.HTTPOptions{})
	b.mu.Lock()
	b.next++
	n := b.next
	b.trials[n] = h
	b.mu.Unlock()
	url := b.base + "/trial/" + strconv.Itoa(n) + "/mcp"
	client := b.client
	dial := func(ctx context.Context, log *chrono.Log) (transport.Conn, error) {
		return transport.DialHTTP(ctx, transport.HTTPConfig{URL: url, Log: log, Client: client})
	}
	end := func() {
		b.mu.Lock()
		delete(b.trials, n)
		b.mu.Unlock()
		h.Close()
	}
	return dial, end, nil
}

// route sends /trial/N/mcp to trial N's endpoint.
func (b *BuiltIn) route(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/trial/")
	num, tail, _ := strings.Cut(rest, "/")
	n, err := strconv.Atoi(num)
	if !ok || err != nil || tail != "mcp" {
		http.NotFound(w, r)
		return
	}
	b.mu.Lock()
	h := b.trials[n]
	b.mu.Unlock()
	if h == nil {
		http.NotFound(w, r)
		return
	}
	h.ServeHTTP(w, r)
}

// Close stops the built-in server.
func (b *BuiltIn) Close() {
	if b.hs == nil {
		return
	}
	b.mu.Lock()
	all := make([]*refserver.HTTPHandler, 0, len(b.trials))
	for _, h := range b.trials {
		all = append(all, h)
	}
	b.trials = map[int]*refserver.HTTPHandler{}
	b.mu.Unlock()
	for _, h := range all {
		h.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := b.hs.Shutdown(ctx); err != nil {
		_ = b.hs.Close()
	}
	<-b.served
	b.client.CloseIdleConnections()
}
