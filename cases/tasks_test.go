package cases_test

import (
	"context"
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
