package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/judge"
	"github.com/mcpflight/mcpflight/monitor"
	"github.com/mcpflight/mcpflight/report"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/telemetry"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/watch"
	"github.com/mcpflight/mcpflight/watch/observe"
)

const watchUsage = `Usage: mcpflight watch [flags] -- COMMAND [ARGS...]
       mcpflight watch [flags] --target URL [--listen ADDR]

Sits between a real host (Claude Code, Claude Desktop, Cursor, the MCP
Inspector, an agent) and a real MCP server, forwards every byte unchanged,
and judges the live conversation in both directions with the rules
"mcpflight judge" applies to a recording: the host's cancels, IDs and
progress tokens, the server's responses, progress, tasks and logs.

Over stdio, put "mcpflight watch --" before the server's command where the
host starts it, e.g. in a host's JSON configuration:
    "command": "mcpflight",
    "args": ["watch", "--", "npx", "-y", "@modelcontextprotocol/server-everything"]
watch starts the server in a process group of its own, passes its stdin,
stdout and stderr through byte for byte, forwards the signals the host
sends, runs the stdio shutdown ladder when the host closes stdin, and
exits with the server's exit status (127 when the command is not found,
as a shell would). It writes nothing on stdout but the server's bytes.

Over Streamable HTTP, watch is a reverse proxy: point the host at the URL
it prints (the target's path on a local port) and stop it with Ctrl-C; it
then prints the report and exits with the report's code, as judge does.

Each watched conversation is recorded in a folder of its own, created
under --out and never reused: chronology.jsonl as it happens, findings.txt
with one line per finding as it is made, and, when the conversation ends,
report.json, report.html and junit.xml. Each finding is also printed on
stderr as it is made ("mcpflight watch: fail server/…"; --log FILE appends
them to FILE instead, -q prints none).
"mcpflight judge FOLDER" judges a recording again, "mcpflight show
FOLDER/chronology.jsonl" draws it. Credential headers, and the values of
credential-looking environment variables (…KEY, …TOKEN, …SECRET) over
stdio, are redacted in everything written; the conversation is never
changed.

Flags:
  --target URL         the Streamable HTTP server to proxy to (--url, as in
                       check, names it too)
  --listen ADDR        where the proxy listens (default 127.0.0.1:0, a free
                       port of the loopback interface)
  --listen-any         allow a listen address other than a loopback one (the
                       proxy passes on credentials and records them redacted)
  --redact-header NAME also redact this header's value (repeatable), besides
                       Authorization, Cookie and names with auth, token, key,
                       secret, passw or credential
  --out DIR            where each conversation's folder is created (default
                       $XDG_STATE_HOME/mcpflight/watch, else
                       ~/.local/state/mcpflight/watch)
  --otlp-endpoint URL  also export the conversation's spans and metrics to an
                       OTLP/HTTP collector (e.g. http://localhost:4318)
  --observer PROFILE   read the observer the profile names (docs/observer.md)
                       when the host starts a tools/call and for the grace
                       after it cancels one, to judge whether the cancelled
                       handler stopped, which the wire cannot show; each read
                       is a request of mcpflight's own (over stdio sent
                       between the host's frames, its answer kept from it)
  --side SIDE          judge the server, the client (host) or both (default)
  --protocol REV       the revision to judge a session under when it shows
                       none: 2025-11-25 (default) or 2026-07-28
  --window D           the crossing window bound (default 100ms)
  --grace D            how long a task may work on after its host stopped
                       waiting or had it cancelled before an alert, and a
                       cancelled handler may run on (--observer) (default 5s)
  --strict             count warns (broken SHOULDs) as fails
  --log FILE           append the findings to FILE as they are made, instead
                       of printing them on stderr
  -q                   print no finding on stderr (findings.txt has them)
`

// watchOptions are watch's flags.
type watchOptions struct {
	judge        judgeFlags
	url          string
	stdio        string
	listen       string
	listenAny    bool
	redactHeader stringList
	out          string
	otlp         string
	observer     string
	log          string
	strict       bool
	quiet        bool
}

