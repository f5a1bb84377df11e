package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/clientrun"
	"github.com/mcpflight/mcpflight/internal/targets"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
)

// watchHostsFile pins what mcpflight watch finds between real hosts and
// real servers (TestWatchRealHosts): per pairing, the findings watch
// wrote, each as its verdict, rule, requirement and the method it is
// about. Re-record it (after a rule's judgement changed on purpose, or a
// host's or server's version) with
//
//	go test ./internal/cli -run TestWatchRealHosts -update
const watchHostsFile = "testdata/watch-hosts.json"

// watchHostsRecord is watchHostsFile: the versions of the hosts and
// servers, and the findings by pairing (sorted, each once).
type watchHostsRecord struct {
	Versions map[string]string   `json:"versions"`
	Pairings map[string][]string `json:"pairings"`
}

// watchRacy lists the findings a pairing may or may not make, with the
// race that decides: they are left out of watchHostsFile and of the
// comparison. Every other finding's evidence does not depend on the
// machine's speed.
var watchRacy = []struct {
	pairing, finding, why string
}{
	{"*+mcpgo/*", "fail server/no-progress-after-end PRG-14",
		"mcp-go writes a progress notification from a goroutine of its own and the response directly: the last step's " +
			"progress comes after the response as often as not"},
	{"*+mcpgo/http/*", "warn server/cancel-no-response CAN-8",
		"mcp-go over HTTP answers a cancelled call with a \"context canceled\" error in some runs and with nothing in others"},
	{"*+mcpgo/http/*", "warn server/http-stream-routing",
		"mcp-go writes a request's notifications through the session's one channel, which any open stream of the session " +
			"may drain: a call's progress goes out on the GET stream (HTTP-31) or another call's stream (HTTP-22) in some runs"},
	{"gosdk+everything/stdio/2025-11-25/connect-timeout", "fail client/cancel-names-own-request CAN-5",
		"the go-sdk client gives up its 1 ms handshake before writing anything in most runs (0 frames in 6 runs read " +
			"by hand); once, in a loaded run, watch saw a notifications/cancelled naming a request never written: the " +
			"client cancelled the initialize it was still sending (CAN-5 on the wire; the cancel of an initialize, CAN-2, " +
			"is the other cause that fits), not reproduced since"},
	{"gosdk+gosdk/http/*", "warn server/cancel-no-response CAN-8",
		"the go-sdk client, giving up on a call at its timeout, sends the cancel and drops the call's stream at the " +
			"same time: when the cancel reaches the go-sdk server first, the server answers on the stream still open " +
			"(1 to 12 ms after the cancel, seen in about 1 run in 40); most runs the stream is gone before the answer"},
	{"*+gosdk/http/*", "warn server/cancel-no-progress CAN-8",
		"over HTTP the go-sdk server's handler learns of the cancel a step later now and then, and sends that step's " +
			"progress beyond the crossing window; most runs it stops within it"},
}

// watchAtOnce is how many pairings run at once.
const watchAtOnce = 6

// watchSafety bounds one pairing's processes: a safety net, never a
// judgement.
const watchSafety = 2 * time.Minute

// A watchServer is a real MCP server a host reaches through watch.
type watchServer struct {
	name string
	// revisions are the revisions it speaks.
	revisions []string
	// stdio is its command line over stdio; http starts it over
	// Streamable HTTP for the whole test and returns its endpoint.
	stdio func(t *testing.T) []string
	http  func(t testing.TB) string
	// need skips t when what the server needs is missing.
	need func(t *testing.T)
	// short is a call of its slow tool that completes at once (three
	// quick steps), long one that works for seconds (fifty steps of
	// 100ms): the one a host cancels.
	tool        string
	short, long map[string]any
	// versions are the packages it is, by name.
	versions func(t *testing.T) map[string]string
}

// A watchHost is a real MCP host.
type watchHost struct {
	name      string
	revisions []string
	// adapter is the command of a check-client adapter
	// (docs/check-client.md): the host is driven by instructions. Without
	// it the host is the MCP Inspector's CLI.
	adapter  func(t *testing.T) []string
	versions func(t *testing.T) map[string]string
}

