package cases_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/cases"
	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/internal/targets"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/runner"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// thirdPartyFile pins every verdict TestThirdPartyVerdicts reaches, by
// deployment, revision and case. Re-record it (after a case's judgement
// changed on purpose) with
//
//	go test ./cases -run TestThirdPartyVerdicts -update
const thirdPartyFile = "testdata/thirdparty-verdicts.json"

// thirdPartyRecord is thirdPartyFile: the Go modules the servers were
// built on (from their go.mod) and the verdicts.
type thirdPartyRecord struct {
	Servers     map[string]string                        `json:"servers"`
	Deployments map[string]map[string]map[string]finding `json:"deployments"`
}

// thirdPartyDeployment is one way of running a third-party server:
// testdata/<server> over stdio, or over Streamable HTTP with args.
type thirdPartyDeployment struct {
	name   string
	server string
	http   bool
	args   []string
}

var thirdPartyDeployments = []thirdPartyDeployment{
	{name: "gosdk-stdio", server: "gosdkserver"},
	{name: "gosdk-http", server: "gosdkserver", http: true},
	{name: "gosdk-http-stateless", server: "gosdkserver", http: true, args: []string{"-stateless"}},
	{name: "gosdk-http-stateless-propagate", server: "gosdkserver", http: true, args: []string{"-stateless", "-propagate-cancel"}},
	{name: "mcpgo-stdio", server: "mcpgoserver"},
	{name: "mcpgo-http", server: "mcpgoserver", http: true},
}

// thirdPartyServers names, for each server, the module it is built on;
// thirdPartyFile records the version its go.mod requires.
var thirdPartyServers = map[string]string{
	"gosdkserver": "github.com/modelcontextprotocol/go-sdk",
	"mcpgoserver": "github.com/mark3labs/mcp-go",
}

var thirdPartyRevisions = []string{spec.V20251125, spec.V20260728}

