//go:build unix

package clientrun

import (
	"testing"

	"github.com/mcpflight/mcpflight/runner"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// TestClientTeardown: a client the harness had to stop is info, not a
// server's STD-46; leftovers and teardown errors keep their grade.
func TestClientTeardown(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   runner.TeardownGrade
		want verdict.Verdict
		req  string
	}{
		{"stopped", runner.TeardownGrade{Sessions: 3, Verdict: verdict.Warn, Requirement: "STD-46",
			Steps: map[transport.Step]int{transport.StepNone: 2, transport.StepSIGTERM: 1}}, verdict.Info, ""},
		{"killed", runner.TeardownGrade{Sessions: 1, Verdict: verdict.Fail, Requirement: "STD-7",
			Steps: map[transport.Step]int{transport.StepSIGKILL: 1}}, verdict.Info, ""},
		{"leftovers", runner.TeardownGrade{Sessions: 1, Verdict: verdict.Fail, Requirement: "STD-7", Leftovers: 2,
			Steps: map[transport.Step]int{transport.StepSIGTERM: 1}}, verdict.Fail, "STD-7"},
		{"clean", runner.TeardownGrade{Sessions: 2, Verdict: verdict.Pass,
			Steps: map[transport.Step]int{transport.StepNone: 2}}, verdict.Pass, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := clientTeardown(tc.in)
			if g.Verdict != tc.want || g.Requirement != tc.req {
				t.Errorf("verdict %s (%q), want %s (%q): %s", g.Verdict, g.Requirement, tc.want, tc.req, g.Summary)
			}
		})
	}
}
