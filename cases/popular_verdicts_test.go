package cases_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/cases"
	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/internal/targets"
	"github.com/mcpflight/mcpflight/negotiate"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/runner"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// popularFile pins every verdict TestPopularServersVerdicts reaches. Re-record
// it (after a case's judgement changed on purpose, or a server's version)
// with
//
//	go test ./cases -run TestPopularServersVerdicts -update
const popularFile = "testdata/popular-verdicts.json"

// popularRecord is popularFile: the packages the servers are, as
// installed, and the verdicts by server and revision, the schema check's
// findings under the pseudo-case "schema".
type popularRecord struct {
	Packages map[string]string                        `json:"packages"`
	Servers  map[string]map[string]map[string]finding `json:"servers"`
}

// popularServer is one of the npm servers most people have: no
// long-running, log or task tool, the kind a user checks first.
type popularServer struct {
	name, pkg string
	// argv is the server's command line after node and its script.
	argv func(t *testing.T) []string
	// env is the server's environment beyond ours.
	env func(t *testing.T) []string
	// banner, when set, is written on stdout before the server starts:
	// the classic stdio bug (STD-4).
	banner string
}

var popularServers = []popularServer{
	{name: "server-memory", pkg: "server-memory",
		env: func(t *testing.T) []string {
			return []string{"MEMORY_FILE_PATH=" + filepath.Join(t.TempDir(), "memory.jsonl")}
		}},
	{name: "server-filesystem", pkg: "server-filesystem", argv: func(t *testing.T) []string { return []string{t.TempDir()} }},
	{name: "server-sequential-thinking", pkg: "server-sequential-thinking"},
	{name: "server-memory-banner", pkg: "server-memory", banner: "Knowledge Graph MCP Server starting",
		env: func(t *testing.T) []string {
			return []string{"MEMORY_FILE_PATH=" + filepath.Join(t.TempDir(), "memory.jsonl")}
		}},
}

// popularProfile is what profile init drafts for each of them: no tool
// for any need the catalogue's in-flight cases have, stated as such.
var popularProfile = &profile.Profile{Name: "no-long-running-tool",
	Lacks: []string{profile.NeedSlow, profile.NeedLog, profile.NeedTask}}

// popularPackage is the installed package of an npm server: its script
// and "name version".
func popularPackage(t *testing.T, pkg string) (node, script, version string) {
	t.Helper()
	dir := filepath.Join(targets.NodeModules(), "@modelcontextprotocol", pkg)
	script = filepath.Join(dir, "dist", "index.js")
	node = targets.Need(t, script)
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p struct{ Name, Version string }
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	return node, script, p.Name + " " + p.Version
}

