//go:build unix

package clientrun

import (
	"testing"

	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/verdict"
)

// TestClientTeardown: a client the harness had to stop is info, not a
// server's STD-46; leftovers and teardown errors keep their grade.
func TestClientTeardown(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   results.TeardownGrade
		want verdict.Verdict
		req  string
	}{
		{"stopped", results.TeardownGrade{Sessions: 3, Verdict: verdict.Warn, Requirement: "STD-46",
			Steps: map[results.Step]int{results.StepNone: 2, results.StepSIGTERM: 1}}, verdict.Info, ""},
		{"killed", results.TeardownGrade{Sessions: 1, Verdict: verdict.Fail, Requirement: "STD-7",
			Steps: map[results.Step]int{results.StepSIGKILL: 1}}, verdict.Info, ""},
		{"leftovers", results.TeardownGrade{Sessions: 1, Verdict: verdict.Fail, Requirement: "STD-7", Leftovers: 2,
			Steps: map[results.Step]int{results.StepSIGTERM: 1}}, verdict.Fail, "STD-7"},
		{"clean", results.TeardownGrade{Sessions: 2, Verdict: verdict.Pass,
			Steps: map[results.Step]int{results.StepNone: 2}}, verdict.Pass, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := clientTeardown(tc.in)
			if g.Verdict != tc.want || g.Requirement != tc.req {
				t.Errorf("verdict %s (%q), want %s (%q): %s", g.Verdict, g.Requirement, tc.want, tc.req, g.Summary)
			}
		})
	}
}