// watchLinger is how long the recording may take to catch up once the
// conversation has ended, and telemetry to send what it holds.
const watchLinger = 10 * time.Second

// judgeLag is how far behind the wall clock the judge's clock is kept
// between events, so that the pieces still queued for the recorder
// (microseconds' worth) are judged before a silence that ends after
// them: a silence is judged by a grace of seconds.
const judgeLag = time.Second

func (e Env) watch(ctx context.Context, args []string) (int, error) {
	var o watchOptions
	fs := flag.NewFlagSet("watch", flag.ContinueOnError)
	o.judge.register(fs)
	fs.StringVar(&o.url, "target", "", "")
	fs.StringVar(&o.url, "url", "", "")
	fs.StringVar(&o.stdio, "stdio", "", "")
	fs.StringVar(&o.listen, "listen", "", "")
	fs.BoolVar(&o.listenAny, "listen-any", false, "")
	fs.Var(&o.redactHeader, "redact-header", "")
	fs.StringVar(&o.out, "out", "", "")
	fs.StringVar(&o.otlp, "otlp-endpoint", "", "")
	fs.StringVar(&o.observer, "observer", "", "")
	fs.StringVar(&o.log, "log", "", "")
	fs.BoolVar(&o.strict, "strict", false, "")
	fs.BoolVar(&o.quiet, "q", false, "")
	argv, done, err := e.parseWith(fs, watchUsage, args, false)
	if done || err != nil {
		return 0, err
	}
	if o.stdio != "" {
		if len(argv) > 0 {
			return 0, usagef(watchUsage, "--stdio and a command after -- name two servers; pass one")
		}
		if argv, err = transport.SplitArgs(o.stdio); err != nil {
			return 0, usagef(watchUsage, "--stdio: %v", err)
		}
	}
	switch {
	case o.url == "" && len(argv) == 0:
		return 0, usagef(watchUsage, "watch needs a server: -- COMMAND [ARGS...] (stdio) or --target URL (Streamable HTTP)")
	case o.url != "" && len(argv) > 0:
		return 0, usagef(watchUsage, "--target and a command name two servers; pass one")
	case o.url == "" && (o.listen != "" || o.listenAny || len(o.redactHeader) > 0):
		return 0, usagef(watchUsage, "--listen, --listen-any and --redact-header are for the HTTP proxy (--target)")
	}
	if err := checkURL(o.url, watchUsage); err != nil {
		return 0, err
	}
	mo, err := o.judge.monitorOptions(watchUsage)
	if err != nil {
		return 0, err
	}
	obs, err := watchObserver(o.observer)
	if err != nil {
		return 0, err
	}
	transportName, name := "stdio", conversationName(argv)
	var target *url.URL
	if o.url != "" {
		transportName = "http"
		target, _ = url.Parse(o.url)
		name = target.Hostname()
	}

	// The recording's redactor is the report files' too: the proxy
	// teaches it the credentials it sees.
	e.redact = chrono.NewRedactor()
	if transportName == "stdio" {
		e.redact.Add(credentialValues(os.Environ())...)
	}
	root, err := e.watchRoot(o.out)
	if err != nil {
		return 0, err
	}
	dir, err := newConversationDir(root, time.Now(), name)
	if err != nil {
		return 0, err
	}
	capture, err := os.OpenFile(filepath.Join(dir, captureName), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	defer capture.Close()
	findings, err := os.OpenFile(filepath.Join(dir, findingsName), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return 0, err
	}
	defer findings.Close()

	start := time.Now()
	live := &liveFindings{file: findings, redact: e.redact}
	switch {
	case o.log != "":
		logFile, err := os.OpenFile(o.log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return 0, fmt.Errorf("--log: %w", err)
		}
		defer logFile.Close()
		live.stderr, live.stamp, live.prefix = logFile, true, name+" "
	case !o.quiet:
		live.stderr, live.prefix = e.Stderr, "mcpflight watch: "
	}
	var exporter *telemetry.Exporter
	if o.otlp != "" {
		exporter, err = telemetry.New(telemetry.Config{Endpoint: o.otlp, Start: start, Version: e.version(),
			Clock: func() time.Duration { return time.Since(start) }})
		if err != nil {
			return 0, usagef(watchUsage, "--otlp-endpoint: %v", err)
		}
		mo.Observe = exporter.Observe
		live.exporter = exporter
	}
	displayTarget := o.url
	if transportName == "stdio" {
		displayTarget = transport.QuoteArgs(argv)
	}
	// The observer's poller learns of the conversation from the judge,
	// and records its readings through the recorder the judge reads.
	var poller *observe.Poller
	var inject *watch.Injector
	var hostRevision atomic.Pointer[string]
	if obs != nil {
		exported := mo.Observe
		mo.Observe = func(a monitor.Activity) {
			if a.Side == monitor.Client {
				hostRevision.Store(&a.Revision)
			}
			poller.Observe(a)
			if exported != nil {
				exported(a)
			}
		}
	}
	jdg := judge.New(judge.Options{Target: e.redact.String(displayTarget), Transport: transportName, Monitor: mo, Strict: o.strict, Emit: live.finding})
	rec := watch.NewRecorder(watch.RecorderConfig{JSONL: capture, Sinks: []watch.Sink{jdg}, Redactor: e.redact, Start: start})
	fmt.Fprintf(e.Stderr, "mcpflight watch: recording to %s\n", chrono.Sanitize(dir, false))
	var pollerDone sync.WaitGroup
	stopPoller := func() {}
	if obs != nil {
		pctx, cancelPoller := context.WithCancel(context.WithoutCancel(ctx))
		cfg := observe.Config{Note: rec.Note, Grace: mo.Grace}
		closeReader := func() {}
		if transportName == "stdio" {
			inject = watch.NewInjector()
			cfg.Read = injectedObserverReader(inject, obs, hostRevision.Load, e.version())
			cfg.AtFirstCall, cfg.Where = true, injectedWhere
		} else {
			cfg.Read, closeReader = observerReader(pctx, target, obs)
		}
		poller = observe.New(cfg)
		pollerDone.Go(func() {
			defer closeReader()
			poller.Run(pctx)
		})
		stopPoller = func() {
			cancelPoller()
			pollerDone.Wait()
			jdg.Note("%s", poller.Summary())
		}
		where := "on a session of its own"
		if inject != nil {
			where = "inside the host's session, between its frames"
		}
		fmt.Fprintf(e.Stderr, "mcpflight watch: reading the observer of profile %s after each cancelled tools/call, %s\n", chrono.Sanitize(o.observer, false), where)
	}

	stopClock := make(chan struct{})
	var clockDone sync.WaitGroup
	clockDone.Go(func() { advanceJudge(jdg, start, stopClock) })

	var code int
	var runErr error
	if transportName == "stdio" {
		code, runErr = e.watchStdio(ctx, argv, rec, inject)
	} else {
		runErr = e.watchHTTP(ctx, o, target, rec)
	}
	stopPoller()
	close(stopClock)
	clockDone.Wait()

	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), watchLinger)
	defer cancel()
	if err := rec.Close(lctx); err != nil {
		fmt.Fprintf(e.Stderr, "mcpflight watch: writing %s: %s\n", captureName, chrono.Sanitize(err.Error(), false))
	}
	pieces, _ := rec.Dropped()
	jdg.Dropped(pieces)
	rep := jdg.Report()
	rep.Version = reportVersion(rep)
	if exporter != nil {
		if err := exporter.Close(lctx); err != nil {
			fmt.Fprintf(e.Stderr, "mcpflight watch: %s\n", chrono.Sanitize(err.Error(), false))
		}
	}
	if err := e.writeConversation(dir, rep); err != nil {
		return 0, err
	}
	if runErr != nil {
		if transportName == "stdio" {
			// The server never ran: the host sees the shell's code.
			fmt.Fprintf(e.Stderr, "mcpflight watch: %s\n", chrono.Sanitize(e.redact.String(runErr.Error()), false))
			return code, nil
		}
		return 0, runErr
	}
	fmt.Fprintf(e.Stderr, "mcpflight watch: %s; report in %s\n", strings.TrimPrefix(report.Summary(rep), "mcpflight: "), chrono.Sanitize(filepath.Join(dir, "report.html"), false))
	if transportName == "stdio" {
		return code, nil
	}
	if !o.quiet {
		if err := report.Text(e.Stdout, rep, report.TextOptions{Color: useColor(e.Stdout, e.Getenv)}); err != nil {
			return 0, err
		}
	}
	return rep.ExitCode(), nil
}

