package cases_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/cases"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/runner"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// TestTaskCasesWithoutCapability runs the task cases against the
// reference server started without the tasks capability: TSK-24 is
// judged (the task field ignored) and every case that needs tasks is
// skipped with its reason.
func TestTaskCasesWithoutCapability(t *testing.T) {
	prof, err := profile.Builtin(profile.Reference)
	if err != nil {
		t.Fatal(err)
	}
	sel, err := runner.Select(cases.All(), []string{"tasks/*"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := refserver.New(refserver.Options{NoTasks: true})
	rep, err := runner.Run(ctx, runner.Config{
		Target:       runner.InProcessTarget("reference --no-tasks", srv.ServePipes, transport.StreamConfig{}),
		Profile:      prof,
		Cases:        sel,
		CloseTimeout: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		want := verdict.Skip
		if r.ID == "tasks/ignored-without-capability" {
			want = verdict.Pass
		}
		if r.Outcome.Verdict != want {
			t.Errorf("%s: %s (%s), want %s", r.ID, r.Outcome.Verdict, r.Outcome.Summary, want)
		}
	}
}

// TestTaskCasesPickFromToolsList runs the cases that need only what
// tools/list says of the tools against the reference server with a
// profile that names no task tool: each runs, none skips
// for want of a profile entry, and tasks/tool-task-support says which
// tool it picked.
func TestTaskCasesPickFromToolsList(t *testing.T) {
	t.Parallel()
	prof, err := profile.Builtin(profile.Reference)
	if err != nil {
		t.Fatal(err)
	}
	prof.Task = nil
	ids := []string{"tasks/capability-shape", "tasks/tool-task-support", "tasks/forbidden-with-task"}
	sel, err := runner.Select(cases.All(), ids)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := refserver.New(refserver.Options{})
	rep, err := runner.Run(ctx, runner.Config{
		Target:       runner.InProcessTarget("reference", srv.ServePipes, transport.StreamConfig{}),
		Profile:      prof,
		Cases:        sel,
		CloseTimeout: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != len(ids) {
		t.Fatalf("%d results, want %d", len(rep.Results), len(ids))
	}
	for _, r := range rep.Results {
		t.Logf("%s: %s %s", r.ID, r.Outcome.Verdict, r.Outcome.Summary)
		if r.Outcome.Verdict != verdict.Pass {
			t.Errorf("%s: %s (%s), want pass with no profile task tool", r.ID, r.Outcome.Verdict, r.Outcome.Summary)
		}
		if r.ID == "tasks/tool-task-support" && !strings.Contains(r.Outcome.Summary, "picked from tools/list") {
			t.Errorf("%s: %q does not say the tool was picked from tools/list", r.ID, r.Outcome.Summary)
		}
	}
}
