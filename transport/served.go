//go:build unix

package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
)

// Defaults of ServedConfig.
const (
	// DefaultStartTimeout bounds the wait for a started HTTP server's
	// URL to answer: long enough for "go run" or node to start on a
	// loaded machine, short enough that a server that never listens is
	// named within a CI step's patience.
	DefaultStartTimeout = 30 * time.Second
	// ServedStderrChannel names the chronology channel of a started HTTP
	// server's stderr (and stdout, merged into it as with 2>&1), in its
	// own chronology and in each case's.
	ServedStderrChannel = "server stderr"
	// servedTailLines is how many of the last stderr lines a start-up
	// error quotes.
	servedTailLines = 5
	// servedTailLine bounds the bytes quoted of one of those lines.
	servedTailLine = 200
	// readyProbeMax bounds one readiness probe (a TCP connect and an
	// HTTP request), and readyBackoffMax the wait between two.
	readyProbeMax   = 2 * time.Second
	readyBackoffMax = 500 * time.Millisecond
)

// ErrServerNotReady is matched (errors.Is) by the error of StartServed
// when the server exited, or its URL did not answer, before the start
// timeout. The error names the command and quotes its last stderr lines.
var ErrServerNotReady = errors.New("the HTTP server did not come up")

// ServedConfig configures a Streamable HTTP server the harness starts
// itself, runs for the whole run and stops at the end (issue 12.5).
type ServedConfig struct {
	// Argv, Shell, Env and Dir are the command, as in StdioConfig.
	Argv  []string
	Shell bool
	Env   []string
	Dir   string
	// URL is the endpoint the server serves. StartServed returns once
	// it answers an HTTP request (with any status). Required.
	URL string
	// Log is the server's own chronology: its process events and every
	// stderr line. Required.
	Log *chrono.Log
	// StartTimeout bounds the wait for URL to answer;
	// DefaultStartTimeout if zero.
	StartTimeout time.Duration
	// TermGrace is the wait after SIGTERM before SIGKILL;
	// DefaultTermGrace if zero.
	TermGrace time.Duration
	// MaxStderrLine, MaxStderrLines and MaxStderrBytes are the stderr
	// budget of the server's whole life, as in StdioConfig.
	MaxStderrLine, MaxStderrLines, MaxStderrBytes int
}

// Served is an HTTP server running as a child process of the harness, in
// a process group of its own, with the stdio transport's process handling:
// its stderr is read continuously within a budget and recorded in its own
// chronology, and Close stops it with the signal rungs of the shutdown
// ladder (SIGTERM, wait, SIGKILL to the whole group) and sweeps the group.
//
// Attach adds a case's chronology: every stderr line that arrives while
// the case is attached is recorded there too, so that the reader of a
// case sees what the server said while it ran.
type Served struct {
	*child

	cfg     ServedConfig
	display string

	mu      sync.Mutex
	readers map[*chrono.Log]int // attached chronologies, with how many times
	tail    []string            // the last stderr lines, sanitised

	closeOnce   sync.Once
	exitedEarly bool
	termAt      time.Time
	td          Teardown
}