// reportVersion is the report's header for the revisions a conversation
// spoke: the judge's, unless no session showed one.
func reportVersion(rep *results.Report) string {
	if len(rep.Revisions) == 0 {
		return "unknown (the conversation showed no revision)"
	}
	return rep.Version
}

// watchStdio runs the stdio shim until the server exits, with inject
// (nil without --observer) attached. The host's interrupt (main's
// context) is not an emergency stop: the signals are forwarded to the
// server, which is killed only if it is still running watchLinger after
// the first of them.
func (e Env) watchStdio(ctx context.Context, argv []string, rec *watch.Recorder, inject *watch.Injector) (int, error) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	stop, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	go func() {
		select {
		case <-ctx.Done():
		case <-stop.Done():
			return
		}
		t := time.NewTimer(watchLinger)
		defer t.Stop()
		select {
		case <-t.C:
			cancel(fmt.Errorf("the server was still running %v after the host's signal", watchLinger))
		case <-stop.Done():
		}
	}()
	return watch.Stdio(stop, watch.StdioConfig{Argv: argv, Stdin: e.Stdin, Stdout: e.Stdout, Stderr: e.Stderr, Recorder: rec, Signals: sigs, Inject: inject})
}

// watchHTTP runs the proxy until ctx ends (Ctrl-C).
func (e Env) watchHTTP(ctx context.Context, o watchOptions, target *url.URL, rec *watch.Recorder) error {
	ln, err := watch.Listen(o.listen, o.listenAny)
	if err != nil {
		return err
	}
	proxy := watch.Proxy(watch.ProxyConfig{Target: target, Recorder: rec, RedactHeaders: o.redactHeader})
	fmt.Fprintf(e.Stderr, "mcpflight watch: point the host at %s (Ctrl-C ends the watch)\n", watch.LocalURL(ln, target))
	return watch.Serve(ctx, ln, proxy, rec)
}