// TestPopularServersVerdicts runs the whole catalogue against three
// popular npm servers (memory, filesystem, sequential-thinking), with the
// profile profile init drafts for them (they lack a slow, log and task
// tool), and pins every verdict: the cases that need such a tool are not
// applicable, every rule that needs none runs. It also runs server-memory
// behind a banner on stdout, which must fail STD-4 in every session. The
// runs negotiate as a user's does (--protocol both): these servers speak
// 2025-11-25 only, and a forced 2026-07-28 run is one line naming the
// revision they offer.
func TestPopularServersVerdicts(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the catalogue against four npm server processes")
	}
	var recorded popularRecord
	if b, err := os.ReadFile(popularFile); err == nil {
		if err := json.Unmarshal(b, &recorded); err != nil {
			t.Fatalf("%s: %v", popularFile, err)
		}
	} else if !*update {
		t.Fatalf("reading the pinned verdicts: %v (record them: go test ./cases -run TestPopularServersVerdicts -update)", err)
	}
	var mu sync.Mutex
	fresh := popularRecord{Packages: map[string]string{}, Servers: map[string]map[string]map[string]finding{}}
	t.Cleanup(func() {
		if !*update || t.Failed() || len(fresh.Servers) != len(popularServers) {
			return
		}
		b, err := json.MarshalIndent(fresh, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(popularFile, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	for _, srv := range popularServers {
		t.Run(srv.name, func(t *testing.T) {
			t.Parallel()
			node, script, version := popularPackage(t, srv.pkg)
			mu.Lock()
			fresh.Packages[srv.pkg] = version
			mu.Unlock()
			if !*update && recorded.Packages[srv.pkg] != version {
				t.Fatalf("%s was recorded against %q, and %q is installed: record it again", popularFile, recorded.Packages[srv.pkg], version)
			}
			argv := []string{node, script}
			if srv.argv != nil {
				argv = append(argv, srv.argv(t)...)
			}
			if srv.banner != "" {
				argv = []string{"/bin/sh", "-c", `echo "$0"; exec "$@"`, srv.banner, node, script}
			}
			cfg := transport.StdioConfig{Argv: argv}
			if srv.env != nil {
				cfg.Env = srv.env(t)
			}
			target := runner.StdioTarget(srv.name, cfg)

			forced, err := runner.RunProtocol(context.Background(), runner.Config{Target: target, Profile: popularProfile, Cases: cases.All()},
				negotiate.Mode20260728, negotiate.Options{})
			var nce *negotiate.NoCommonRevisionError
			if forced != nil || !errors.As(err, &nce) || !slices.Contains(nce.Offered, spec.V20251125) {
				t.Errorf("--protocol 2026-07-28: report %v, error %v; want none, and one line saying the server offers 2025-11-25", forced != nil, err)
			}

			rep, err := runner.RunProtocol(context.Background(), runner.Config{Target: target, Profile: popularProfile, Cases: cases.All(),
				Jobs: runner.DefaultJobs(runner.TransportStdio), Starts: runner.DefaultStarts(runner.TransportStdio)},
				negotiate.ModeBoth, negotiate.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(rep.Revisions, []string{spec.V20251125}) {
				t.Fatalf("revisions %v; want 2025-11-25 alone", rep.Revisions)
			}
			t.Logf("%s: %v, %s, exit %d", srv.name, rep.Duration.Round(time.Millisecond), summary(rep), rep.ExitCode())
			rev := spec.V20251125
			got, skip := findings(rep), unobserved(t, rep)
			for _, f := range rep.Schema.Findings {
				got["schema/"+f.Requirement] = finding{verdict.Fail, f.Requirement}
			}
			mu.Lock()
			fresh.Servers[srv.name] = map[string]map[string]finding{rev: got}
			mu.Unlock()
			if !*update {
				comparePinned(t, popularFile, "TestPopularServersVerdicts", srv.name, rev, recorded.Servers[srv.name][rev], got, skip)
			}
			for _, r := range rep.Results {
				if r.Outcome.Verdict == verdict.Error {
					t.Errorf("%s %s: an error against a real server: %s", srv.name, r.ID, chrono.Sanitize(r.Outcome.Summary, false))
				}
			}
			checkPopularScope(t, srv, rep)
		})
	}
}

// checkPopularScope holds what the pinned verdicts alone would not show:
// the profile put the in-flight cases out of scope, and every rule that
// needs no tool of that kind ran (the cancels of finished and unknown
// requests, malformed cancels, stdout, schema), and a banner fails STD-4.
func checkPopularScope(t *testing.T, srv popularServer, rep *results.Report) {
	t.Helper()
	c := rep.Completeness()
	if c.NotApplicable == 0 || c.Incomplete || !strings.Contains(c.Scope(), "not applicable: the profile states the server has no long-running tool") {
		t.Errorf("%s: completeness %+v, scope %q; want the in-flight cases not applicable and the run complete", srv.name, c, c.Scope())
	}
	ran := map[string]verdict.Verdict{}
	for _, r := range rep.Results {
		ran[r.ID] = r.Outcome.Verdict
	}
	for _, id := range []string{"stdio/stdout-only-messages", "cancel/after-completion", "cancel/unknown-id-ignored", "cancel/missing-request-id",
		"cancel/invalid-request-id", "cancel/no-params", "tasks/ignored-without-capability"} {
		if v := ran[id]; v == verdict.Skip || v == "" {
			t.Errorf("%s: %s did not run (%q): it needs no long-running tool", srv.name, id, v)
		}
	}
	std4 := slices.ContainsFunc(rep.Schema.Findings, func(f results.SchemaFinding) bool { return f.Requirement == "STD-4" })
	if want := srv.banner != ""; std4 != want || (want && ran["stdio/stdout-only-messages"] != verdict.Fail) {
		t.Errorf("%s: STD-4 schema finding %v, stdio/stdout-only-messages %s; want a fail of both exactly when a banner is printed", srv.name, std4, ran["stdio/stdout-only-messages"])
	}
}
