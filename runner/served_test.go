package runner

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

func TestGradeServed(t *testing.T) {
	sessions := results.TeardownGrade{Sessions: 3, Verdict: verdict.Pass, Summary: "all 3 sessions were ended with DELETE (or had none to end)"}
	tests := []struct {
		name      string
		td        transport.Teardown
		verdict   verdict.Verdict
		leftovers int
		says      string
	}{
		{"sigterm", transport.Teardown{ExitedAfter: transport.StepSIGTERM, Waited: 12 * time.Millisecond}, verdict.Pass, 0,
			"stopped on SIGTERM in 12ms (exit code 0)"},
		{"sigkill", transport.Teardown{ExitedAfter: transport.StepSIGKILL, ExitCode: -1, Signal: "killed", Waited: 2 * time.Second}, verdict.Pass, 0,
			"ignored SIGTERM and was killed with SIGKILL after 2s"},
		{"exited early", transport.Teardown{ExitedAfter: transport.StepNone, ExitCode: 1}, verdict.Error, 0,
			"had exited before the end of the run (exit code 1)"},
		{"leftovers", transport.Teardown{ExitedAfter: transport.StepSIGTERM, Leftovers: 2}, verdict.Error, 2,
			"2 of its processes were still alive after SIGKILL"},
		{"failed", transport.Teardown{ExitedAfter: transport.StepSIGKILL, Err: errors.New("pid 7 did not exit")}, verdict.Error, 0,
			"its teardown failed: pid 7 did not exit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := GradeServed(sessions, "srv --http 127.0.0.1:8080", tt.td)
			if diff := cmp.Diff([]any{tt.verdict, tt.leftovers}, []any{g.Verdict, g.Leftovers}); diff != "" {
				t.Errorf("verdict, leftovers (-want +got):\n%s", diff)
			}
			want := sessions.Summary + "; the HTTP server mcpflight started (srv --http 127.0.0.1:8080) "
			if !strings.HasPrefix(g.Summary, want) || !strings.Contains(g.Summary, tt.says) {
				t.Errorf("summary %q, want %q… saying %q", g.Summary, want, tt.says)
			}
		})
	}
}