// racyOnThirdParty lists the verdicts that depend on a race inside the
// server, matched by deployment, revision and case (path.Match patterns):
// they are compared against the verdicts their race was seen to reach,
// not against the recorded one. Each was read in its chronologies.
var racyOnThirdParty = []struct {
	deployment, revision, cases string
	seen                        []finding
	why                         string
}{
	{"mcpgo-*", "*", "progress/*",
		[]finding{{verdict.Pass, ""}, {verdict.Info, ""}, {verdict.Fail, "PRG-14"}, {verdict.Warn, "HTTP-22"}, {verdict.Fail, "PRG-4"}},
		"mcp-go writes a request's notifications from a goroutine of their own (over HTTP, through the session's one " +
			"channel, which any open POST stream of the session may drain) and its response directly: the last step's " +
			"progress, sent before the handler returns, is written after the response as often as not (over stdio the " +
			"two lines 13 µs apart), over HTTP a progress sometimes goes out on another request's stream, and two of one " +
			"call's notifications, each written from a goroutine of its own, are sometimes read out of order (PRG-4)"},
	{"mcpgo-*", "*", "passive/*",
		[]finding{{}, {verdict.Fail, "PRG-14"}, {verdict.Warn, "HTTP-22"}, {verdict.Fail, "PRG-4"}, {verdict.Warn, "LOG-43"}, {verdict.Fail, "SUB-2"}},
		"the passive rules see in every case's chronology what progress/* and logging/request-level-filter see in " +
			"theirs, and mcp-go's notifications race its response (see progress/*): progress after the response " +
			"(PRG-14), on another request's stream (HTTP-22), out of order (PRG-4), a log message after the " +
			"response (LOG-43), a subscription's acknowledgement after the listen's response (SUB-2, see " +
			"subscriptions/acknowledged-first); a passive row exists only when no case of the run reported the requirement " +
			"(none: every such race went the case's way, or a case caught it)"},
	{"*-http*", spec.V20251125, "cancel/mid-work-no-progress",
		[]finding{{verdict.Pass, ""}, {verdict.Warn, "CAN-8"}},
		"the handler's step timer and the cancel race: a step that fires as the cancel arrives still sends its progress"},
	{"gosdk-stdio", spec.V20260728, "cancel/mid-work-no-progress",
		[]finding{{verdict.Pass, ""}, {verdict.Fail, "CAN-54"}},
		"the handler's step timer and the cancel race: a step that fires as the cancel arrives still sends its progress"},
	{"gosdk-stdio", spec.V20260728, "cancel/no-further-message-after-progress",
		[]finding{{verdict.Pass, ""}, {verdict.Fail, "CAN-54"}},
		"the handler's step timer and the cancel race, as in cancel/mid-work-no-progress: a step that fires as the cancel " +
			"arrives still sends its progress (fail), one that does not leaves nothing after the cancel (pass, seen in a " +
			"loaded full run under two busy loops)"},
	{"mcpgo-*", spec.V20260728, "subscriptions/acknowledged-first",
		[]finding{{verdict.Pass, ""}, {verdict.Fail, "SUB-2"}},
		"mcp-go answers subscriptions/listen at once and writes the acknowledgement from another goroutine: on the " +
			"listen's stream (or stdout) the acknowledgement comes before the response or after it (then the response is the first " +
			"message carrying the subscription's ID, SUB-2)"},
	{"mcpgo-http", spec.V20251125, "cancel/handler-stops",
		[]finding{{verdict.Pass, ""}, {verdict.Warn, "CAN-8"}},
		"the ten-step handler (1 s) and the cancel's POST race on a loaded machine: when the server gets to the cancel " +
			"only after the last step, the observer counts the handler completed (seen once in a full -race run)"},
	{"gosdk-http", spec.V20251125, "cancel/handler-stops",
		[]finding{{verdict.Pass, ""}, {verdict.Warn, "CAN-8"}},
		"the ten-step handler (1 s) and the cancel's POST race on a loaded machine: when the server gets to the cancel " +
			"only after the last step, the observer counts the handler completed (seen in a loaded -count=4 run; the " +
			"Stateless deployments never take the cancel, and are pinned as the warn they always are)"},
	{"mcpgo-*", spec.V20260728, "logging/request-level-filter",
		[]finding{{verdict.Pass, ""}, {verdict.Warn, "LOG-43"}},
		"mcp-go writes notifications from a goroutine of their own and the response directly: the log tool's two " +
			"messages come after its response (LOG-43 grants them before it) as often as not"},
	{"mcpgo-*", spec.V20260728, "logging/none-on-listen-stream",
		[]finding{{verdict.Pass, ""}, {verdict.Blocked, ""}},
		"the case needs the subscription's acknowledgement, which mcp-go writes before or after the listen's response " +
			"(see subscriptions/acknowledged-first): after it, the case is blocked by that finding"},
	{"mcpgo-*", spec.V20260728, "subscriptions/subscription-id",
		[]finding{{verdict.Pass, ""}, {verdict.Blocked, ""}},
		"the case needs the subscription's acknowledgement, which mcp-go writes before or after the listen's response " +
			"(see subscriptions/acknowledged-first): after it, the case is blocked by that finding"},
	{"mcpgo-http", spec.V20251125, "cancel/id-zero",
		[]finding{{verdict.Warn, "CAN-8"}, {verdict.Pass, ""}},
		"mcp-go over HTTP answers a cancelled request with a \"context canceled\" error in some runs and with nothing " +
			"in others: recorded warn CAN-8 for request 0, pass seen once in a full -race run in which " +
			"cancel/mid-work-no-response still got the error"},
	{"mcpgo-*", spec.V20251125, "cancel/string-vs-integer-target",
		[]finding{{verdict.Fail, "RPC-8"}, {verdict.Warn, "CAN-8"}, {verdict.Pass, ""}},
		"mcp-go takes the cancel of \"5\" for one of 5 too (RPC-8): which of the two requests its cancel reaches first, " +
			"and whether a step's progress crosses the cancel (CAN-8), decides the verdict; over HTTP it sometimes finds \"5\" " +
			"alone (pass)"},
	{"mcpgo-stdio", spec.V20260728, "cancel/string-vs-integer-target",
		[]finding{{verdict.Fail, "RPC-8"}, {verdict.Fail, "CAN-54"}},
		"mcp-go takes the cancel of \"5\" for one of 5 too (RPC-8), or answers the cancelled \"5\" (CAN-54): which of " +
			"the two requests its cancel reaches first decides"},
}

// thirdPartyJobs bounds the cases side by side in each of the test's
// twelve runs, which all run at once: the defaults are sized for one run
// against one target (48 sessions over HTTP), and twelve of them on two
// cores turn the servers' own races from rare into common.
func thirdPartyJobs(transportName string) int {
	return min(runner.DefaultJobs(transportName), 8)
}

// racyFor returns the racyOnThirdParty entry of a verdict, if any.
func racyFor(dep, rev, id string) (seen []finding, why string, ok bool) {
	for _, r := range racyOnThirdParty {
		if globMatch(r.deployment, dep) && globMatch(r.revision, rev) && globMatch(r.cases, id) {
			return r.seen, r.why, true
		}
	}
	return nil, "", false
}