// StartServed starts the server and returns once cfg.URL answers. Its
// process is probed with backoff: a TCP connect to the URL's host and
// port, then an HTTP GET of the URL, where any response counts. If the
// server exits first, or StartTimeout passes, or ctx ends, the server is
// stopped (nothing of it is left running) and the error, wrapping
// ErrServerNotReady, names the command and quotes its last stderr lines.
//
// ctx bounds the start-up only: once the URL has answered, the server
// runs until Close, so that an interrupted run (Ctrl-C, a run timeout)
// still stops it with the ladder and grades how it went. Close must be
// called; Kill is there for emergencies.
func StartServed(ctx context.Context, cfg ServedConfig) (*Served, error) {
	if cfg.Log == nil {
		return nil, errors.New("transport: ServedConfig.Log is required")
	}
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("transport: %q is not an http:// or https:// URL to wait for", cfg.URL)
	}
	display, err := commandLine(ctx, cfg.Argv, cfg.Shell, "HTTP")
	if err != nil {
		return nil, err
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = DefaultStartTimeout
	}
	if cfg.TermGrace <= 0 {
		cfg.TermGrace = DefaultTermGrace
	}
	stderrDefaults(&cfg.MaxStderrLine, &cfg.MaxStderrLines, &cfg.MaxStderrBytes)
	cmd, err := prepareCommand(cfg.Argv, cfg.Shell, cfg.Env, cfg.Dir, display)
	if err != nil {
		return nil, err
	}
	// Its stdout joins its stderr, as with 2>&1: an HTTP server's stdout
	// is logging too, and a pipe nobody reads would block it. Its stdin
	// is /dev/null.
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("transport: stderr pipe: %w", err)
	}
	cmd.Stdout, cmd.Stderr = outW, outW
	if err := cmd.Start(); err != nil {
		_, _ = outR.Close(), outW.Close()
		return nil, startError(display, err)
	}
	_ = outW.Close()

	s := &Served{
		cfg:     cfg,
		display: display,
		readers: map[*chrono.Log]int{},
	}
	s.child = newChild(cmd, outR, cfg.Log, ServedStderrChannel, cfg.MaxStderrLine, cfg.MaxStderrLines, cfg.MaxStderrBytes)
	s.onStderr = s.fanOut
	s.logStarted(display)
	s.run(context.WithoutCancel(ctx))

	if err := s.awaitReady(ctx, u); err != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.TermGrace+2*killWait)
		defer cancel()
		td := s.Close(cctx)
		if td.Err != nil {
			err = errors.Join(err, td.Err)
		}
		return nil, fmt.Errorf("transport: %s: %w%s", display, err, s.tailText())
	}
	return s, nil
}

// awaitReady probes u with backoff until it answers, the server exits,
// the start timeout passes or ctx ends.
func (s *Served) awaitReady(ctx context.Context, u *url.URL) error {
	start := time.Now()
	deadline := start.Add(s.cfg.StartTimeout)
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), map[string]string{"http": "80", "https": "443"}[u.Scheme])
	}
	client := &http.Client{
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport:     &http.Transport{DisableKeepAlives: true},
	}
	defer client.CloseIdleConnections()
	wait := 10 * time.Millisecond
	var last string // why the last probe failed
	for attempt := 1; ; attempt++ {
		status, err := s.probe(ctx, client, addr, u.String(), deadline)
		if err == nil {
			s.log.Harness(chrono.KindCheckpoint, procChannel, fmt.Sprintf(
				"%s answered HTTP %d after %v (probe %d): the server is up", u.Redacted(), status, time.Since(start).Round(time.Millisecond), attempt))
			return nil
		}
		last = err.Error()
		t := time.NewTimer(min(wait, max(time.Until(deadline), 0)))
		select {
		case <-s.exited:
			t.Stop()
			code, sig, _ := s.ExitStatus()
			how := fmt.Sprintf("exited with code %d", code)
			if sig != "" {
				how = "was ended by signal " + sig
			}
			return fmt.Errorf("%w: it %s before %s answered", ErrServerNotReady, how, u.Redacted())
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w: stopped waiting for %s to answer: %w", ErrServerNotReady, u.Redacted(), context.Cause(ctx))
		case <-t.C:
		}
		if !time.Now().Before(deadline) {
			s.log.Harness(chrono.KindDeadline, procChannel, fmt.Sprintf("%s did not answer within %v: %s", u.Redacted(), s.cfg.StartTimeout, last))
			return fmt.Errorf("%w: %s did not answer within %v (last try: %s)", ErrServerNotReady, u.Redacted(), s.cfg.StartTimeout, last)
		}
		wait = min(2*wait, readyBackoffMax)
	}
}