// advanceJudge tells the judge the time every tick until stop closes, so
// that a silence (a task left working, a dropped stream never resumed)
// is judged while nothing else happens.
func advanceJudge(j *judge.Judge, start time.Time, stop <-chan struct{}) {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if now := time.Since(start) - judgeLag; now > 0 {
				j.Advance(now)
			}
		}
	}
}

// writeConversation writes the report files of a watched conversation in
// its folder.
func (e Env) writeConversation(dir string, rep *results.Report) error {
	for _, out := range []struct {
		name   string
		render func(io.Writer, *results.Report) error
	}{
		{"report.json", report.JSON},
		{"report.html", report.HTML},
		{"junit.xml", report.JUnit},
	} {
		if err := e.writeFile(filepath.Join(dir, out.name), func(w io.Writer) error { return out.render(w, rep) }); err != nil {
			return fmt.Errorf("writing %s: %w", out.name, err)
		}
	}
	return nil
}

// findingsName is the file of a watched conversation's findings, one per
// line as they are made.
const findingsName = "findings.txt"

// liveFindings prints each finding as it is made: a line in findings.txt,
// on stderr (or in the --log file, with the time and the conversation's
// name) unless quiet, and a span event when telemetry is on. A rule
// broken over and over (a server that breaks it on every message) gets
// livePerRule lines on stderr, then one saying the rest go to
// findings.txt alone, so that the host's log is not flooded; findings.txt
// has every one.
type liveFindings struct {
	mu       sync.Mutex
	file     io.Writer
	stderr   io.Writer
	prefix   string
	stamp    bool
	redact   *chrono.Redactor
	exporter *telemetry.Exporter
	// printed counts the stderr lines of each rule (monitor.ResultID).
	printed map[string]int
}

// livePerRule is how many findings of one rule are printed on stderr.
const livePerRule = 10