// npmScript returns the path of a script of an npm target's package (pkg
// under @modelcontextprotocol) and the node binary, skipping t without
// them (failing it under CI).
func npmScript(t testing.TB, pkg string, rel ...string) (node, script string) {
	t.Helper()
	script = filepath.Join(append([]string{targets.NodeModules(), "@modelcontextprotocol", pkg}, rel...)...)
	return targets.Need(t, script), script
}

// npmVersion is the version of an installed npm target.
func npmVersion(t *testing.T, pkg string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(targets.NodeModules(), "@modelcontextprotocol", pkg, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p struct{ Name, Version string }
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	return map[string]string{p.Name: p.Version}
}

// goModVersion is the version of module mod that testdata/NAME's go.mod
// requires.
func goModVersion(t *testing.T, name, mod string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(targets.GoModule(name), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^\s*(?:require\s+)?` + regexp.QuoteMeta(mod) + `\s+(\S+)`)
	m := re.FindSubmatch(raw)
	if m == nil {
		t.Fatalf("testdata/%s/go.mod requires no %s", name, mod)
	}
	return map[string]string{mod: string(m[1])}
}

// absTargets is MCPFLIGHT_TARGETS_DIR made absolute, for the hosts that
// run in another folder, or "" when it is not set.
func absTargets(t *testing.T) string {
	d := os.Getenv(targets.EnvDir)
	if d == "" {
		return ""
	}
	abs, err := filepath.Abs(d)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// stepTicks is the step of the servers' slow tools: a long call of
// fifty of them takes five seconds, far beyond the hosts' aborts.
const stepTicks = 100

var watchServers = []watchServer{
	{
		name: "gosdk", revisions: []string{spec.V20251125, spec.V20260728},
		stdio: func(t *testing.T) []string { return []string{targets.GoBinary(t, "gosdkserver"), "stdio"} },
		http:  func(t testing.TB) string { return targets.GoServerHTTP(t, "gosdkserver") },
		need:  func(t *testing.T) { targets.GoBinary(t, "gosdkserver") },
		tool:  "slow", short: map[string]any{"steps": 3, "stepMs": 20}, long: map[string]any{"steps": 50, "stepMs": stepTicks},
		versions: func(t *testing.T) map[string]string {
			return goModVersion(t, "gosdkserver", "github.com/modelcontextprotocol/go-sdk")
		},
	},
	{
		name: "mcpgo", revisions: []string{spec.V20251125, spec.V20260728},
		stdio: func(t *testing.T) []string { return []string{targets.GoBinary(t, "mcpgoserver"), "stdio"} },
		http:  func(t testing.TB) string { return targets.GoServerHTTP(t, "mcpgoserver") },
		need:  func(t *testing.T) { targets.GoBinary(t, "mcpgoserver") },
		tool:  "slow", short: map[string]any{"steps": 3, "stepMs": 20}, long: map[string]any{"steps": 50, "stepMs": stepTicks},
		versions: func(t *testing.T) map[string]string {
			return goModVersion(t, "mcpgoserver", "github.com/mark3labs/mcp-go")
		},
	},
	{
		name: "everything", revisions: []string{spec.V20251125},
		stdio: func(t *testing.T) []string {
			node, script := npmScript(t, "server-everything", "dist", "index.js")
			return []string{node, script}
		},
		http: func(t testing.TB) string {
			node, script := npmScript(t, "server-everything", "dist", "index.js")
			url, _ := targets.EverythingHTTP(t, node, script)
			return url
		},
		need: func(t *testing.T) { npmScript(t, "server-everything", "dist", "index.js") },
		// duration is in seconds, split evenly among the steps.
		tool: "trigger-long-running-operation", short: map[string]any{"duration": 0.06, "steps": 3}, long: map[string]any{"duration": 5, "steps": 50},
		versions: func(t *testing.T) map[string]string { return npmVersion(t, "server-everything") },
	},
	{
		name: "reference", revisions: []string{spec.V20251125, spec.V20260728},
		stdio: func(t *testing.T) []string { return []string{binary, "serve", "--stdio"} },
		http:  func(t testing.TB) string { return serveHTTP(t, binary, "serve", "--http", "127.0.0.1:0") },
		need:  func(*testing.T) {},
		tool:  "slow", short: map[string]any{"steps": 3, "tickMs": 20}, long: map[string]any{"steps": 50, "tickMs": stepTicks},
		versions: func(t *testing.T) map[string]string { return nil },
	},
}

var watchHosts = []watchHost{
	{
		name: "gosdk", revisions: []string{spec.V20251125, spec.V20260728},
		adapter: func(t *testing.T) []string { return []string{targets.GoBinary(t, "gosdkclient")} },
		versions: func(t *testing.T) map[string]string {
			return goModVersion(t, "gosdkclient", "github.com/modelcontextprotocol/go-sdk")
		},
	},
	{
		name: "ts1", revisions: []string{spec.V20251125},
		adapter: func(t *testing.T) []string {
			node, _ := npmScript(t, "sdk", "package.json")
			return []string{node, repoTargetsFile(t, "sdk-client-adapter.mjs")}
		},
		versions: func(t *testing.T) map[string]string { return npmVersion(t, "sdk") },
	},
	{
		name: "ts2", revisions: []string{spec.V20251125, spec.V20260728},
		adapter: func(t *testing.T) []string {
			node, _ := npmScript(t, "client", "package.json")
			return []string{node, repoTargetsFile(t, "client-adapter.mjs")}
		},
		versions: func(t *testing.T) map[string]string { return npmVersion(t, "client") },
	},
	{
		name: "inspector", revisions: []string{spec.V20251125},
		versions: func(t *testing.T) map[string]string {
			v := npmVersion(t, "inspector-cli")
			// The Inspector runs on the SDK it resolves, the 1.x client.
			for k, s := range npmVersion(t, "sdk") {
				v[k] = s
			}
			return v
		},
	},
}

// repoTargetsFile is the absolute path of testdata/targets/NAME.
func repoTargetsFile(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "testdata", "targets", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// serveHTTP starts argv, a server that prints its endpoint as its first
// line on stdout, and returns the endpoint; the server is killed when t
// ends.
func serveHTTP(t testing.TB, argv ...string) string {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		rd := bufio.NewReader(out)
		s, _ := rd.ReadString('\n')
		line <- strings.TrimSpace(s)
		_, _ = io.Copy(io.Discard, rd)
	}()
	select {
	case url := <-line:
		if !strings.HasPrefix(url, "http://") {
			t.Fatalf("%v printed %q, not its endpoint", argv, url)
		}
		return url
	case <-time.After(watchSafety):
		t.Fatalf("%v printed no endpoint", argv)
	}
	return ""
}

// parentCleanup is a subtest whose cleanups are its parent's: what it
// starts serves the parent's other subtests too.
type parentCleanup struct {
	*testing.T
	parent *testing.T
}

func (p parentCleanup) Cleanup(f func()) { p.parent.Cleanup(f) }

// A watchPairing is a host talking to a server through watch, over a
// transport, in a revision both speak.
type watchPairing struct {
	host      watchHost
	server    watchServer
	transport string
	revision  string
	// connectTimeout, for an adapter host, has it give up on the
	// handshake after 1ms instead of calling tools: the server is still
	// starting then, whatever the machine's speed (server-everything
	// takes a third of a second).
	connectTimeout bool
}

func (p watchPairing) name() string {
	n := fmt.Sprintf("%s+%s/%s/%s", p.host.name, p.server.name, p.transport, p.revision)
	if p.connectTimeout {
		n += "/connect-timeout"
	}
	return n
}

// watchPairings are every host with every server, over both transports,
// in every revision both speak, and each adapter host giving up on its
// handshake with server-everything over stdio.
func watchPairings() []watchPairing {
	var out []watchPairing
	everything := watchServers[slices.IndexFunc(watchServers, func(s watchServer) bool { return s.name == "everything" })]
	for _, h := range watchHosts {
		if h.adapter != nil {
			out = append(out, watchPairing{h, everything, clientrun.TransportStdio, spec.V20251125, true})
		}
		for _, s := range watchServers {
			for _, tr := range []string{clientrun.TransportStdio, clientrun.TransportHTTP} {
				for _, rev := range h.revisions {
					if slices.Contains(s.revisions, rev) {
						out = append(out, watchPairing{h, s, tr, rev, false})
					}
				}
			}
		}
	}
	return out
}

// findingHead is a line of findings.txt without where and what: its
// verdict, result ID, requirement, level and revision, and the method
// of the request it is about when it names one.
var (
	findingWhere  = regexp.MustCompile(`^(.*?)(?: at #\d+| waiting since #\d+)?(?: in session \S+)?: (.*)$`)
	findingMethod = regexp.MustCompile(`request \S+ \(([a-z][a-zA-Z/_]*)\)`)
)

func findingHead(line string) string {
	m := findingWhere.FindStringSubmatch(line)
	if m == nil {
		return line
	}
	head := m[1]
	if mm := findingMethod.FindStringSubmatch(m[2]); mm != nil {
		head += " " + mm[1]
	}
	return head
}

// racyFinding returns why a pairing's finding may or may not be made,
// if it is listed in watchRacy.
func racyFinding(pairing, head string) (string, bool) {
	for _, r := range watchRacy {
		if globMatch(r.pairing, pairing) && strings.HasPrefix(head, r.finding) {
			return r.why, true
		}
	}
	return "", false
}

// globMatch matches s against a path.Match-like pattern where * also
// matches "/".
func globMatch(pattern, s string) bool {
	re := "^" + strings.ReplaceAll(regexp.QuoteMeta(pattern), `\*`, ".*") + "$"
	return regexp.MustCompile(re).MatchString(s)
}

// TestWatchRealHosts: real hosts (the go-sdk v1.8.0 client, the
// TypeScript SDK clients 1.32.2 and 2.4.0, through their check-client
// adapters, and the MCP Inspector's CLI) talk to real servers (go-sdk,
// mcp-go, server-everything and mcpflight's reference server) through
// mcpflight watch, over stdio (watch where the host starts its server)
// and Streamable HTTP (watch as the proxy the host is pointed at), in
// each revision both speak. An adapter host calls the server's slow tool
// four times: one call that completes, one its user aborts after the
// first progress, one it gives up on after 500ms, one more that
// completes; the Inspector lists the tools and calls one. Each pairing's
// findings are pinned in watchHostsFile (a pairing that finds otherwise
// runs again, up to pairingAttempts, since a real server's pace moves
// with the machine's load and with it what falls within a crossing
// window); every pairing must also have done what it was told (the
// host's reports), and watch must have recorded and judged the
// conversation.
func TestWatchRealHosts(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs every real host with every real server through watch")
	}
	var recorded watchHostsRecord
	if raw, err := os.ReadFile(watchHostsFile); err == nil {
		if err := json.Unmarshal(raw, &recorded); err != nil {
			t.Fatalf("%s: %v", watchHostsFile, err)
		}
	} else if !*update {
		t.Fatalf("reading the pinned findings: %v (record them: go test ./internal/cli -run TestWatchRealHosts -update)", err)
	}
	pairings := watchPairings()
	var mu sync.Mutex
	fresh := watchHostsRecord{Versions: map[string]string{}, Pairings: map[string][]string{}}
	t.Cleanup(func() {
		if !*update || t.Failed() || len(fresh.Pairings) != len(pairings) {
			return
		}
		raw, err := json.MarshalIndent(fresh, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(watchHostsFile, append(raw, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	// Each server over HTTP serves every pairing that reaches it that
	// way, each through a watch proxy of its own: the first such pairing
	// starts it, and it serves until the last has ended.
	var urlMu sync.Mutex
	urls := map[string]string{}
	started := map[string]bool{}
	serverURL := func(sub *testing.T, s watchServer) string {
		urlMu.Lock()
		defer urlMu.Unlock()
		if !started[s.name] {
			started[s.name] = true
			urls[s.name] = s.http(parentCleanup{sub, t})
		}
		if urls[s.name] == "" {
			sub.Fatalf("the %s server over HTTP did not start (see the pairing that started it)", s.name)
		}
		return urls[s.name]
	}
	// The pairings run watchAtOnce at a time whatever -parallel says:
	// most of a pairing's time is its host's and server's own waits.
	slots := make(chan struct{}, watchAtOnce)
	var all sync.WaitGroup
	defer all.Wait()
	for _, p := range pairings {
		slots <- struct{}{}
		all.Go(func() {
			defer func() { <-slots }()
			t.Run(p.name(), func(t *testing.T) {
				versions := map[string]string{}
				for _, f := range []func(*testing.T) map[string]string{p.host.versions, p.server.versions} {
					for k, v := range f(t) {
						versions[k] = v
					}
				}
				for k, v := range versions {
					if !*update && recorded.Versions[k] != v {
						t.Fatalf("%s was recorded against %s %q, and %q is installed: record it again", watchHostsFile, k, recorded.Versions[k], v)
					}
				}
				var url string
				if p.transport == clientrun.TransportHTTP {
					p.server.need(t)
					url = serverURL(t, p.server)
				}
				want, pinned := recorded.Pairings[p.name()]
				if !pinned && !*update {
					t.Fatalf("%s holds no findings for %s (record them: go test ./internal/cli -run TestWatchRealHosts -update)", watchHostsFile, p.name())
				}
				// A real server's pace moves with the machine's load, and
				// with it what falls within a crossing window: a pairing
				// whose findings differ from the pin runs again, up to
				// pairingAttempts in all, and must match in one of them.
				var heads []string
				var missed []string
				for attempt := 1; attempt <= pairingAttempts; attempt++ {
					heads = pairingFindings(t, p, url)
					if *update || slices.Equal(heads, want) {
						break
					}
					missed = append(missed, fmt.Sprintf("run %d found\n\t%s", attempt, strings.Join(heads, "\n\t")))
				}
				mu.Lock()
				fresh.Pairings[p.name()] = heads
				for k, v := range versions {
					fresh.Versions[k] = v
				}
				mu.Unlock()
				if !*update && len(missed) == pairingAttempts {
					t.Errorf("%s\nand %s pins\n\t%s", strings.Join(missed, "\n"), watchHostsFile, strings.Join(want, "\n\t"))
				}
			})
		})
	}
}

// pairingAttempts is how many times a pairing may run to match its pin.
const pairingAttempts = 3

// pairingFindings runs pairing p (the server at url over HTTP) once and
// returns the heads of watch's findings, sorted, less the racy ones
// (watchRacy), which it logs.
func pairingFindings(t *testing.T, p watchPairing, url string) []string {
	t.Helper()
	got := map[string]bool{}
	for _, dir := range runWatchPairing(t, p, url) {
		raw, err := os.ReadFile(filepath.Join(dir, findingsName))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
			if line == "" {
				continue
			}
			t.Logf("%s: %s", filepath.Base(dir), line)
			head := findingHead(line)
			if why, racy := racyFinding(p.name(), head); racy {
				t.Logf("racy, not pinned: %s (%s)", head, why)
				continue
			}
			got[head] = true
		}
	}
	heads := slices.Sorted(maps.Keys(got))
	if heads == nil {
		heads = []string{}
	}
	return heads
}

// runWatchPairing runs one pairing: the server (at url over HTTP)
// behind watch, the host in front. It checks that the host did what it
// was told and that watch recorded and judged the conversation, and
// returns the conversations' folders.
func runWatchPairing(t *testing.T, p watchPairing, url string) []string {
	t.Helper()
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), watchSafety)
	defer cancel()
	var (
		serverArgv []string      // over stdio, what the host starts
		stdioDone  func() string // over stdio, waits for every watch the host started to end
		proxy      *watchProxy   // over HTTP
	)
	if p.transport == clientrun.TransportStdio {
		serverArgv, stdioDone = watchShim(t, out, p.server.stdio(t))
	} else {
		proxy = startWatchProxy(t, out, url)
	}
	var host *exec.Cmd
	var checkHost func(stdout string, err error)
	if p.host.adapter != nil {
		argv := p.host.adapter(t)
		host = exec.CommandContext(ctx, argv[0], argv[1:]...)
		in := watchInstructions(p, serverArgv, proxy)
		env, err := in.Environ()
		if err != nil {
			t.Fatal(err)
		}
		if d := absTargets(t); d != "" {
			env = append(env, targets.EnvDir+"="+d)
		}
		host.Env = append(os.Environ(), env...)
		checkHost = func(stdout string, err error) { checkAdapterReports(t, p.name(), len(in.Steps), stdout, err) }
	} else {
		// build/index.js is the CLI itself: what "inspector --cli" and
		// the package's mcp-inspector-cli launcher start with the same
		// arguments.
		node, cli := npmScript(t, "inspector-cli", "build", "index.js")
		target := serverArgv
		if proxy != nil {
			target = []string{proxy.url}
		}
		// A user asks for progress with the call's metadata.
		argv := append(append([]string{node, cli}, target...),
			"--method", "tools/call", "--tool-name", p.server.tool, "--tool-metadata", "progressToken=inspector-1")
		for _, k := range slices.Sorted(maps.Keys(p.server.short)) {
			argv = append(argv, "--tool-arg", fmt.Sprintf("%s=%v", k, p.server.short[k]))
		}
		host = exec.CommandContext(ctx, argv[0], argv[1:]...)
		// The Inspector reads its own package.json from the folder
		// above its working directory: it runs in its build folder.
		host.Dir = filepath.Dir(cli)
		checkHost = func(stdout string, err error) {
			if err != nil || !strings.Contains(stdout, `"content"`) {
				t.Errorf("the Inspector: %v; stdout:\n%s", err, stdout)
			}
		}
	}
	var hostOut, hostErr strings.Builder
	host.Stdout, host.Stderr = &hostOut, &hostErr
	host.WaitDelay = 10 * time.Second
	err := host.Run()
	var watchErr string
	if stdioDone != nil {
		watchErr = stdioDone()
	} else {
		watchErr = proxy.stop(t)
	}
	if t.Failed() {
		return nil
	}
	checkHost(hostOut.String(), err)
	dirs := conversationDirs(t, out)
	called := false
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, "report.json")); err != nil {
			t.Errorf("watch did not judge the conversation: %v", err)
		}
		raw, err := os.ReadFile(filepath.Join(dir, captureName))
		if err != nil {
			t.Fatal(err)
		}
		called = called || strings.Contains(string(raw), `\"method\":\"tools/call\"`)
	}
	if !called && !p.connectTimeout {
		t.Errorf("watch recorded no tools/call in %d conversations", len(dirs))
	}
	if len(dirs) == 0 {
		t.Errorf("watch wrote no conversation under %s", out)
	}
	if t.Failed() {
		t.Logf("host stderr:\n%s\nwatch stderr:\n%s", hostErr.String(), watchErr)
		for _, dir := range dirs {
			t.Logf("%s:\n%s", filepath.Base(dir), runCLI(t, "", "show", filepath.Join(dir, captureName)).stdout)
		}
	}
	return dirs
}

// watchInstructions are an adapter host's instructions: four calls of
// the server's slow tool, one that completes, one the user aborts after
// its first progress, one the host gives up on after 500ms (the long
// calls work for five seconds), one more that completes.
func watchInstructions(p watchPairing, serverArgv []string, proxy *watchProxy) clientrun.Instructions {
	in := clientrun.Instructions{Name: "watch", ProtocolVersion: p.revision, Transport: p.transport,
		Steps: []clientrun.Step{
			{Op: clientrun.OpCall, Call: &clientrun.CallStep{Tool: p.server.tool, Arguments: p.server.short, Progress: true}},
			{Op: clientrun.OpCall, Call: &clientrun.CallStep{Tool: p.server.tool, Arguments: p.server.long, Progress: true, AbortAfterProgress: 1}},
			{Op: clientrun.OpCall, Call: &clientrun.CallStep{Tool: p.server.tool, Arguments: p.server.long, Progress: true, TimeoutMs: 500}},
			// Bounded, so that a response lost on the way costs a few
			// seconds rather than the host's default minute.
			{Op: clientrun.OpCall, Call: &clientrun.CallStep{Tool: p.server.tool, Arguments: p.server.short, TimeoutMs: 5000}},
		}}
	if p.connectTimeout {
		in.Connect.TimeoutMs, in.Steps = 1, nil
	}
	if proxy != nil {
		in.URL = proxy.url
	} else {
		in.Server = &clientrun.ServerCommand{Command: serverArgv[0], Args: serverArgv[1:]}
	}
	return in
}

// checkAdapterReports: the adapter connected, its calls ended as told
// (result, aborted, timeout, result) and it closed, but where
// watchHostLosses says a call may end otherwise.
func checkAdapterReports(t *testing.T, pairing string, steps int, stdout string, err error) {
	t.Helper()
	want := []string{"connect: connected", "step 1: result", "step 2: aborted", "step 3: timeout", "step 4: result", "step 5: closed"}
	if steps == 0 {
		want = []string{"connect: timeout", "step 1: closed"}
	}
	var got []string
	for _, line := range strings.Split(stdout, "\n") {
		if r, ok := clientrun.ParseReport([]byte(line)); ok {
			where := fmt.Sprintf("step %d", r.Step)
			if r.Step == 0 {
				where = "connect"
			}
			got = append(got, where+": "+r.Outcome)
		}
	}
	ok := err == nil && len(got) == len(want)
	for i := 0; ok && i < len(got); i++ {
		if got[i] == want[i] {
			continue
		}
		why, lost := hostLoss(pairing, got[i])
		if !lost {
			ok = false
			break
		}
		t.Logf("%s, as it may: %s", got[i], why)
	}
	if !ok {
		t.Errorf("the host (%v) reported %q, want %q; stdout:\n%s", err, got, want, stdout)
	}
}

// watchHostLosses are the calls that may end otherwise than they were
// told in a pairing, with the reason.
var watchHostLosses = []struct {
	pairing string
	// outcomes are "step N: OUTCOME" reports allowed besides the one
	// wanted.
	outcomes []string
	why      string
}{
	{"gosdk+mcpgo/http/2026-07-28", []string{"step 3: error", "step 4: error"},
		"the go-sdk client sends its notifications/cancelled from a goroutine of its own, without the revision's _meta; " +
			"mcp-go refuses it with 400, and the go-sdk client then fails its connection (\"sending notifications/cancelled: Bad Request\"): " +
			"whether the next call went out before that decides whether it fails too"},
}

// hostLoss returns why report may be what a pairing's host reports
// instead of what it was told, if watchHostLosses allows it.
func hostLoss(pairing, report string) (string, bool) {
	for _, l := range watchHostLosses {
		if globMatch(l.pairing, pairing) && slices.Contains(l.outcomes, report) {
			return l.why, true
		}
	}
	return "", false
}

// watchShim is the command a host starts for server over stdio: watch
// before it, writing its folders under out. Its stderr goes to a named
// pipe the test reads, so that done can wait for every watch the host
// started to end (the pipe's writers all closed), after the host itself
// ended: a host may stop waiting for its server before it exits. done
// returns what the watches wrote on stderr.
func watchShim(t *testing.T, out string, server []string) (argv []string, done func() string) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "watch-stderr")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Held until the host ended, so that a watch that ends before the
	// host starts the next one does not end the reading.
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	text := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(r)
		r.Close()
		text <- string(b)
	}()
	t.Cleanup(func() { w.Close() })
	// --stdio rather than "--": a host may take the first "--" of its
	// own command line for its own (the Inspector's CLI does).
	argv = []string{"/bin/sh", "-c", `exec 2>>"$0"; exec "$@"`, fifo, binary, "watch", "--out", out, "--stdio", transport.QuoteArgs(server)}
	return argv, func() string {
		w.Close()
		select {
		case s := <-text:
			return s
		case <-time.After(watchSafety):
			t.Errorf("a watch the host started was still running %v after the host ended", watchSafety)
			return ""
		}
	}
}