// couldNotAct matches the summaries of the errors that say mcpflight
// could not act on the target (it refused the revision, did not reach the
// point the case needs before the deadline, failed a helper step judged by
// another case), as an error should. Any other error is a finding the
// case failed to judge, or a harness bug.
var couldNotAct = []*regexp.Regexp{
	regexp.MustCompile(`^cannot reach the target`),
	regexp.MustCompile(`^not run: `),
	regexp.MustCompile(`^(handshake failed|no answer to initialize)`),
}

// moduleVersion reads the version of module mod that testdata/<server>'s
// go.mod requires.
func moduleVersion(t *testing.T, server, mod string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(targets.GoModule(server), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(f) >= 2 && f[0] == mod {
			return mod + " " + f[1]
		}
	}
	t.Fatalf("testdata/%s/go.mod requires no %s", server, mod)
	return ""
}

// TestThirdPartyVerdicts runs the whole catalogue, under both revisions,
// against servers built on the official Go SDK and on mcp-go
// (testdata/gosdkserver, testdata/mcpgoserver, with their one profile) in
// each of their deployments, and pins every verdict with its requirement
// in thirdPartyFile: a changed verdict fails, naming deployment,
// revision, case, the recorded verdict and the new one. It also fails on
// an error that is not a "could not act" reason (couldNotAct): a target's
// refusal is evidence, and a case another case's finding stopped is
// blocked, not an error. After a deliberate change of judgement,
// re-record with
//
//	go test ./cases -run TestThirdPartyVerdicts -update
func TestThirdPartyVerdicts(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the catalogue twelve times against servers built on go-sdk and mcp-go")
	}
	prof, err := profile.Load(filepath.Join(targets.GoModule("gosdkserver"), "profile.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	servers := map[string]string{}
	for server, mod := range thirdPartyServers {
		servers[server] = moduleVersion(t, server, mod)
	}
	var recorded thirdPartyRecord
	if b, err := os.ReadFile(thirdPartyFile); err == nil && *update {
		_ = json.Unmarshal(b, &recorded) // the verdicts of cases a run does not exercise carry over
	}
	if !*update {
		b, err := os.ReadFile(thirdPartyFile)
		if err != nil {
			t.Fatalf("reading the pinned verdicts: %v (record them: go test ./cases -run TestThirdPartyVerdicts -update)", err)
		}
		if err := json.Unmarshal(b, &recorded); err != nil {
			t.Fatalf("%s: %v", thirdPartyFile, err)
		}
		for server, v := range servers {
			if recorded.Servers[server] != v {
				t.Fatalf("%s was recorded against %s %q, and testdata/%s/go.mod requires %q: record it again (go test ./cases -run TestThirdPartyVerdicts -update)",
					thirdPartyFile, server, recorded.Servers[server], server, v)
			}
		}
	}

	var mu sync.Mutex
	fresh := thirdPartyRecord{Servers: servers, Deployments: map[string]map[string]map[string]finding{}}
	runs := 0
	t.Cleanup(func() {
		if t.Failed() || runs != len(thirdPartyDeployments)*len(thirdPartyRevisions) {
			return // a failed or partial run (-run TestThirdPartyVerdicts/NAME) records nothing
		}
		if !*update {
			return
		}
		b, err := json.MarshalIndent(fresh, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(thirdPartyFile, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	})

	for _, d := range thirdPartyDeployments {
		t.Run(d.name, func(t *testing.T) {
			bin := targets.GoBinary(t, d.server)
			type run struct {
				rep *results.Report
				err error
			}
			// Both revisions' runs start before t.Parallel pauses the
			// subtest, each against a server of its own (the observer
			// counts server-wide), so that all deployments' waiting
			// overlaps whatever -parallel is.
			out := make([]run, len(thirdPartyRevisions))
			var wg sync.WaitGroup
			for i, rev := range thirdPartyRevisions {
				var tgt runner.Target
				if d.http {
					url := targets.GoServerHTTP(t, d.server, d.args...)
					tgt = runner.HTTPTarget(d.name, transport.HTTPConfig{URL: url, StallTimeout: everythingStall})
				} else {
					tgt = runner.StdioTarget(d.name, transport.StdioConfig{Argv: []string{bin, "stdio"}})
				}
				cfg := runner.Config{Target: tgt, Profile: prof, Cases: cases.All(), Version: rev,
					Jobs: thirdPartyJobs(tgt.Transport), Starts: runner.DefaultStarts(tgt.Transport)}
				wg.Add(1)
				go func() {
					defer wg.Done()
					out[i].rep, out[i].err = runner.Run(context.Background(), cfg)
				}()
			}
			t.Parallel()
			wg.Wait()
			for i, rev := range thirdPartyRevisions {
				rep, err := out[i].rep, out[i].err
				if err != nil {
					t.Fatalf("%s: %v", rev, err)
				}
				t.Logf("%s %s: %v, %s", d.name, rev, rep.Duration.Round(time.Millisecond), summary(rep))
				got, skip := findings(rep), unobserved(t, rep)
				for id := range skip {
					// Not exercised in this run: what was recorded stands
					// (on -update too; a case never recorded fails).
					if w, ok := recorded.Deployments[d.name][rev][id]; ok {
						got[id] = w
					} else if *update {
						t.Errorf("%s %s %s was not exercised and has no recorded verdict: record again", d.name, rev, id)
					}
				}
				mu.Lock()
				if fresh.Deployments[d.name] == nil {
					fresh.Deployments[d.name] = map[string]map[string]finding{}
				}
				fresh.Deployments[d.name][rev] = got
				runs++
				mu.Unlock()
				if !*update {
					compareThirdParty(t, d.name, rev, recorded.Deployments[d.name][rev], got, skip)
				}
				for _, r := range rep.Results {
					if r.Outcome.Verdict != verdict.Error || matchesAny(couldNotAct, r.Outcome.Summary) {
						continue
					}
					t.Errorf("%s %s %s: an error that is no \"could not act\" reason: %s", d.name, rev, r.ID, chrono.Sanitize(r.Outcome.Summary, false))
				}
				if t.Failed() {
					for _, r := range rep.Results {
						t.Logf("%s %-48s %-5s %-8s %s", rev, r.ID, r.Outcome.Verdict, r.Outcome.Requirement, chrono.Sanitize(r.Outcome.Summary, false))
					}
					// The chronology of each case whose verdict is not the
					// recorded one, to read by hand before a verdict is
					// pinned as a race.
					for _, r := range rep.Results {
						if w, ok := recorded.Deployments[d.name][rev][r.ID]; ok && w != got[r.ID] && !skip[r.ID] {
							logChronology(t, r)
						}
					}
				}
			}
		})
	}
}

// compareThirdParty fails t for every case of deployment dep under rev
// whose verdict is not the recorded one (or, for a racy case, none of
// those its race was seen to reach), but those the run left unobserved.
func compareThirdParty(t *testing.T, dep, rev string, want, got map[string]finding, unobserved map[string]bool) {
	t.Helper()
	comparePinned(t, thirdPartyFile, "TestThirdPartyVerdicts", dep, rev, want, got, unobserved)
}

// comparePinned is compareThirdParty for the verdicts file pinned, which
// the test named test records with -update.
func comparePinned(t *testing.T, pinned, test, dep, rev string, want, got map[string]finding, unobserved map[string]bool) {
	t.Helper()
	if len(want) == 0 {
		t.Errorf("%s holds no verdicts for %s %s (record them: go test ./cases -run %s -update)", pinned, dep, rev, test)
		return
	}
	ids := map[string]bool{}
	for id := range want {
		ids[id] = true
	}
	for id := range got {
		ids[id] = true
	}
	for _, id := range slices.Sorted(func(yield func(string) bool) {
		for id := range ids {
			if !yield(id) {
				return
			}
		}
	}) {
		if unobserved[id] {
			continue
		}
		w, wok := want[id]
		g, gok := got[id]
		if seen, why, ok := racyFor(dep, rev, id); ok {
			for _, f := range []finding{w, g} {
				if !slices.Contains(seen, f) {
					t.Errorf("%s %s %s: %s, which is none of the verdicts its race was seen to reach (%v): %s", dep, rev, id, describe(f), seen, why)
				}
			}
			continue
		}
		switch {
		case !wok:
			t.Errorf("%s %s %s: a new case, %s (re-record: go test ./cases -run %s -update)", dep, rev, id, describe(g), test)
		case !gok:
			t.Errorf("%s %s %s: recorded %s, and the case is gone", dep, rev, id, describe(w))
		case w != g:
			t.Errorf("%s %s %s: recorded %s, now %s", dep, rev, id, describe(w), describe(g))
		}
	}
}

func describe(f finding) string {
	if f.Requirement == "" {
		return string(f.Verdict)
	}
	return fmt.Sprintf("%s %s", f.Verdict, f.Requirement)
}

func matchesAny(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

func globMatch(pattern, s string) bool {
	ok, err := path.Match(pattern, s)
	return err == nil && ok
}