func (l *liveFindings) finding(f monitor.Finding) {
	if l.exporter != nil {
		l.exporter.Finding(f)
	}
	line := chrono.Sanitize(l.redact.String(f.String()), false)
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintln(l.file, line)
	if l.stderr == nil {
		return
	}
	id := monitor.ResultID(f.Side, f.Rule)
	if l.printed == nil {
		l.printed = map[string]int{}
	}
	l.printed[id]++
	switch n := l.printed[id]; {
	case n == livePerRule+1:
		line = fmt.Sprintf("%s: %d findings printed; the rest go to %s alone", id, livePerRule, findingsName)
	case n > livePerRule:
		return
	}
	prefix := l.prefix
	if l.stamp {
		prefix = time.Now().Format(time.RFC3339) + " " + prefix
	}
	fmt.Fprintln(l.stderr, prefix+line)
}

// watchRoot is the folder conversations' folders are created in: out, or
// the default under the XDG state directory.
func (e Env) watchRoot(out string) (string, error) {
	if out == "" {
		state := e.Getenv("XDG_STATE_HOME")
		if state == "" {
			home := e.Getenv("HOME")
			if home == "" {
				return "", errors.New("watch: neither XDG_STATE_HOME nor HOME is set; pass --out DIR")
			}
			state = filepath.Join(home, ".local", "state")
		}
		out = filepath.Join(state, "mcpflight", "watch")
	}
	if err := os.MkdirAll(out, 0o700); err != nil {
		return "", fmt.Errorf("watch: --out: %w", err)
	}
	return out, nil
}

// newConversationDir creates the folder of a conversation under root,
// "20261206-142501-server-everything", with "-2", "-3" … when the name is
// taken: a folder is created anew (os.Mkdir fails on one that exists),
// so no recording ever overwrites another, however many hosts start
// their servers at once.
func newConversationDir(root string, at time.Time, name string) (string, error) {
	base := at.Format("20060102-150405") + "-" + name
	for i := 1; i <= 1000; i++ {
		dir := filepath.Join(root, base)
		if i > 1 {
			dir = fmt.Sprintf("%s-%d", dir, i)
		}
		err := os.Mkdir(dir, 0o700)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("watch: %w", err)
		}
	}
	return "", fmt.Errorf("watch: 1000 folders named %s already exist in %s", base, chrono.Sanitize(root, false))
}

// launchers are commands that run the server named by a later argument.
var launchers = map[string]bool{"node": true, "npx": true, "bun": true, "bunx": true, "deno": true, "python": true, "python3": true,
	"uv": true, "uvx": true, "pipx": true, "docker": true, "podman": true, "sh": true, "bash": true, "go": true, "java": true, "env": true, "pnpm": true, "yarn": true}

// conversationName names a stdio server for its folder: the program, or
// for a launcher (npx, node, uvx, docker …) its last argument that is not
// a flag, "@scope/server-x@1.2" giving "server-x"; only letters, digits,
// '.', '_' and '-' are kept.
func conversationName(argv []string) string {
	if len(argv) == 0 {
		return "server"
	}
	name := filepath.Base(argv[0])
	if launchers[name] {
		for _, a := range argv[1:] {
			if !strings.HasPrefix(a, "-") && !strings.Contains(a, "=") {
				name = a
			}
		}
	}
	name = strings.TrimPrefix(name, "@")
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.Index(name, "@"); i > 0 {
		name = name[:i]
	}
	name = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, ".js"), ".py"), ".mjs")
	var b strings.Builder
	for _, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
			b.WriteRune(c)
		}
		if b.Len() >= 40 {
			break
		}
	}
	if b.Len() == 0 || strings.Trim(b.String(), ".") == "" {
		return "server"
	}
	return b.String()
}

// credentialValues are the values of the environment's variables whose
// names look like credentials (transport.CredentialHeader's words: KEY,
// TOKEN, SECRET, PASSWORD, AUTH …): a stdio server is given its API keys
// that way, and may echo them.
func credentialValues(environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if ok && len(value) >= chrono.MinSecretLen && transport.CredentialHeader(name) {
			out = append(out, value)
		}
	}
	return out
}
