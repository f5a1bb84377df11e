//go:build unix

package transport

import (
	"bytes"
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
	// own chronology and in the chronology of a connection its lines are
	// told to belong to (Served.Attach).
	ServedStderrChannel = "server stderr"
	// MinAttributableSessionID is the length of the shortest
	// Mcp-Session-Id by which Served.Attach tells a stderr line to belong
	// to a connection: a shorter ID ("1", "abc") may well occur in lines
	// about anything else. The spec asks for globally unique,
	// cryptographically secure IDs; a UUID has 36 characters.
	MinAttributableSessionID = 16
	// servedSessionLines and servedSessionBytes are the budget of the
	// lines naming its session that one connection's chronology records;
	// past it they are counted, and the last StderrTail recorded when the
	// connection closes, as the stdio transport bounds a connection's
	// stderr.
	servedSessionLines = 200
	servedSessionBytes = 64 << 10
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
// itself, runs for the whole run and stops at the end.
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
// Its own chronology is the one record of everything it printed. The
// server is shared by every connection of the run, several at a time, so
// a line cannot in general be told to belong to one of them; Attach
// gives a connection's chronology the lines that name its session, and a
// count of the others.
type Served struct {
	*child

	cfg     ServedConfig
	display string

	mu       sync.Mutex
	attached map[*attachment]struct{}
	tail     []string // the last stderr lines, sanitised

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
		cfg:      cfg,
		display:  display,
		attached: map[*attachment]struct{}{},
	}
	s.child = newChild(cmd, outR, cfg.Log, ServedStderrChannel, cfg.MaxStderrLine, cfg.MaxStderrLines, cfg.MaxStderrBytes)
	s.onStderr = s.keepTail
	s.onStderrLine = s.attribute
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

// keepTail is the child's onStderr: it keeps the last recorded lines, as
// the server's own chronology has them (redacted), for a start-up error.
func (s *Served) keepTail(ev chrono.Event) {
	if ev.Kind != chrono.KindStderr {
		return
	}
	line := chrono.Sanitize(chrono.Clip(string(ev.Raw), servedTailLine), false)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.tail) == servedTailLines {
		s.tail = append(s.tail[:0], s.tail[1:]...)
	}
	s.tail = append(s.tail, line)
}

// attribute is the child's onStderrLine: it shows every line read, within
// the server's own budget or past it, to every attached connection, and
// records it once in each chronology of a connection whose session it
// names.
func (s *Served) attribute(raw []byte, size int) {
	s.mu.Lock()
	if len(s.attached) == 0 {
		s.mu.Unlock()
		return
	}
	atts := make([]*attachment, 0, len(s.attached))
	for a := range s.attached {
		atts = append(atts, a)
	}
	s.mu.Unlock()
	recorded := make(map[*chrono.Log]bool, len(atts))
	for _, a := range atts {
		if a.see(raw, size) && !recorded[a.log] {
			recorded[a.log] = true
			a.log.Append(stderrEvent(raw, size))
		}
	}
}

// stderrEvent is a stderr line of the server as a chronology event.
func stderrEvent(raw []byte, size int) chrono.Event {
	return chrono.Event{Dir: chrono.In, Channel: ServedStderrChannel, Kind: chrono.KindStderr, Raw: raw, Size: size, Truncated: len(raw) < size}
}

// attachment is one connection's view of the server's stderr (Attach).
type attachment struct {
	log     *chrono.Log
	session func() string

	mu       sync.Mutex
	done     bool
	printed  int64        // lines read while attached
	named    int64        // of those, lines naming the connection's session
	hadID    bool         // the connection had an attributable session ID
	budget   stderrBudget // of the named lines recorded in log
	recorded int64        // named lines within the budget
}

// see counts a line read while the connection is attached, and reports
// whether the line names the connection's session ID (as it is when the
// line is read) and is within the connection's budget, to be recorded in
// its chronology.
func (a *attachment) see(raw []byte, size int) bool {
	id := a.session()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done {
		return false
	}
	a.printed++
	if len(id) < MinAttributableSessionID {
		return false
	}
	a.hadID = true
	if !bytes.Contains(raw, []byte(id)) {
		return false
	}
	a.named++
	if !a.budget.take(raw, size) {
		return false
	}
	a.recorded++
	return true
}

// Attach shows the server's stderr lines read from now on to a
// connection, until detach is called: a line that names the connection's
// session ID, as session returns it when the line is read (the
// connection's Mcp-Session-Id, "" before it has one), is recorded in log,
// within a budget of its own; an ID shorter than MinAttributableSessionID
// names nothing. The other lines are in the server's own chronology
// only: the server is shared, and while several connections are open a
// line that names none of them cannot be told to belong to any.
//
// detach records in log one note with the count of lines the server
// printed while the connection was attached and how many of them named
// its session, and the last lines past the budget. A chronology attached
// twice (a case with two connections) gets a line that names both
// sessions once.
func (s *Served) Attach(log *chrono.Log, session func() string) (detach func()) {
	a := &attachment{log: log, session: session, budget: stderrBudget{lines: servedSessionLines, bytes: servedSessionBytes}}
	s.mu.Lock()
	s.attached[a] = struct{}{}
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			delete(s.attached, a)
			s.mu.Unlock()
			a.mu.Lock()
			a.done = true
			a.mu.Unlock()
			a.report()
		})
	}
}

// report records in the connection's chronology what it saw of the
// server's stderr: nothing when the server printed nothing while it was
// attached.
func (a *attachment) report() {
	if a.printed == 0 {
		return
	}
	const rest = "the others are left to the run's record of the server's output"
	text := fmt.Sprintf("the served server printed %s while this connection was open; ", lines(a.printed))
	var tail []tailLine
	switch {
	case !a.hadID:
		text += "it had no session ID long enough to tell its own lines by: they are left to the run's record of the server's output"
	case a.named == 0:
		text += "none names its session ID: they are left to the run's record of the server's output"
	case a.budget.skipped == 0:
		text += fmt.Sprintf("the %d that name its session ID are recorded here; %s", a.named, rest)
	default:
		tail = a.budget.lastLines()
		text += fmt.Sprintf("%d name its session ID: the first %d are recorded here and the last %d follow (a budget of %d lines or %d bytes); %s",
			a.named, a.recorded, len(tail), servedSessionLines, servedSessionBytes, rest)
	}
	a.log.Harness(chrono.KindNote, ServedStderrChannel, text)
	for _, l := range tail {
		a.log.Append(stderrEvent(l.raw, l.size))
	}
}

// lines is "1 stderr line" or "n stderr lines".
func lines(n int64) string {
	if n == 1 {
		return "1 stderr line"
	}
	return fmt.Sprintf("%d stderr lines", n)
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
