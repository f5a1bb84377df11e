package runner

import (
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// A citation is in the words of the revision the run used (issue 14.6).
// The teardown grade is the one verdict the runner itself cites: a stdio
// server should exit once its standard input is closed. 2026-07-28 says
// so of the server (STD-46); 2025-11-25 has no server-side sentence, only
// the client's shutdown ladder (STD-7), which relies on the server
// exiting when its input closes. A 2025-11-25 run cites STD-7 as its rule
// and STD-46 as advice, named as a later revision's.

// Under returns the grade citing the requirement of revision: STD-46
// under 2026-07-28; STD-7 under 2025-11-25, with STD-46 as Advice. A grade
// that cites nothing is returned as it is, with its Revision set.
func (g TeardownGrade) Under(revision string) TeardownGrade {
	g.Revision = revision
	if g.Requirement == "" || (g.Verdict != verdict.Warn && g.Verdict != verdict.Fail) {
		return g
	}
	switch revision {
	case spec.V20260728:
		g.Requirement, g.Advice = "STD-46", ""
	case spec.V20251125:
		g.Requirement, g.Advice = "STD-7", "STD-46"
	}
	return g
}

// teardownRevision is the revision a merged run's teardown grade is cited
// under: that of the first session that needed the worst rung, so that
// the rule cited is the one the worst session was held to.
func teardownRevision(results []Result, g TeardownGrade) string {
	for _, r := range results {
		if r.HadSession() && !r.Interrupted && r.Teardown.ExitedAfter == g.Worst && r.Revision != "" {
			return r.Revision
		}
	}
	for _, r := range results {
		if r.Revision != "" {
			return r.Revision
		}
	}
	return ""
}
