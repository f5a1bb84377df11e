package runner

import (
	"strings"

	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// A citation is in the words of the revision the run used.
// The teardown grade is the one verdict the runner itself cites: a stdio
// server should exit once its standard input is closed. 2026-07-28 says
// so of the server (STD-46); 2025-11-25 has no server-side sentence, only
// the client's shutdown ladder (STD-7), which relies on the server
// exiting when its input closes. A 2025-11-25 run cites STD-7 as its rule
// and STD-46 as advice, named as a later revision's.

// signalRule is the rule a stdio teardown breaks when the server did not
// exit on its own once its input closed, in the words of each revision:
// STD-7 (2025-11-25, the client's shutdown ladder), STD-46 (2026-07-28,
// the server's own sentence). Both are SHOULDs, so the registry gives a
// warn; killed names the exception to fail.
func signalRule(killed bool) verdict.Rule {
	r := verdict.Req("STD-7").Under(spec.V20260728, "STD-46")
	if killed {
		r = r.Except(verdict.Fail, "the server ignored both its closed stdin and SIGTERM, or left processes running after "+
			"teardown: only SIGKILL or nothing at all ends it, so a client cannot shut it down as the rule describes, "+
			"which is more than the SHOULD's warn")
	}
	return r
}

// rule is the rule the grade cites, from what the sessions needed, and
// whether it cites one (pass, skip and error cite none). The order is
// GradeTeardown's.
func teardownRule(g results.TeardownGrade) (verdict.Rule, bool) {
	switch {
	case g.Sessions == 0:
		return verdict.Rule{}, false
	case g.Leftovers > 0 || g.Worst == results.StepSIGKILL:
		return signalRule(true), true
	case len(g.Errors) > 0:
		return verdict.Rule{}, false
	case g.Worst == results.StepSIGTERM:
		return signalRule(false), true
	}
	return verdict.Rule{}, false
}

// strictSuffix ends the summary of a warn graded fail under --strict.
const strictSuffix = " (warn under --strict)"

// CiteTeardown returns the grade g citing the requirement of revision, with the
// verdict the registry gives it there (verdict.Rule.Judge): STD-46 under
// 2026-07-28; STD-7 under 2025-11-25, with STD-46, the later revision's
// sentence, as Advice. A grade placed under no revision, or one the
// registry does not know, is judged as under the runner's default,
// 2025-11-25. A grade that cites nothing is returned as it is, with its
// Revision set.
func CiteTeardown(g results.TeardownGrade, revision string) results.TeardownGrade {
	g.Revision = revision
	rule, ok := teardownRule(g)
	if !ok {
		return g
	}
	judged := revision
	if judged != spec.V20251125 && judged != spec.V20260728 {
		judged = spec.V20251125
	}
	j, err := rule.Judge(judged)
	if err != nil {
		g.Verdict, g.Requirement, g.Advice = verdict.Error, "", ""
		g.Summary = verdict.HarnessBug(err).Summary
		return g
	}
	g.Verdict, g.Requirement, g.Advice = j.Verdict, j.ID, ""
	if later := rule.ID(spec.V20260728); judged != spec.V20260728 && later != j.ID {
		g.Advice = later
	}
	if g.Strict && g.Verdict == verdict.Warn {
		g.Verdict = verdict.Fail
		if !strings.HasSuffix(g.Summary, strictSuffix) {
			g.Summary += strictSuffix
		}
	}
	return g
}

// teardownRevision is the revision a merged run's teardown grade is cited
// under: that of the first session that needed the worst rung, so that
// the rule cited is the one the worst session was held to.
func teardownRevision(rs []results.Result, g results.TeardownGrade) string {
	for _, r := range rs {
		if r.HadSession() && !r.Interrupted && r.Teardown.ExitedAfter == g.Worst && r.Revision != "" {
			return r.Revision
		}
	}
	for _, r := range rs {
		if r.Revision != "" {
			return r.Revision
		}
	}
	return ""
}