// probe tries addr with a TCP connect and then the endpoint with an HTTP
// GET, each bounded by readyProbeMax and the deadline. Any HTTP response
// counts as an answer: the endpoint may well refuse a GET without a
// session (405, 400), which still proves it listens.
func (s *Served) probe(ctx context.Context, client *http.Client, addr, endpoint string, deadline time.Time) (int, error) {
	if d := time.Now().Add(readyProbeMax); d.Before(deadline) {
		deadline = d
	}
	pctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(pctx, "tcp", addr)
	if err != nil {
		return 0, fmt.Errorf("connecting to %s: %w", addr, cause(err))
	}
	_ = c.Close()
	req, err := http.NewRequestWithContext(pctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("GET %s: %w", endpoint, cause(err))
	}
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// cause is what err wraps, if anything: "connect: connection refused"
// rather than the whole "dial tcp …" chain, which repeats the address.
func cause(err error) error {
	if u := errors.Unwrap(err); u != nil {
		return u
	}
	return err
}

// fanOut is the child's onStderr: it keeps the last lines for a start-up
// error and records each event in every attached chronology.
func (s *Served) fanOut(ev chrono.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ev.Kind == chrono.KindStderr {
		line := chrono.Sanitize(chrono.Clip(string(ev.Raw), servedTailLine), false)
		if len(s.tail) == servedTailLines {
			s.tail = append(s.tail[:0], s.tail[1:]...)
		}
		s.tail = append(s.tail, line)
	}
	for log := range s.readers {
		log.Append(chrono.Event{Dir: ev.Dir, Channel: ev.Channel, Kind: ev.Kind, Raw: ev.Raw, Size: ev.Size, Truncated: ev.Truncated, Text: ev.Text})
	}
}

// Attach records every stderr line of the server that arrives from now on
// in log too, until detach is called. A chronology attached twice (a case
// with two sessions) gets each line once, until both detach.
func (s *Served) Attach(log *chrono.Log) (detach func()) {
	s.mu.Lock()
	s.readers[log]++
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.readers[log]--; s.readers[log] <= 0 {
				delete(s.readers, log)
			}
		})
	}
}

// LastStderr returns the server's last stderr lines (at most 5),
// sanitised and clipped, oldest first.
func (s *Served) LastStderr() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.tail...)
}

// tailText is the last stderr lines as the end of an error line.
func (s *Served) tailText() string {
	lines := s.LastStderr()
	if len(lines) == 0 {
		return "; it wrote nothing on stderr"
	}
	quoted := make([]string, len(lines))
	for i, l := range lines {
		quoted[i] = fmt.Sprintf("%q", l)
	}
	return "; its last stderr lines: " + strings.Join(quoted, " | ")
}

// Command is the server's command line as it was run.
func (s *Served) Command() string { return s.display }

// Close stops the server with the signal rungs of the shutdown ladder:
// SIGTERM to its process group, up to TermGrace for it to exit, then
// SIGKILL (at once if ctx ends). It then kills whatever is left of the
// group, waits for the group to be gone, and lets stderr run dry, so that
// every line is in the chronology when it returns. Teardown.ExitedAfter
// is StepSIGTERM for a server that stopped when asked, StepSIGKILL for
// one that had to be killed, and StepNone for one that had exited before
// Close (its exit code says how). Close is safe to call more than once
// and from several goroutines; every call returns the same Teardown.
func (s *Served) Close(ctx context.Context) Teardown {
	s.closeOnce.Do(func() {
		select {
		case <-s.exited:
			s.exitedEarly = true
		default:
		}
		s.td = s.teardown(ctx, s.exitedEarly, func(ctx context.Context) (Step, error) {
			s.termAt = time.Now()
			return s.signalRungs(ctx, StepNone, s.cfg.TermGrace)
		}, func() time.Time { return s.termAt }, s.drainStderrOut)
	})
	<-s.closed
	return s.td
}