// watchProxy is "mcpflight watch --target" running as the proxy a host
// is pointed at.
type watchProxy struct {
	url            string
	cmd            *exec.Cmd
	stdout, stderr *lineWaiter
	out            string
	exited         chan struct{}
}

// stop interrupts the proxy (Ctrl-C) and checks that it printed the
// report and exited with the report's code; it returns its stderr.
func (p *watchProxy) stop(t *testing.T) string {
	t.Helper()
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.exited:
	case <-time.After(watchSafety):
		t.Fatalf("watch did not end on an interrupt:\n%s", p.stderr.String())
	}
	code := p.cmd.ProcessState.ExitCode()
	if want := reportExitCode(t, dirs0(t, p.out)); code != want || !strings.Contains(p.stdout.String(), "rules") {
		t.Errorf("watch exited %d, its report says %d; stdout:\n%s", code, want, p.stdout.String())
	}
	return p.stderr.String()
}

// startWatchProxy starts watch as a proxy to target, its folder under
// out, and waits for the URL it prints.
func startWatchProxy(t *testing.T, out, target string) *watchProxy {
	t.Helper()
	p := &watchProxy{out: out, stdout: &lineWaiter{}, stderr: &lineWaiter{re: regexp.MustCompile(`point the host at (\S+)`), found: make(chan string, 1)}}
	p.cmd = exec.Command(binary, "watch", "--out", out, "--target", target)
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = p.cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-exited
	})
	select {
	case p.url = <-p.stderr.found:
	case <-exited:
		t.Fatalf("watch exited before listening:\n%s", p.stderr.String())
	case <-time.After(watchSafety):
		t.Fatalf("watch never said where it listens:\n%s", p.stderr.String())
	}
	p.exited = exited
	return p
}
