package results

import "github.com/mcpflight/mcpflight/verdict"

// A baseline (package baseline) lists the fails and warns a target is
// known to have; a run set against it is a BaselineComparison.

// BaselineFinding is one case (or the teardown) set against its entry.
type BaselineFinding struct {
	// ID is the case ID or TeardownID.
	ID string
	// Listed is the verdict in the baseline, empty when not listed.
	Listed verdict.Verdict
	// Now is the verdict of this run, empty when the case did not run.
	Now verdict.Verdict
	// Summary is this run's one-line summary of the case.
	Summary string
}

// BaselineComparison is a run set against a baseline.
type BaselineComparison struct {
	// Known are listed entries the run confirmed: same verdict.
	Known []BaselineFinding
	// Unexpected are fails and warns the baseline does not list, or lists
	// with a milder verdict (a listed warn that is now a fail).
	Unexpected []BaselineFinding
	// Stale are entries whose case ran and no longer concludes what is
	// listed: it passes now, or a listed fail is now a warn. The baseline
	// should be updated.
	Stale []BaselineFinding
	// Unchecked are entries whose case did not run or ended in skip,
	// info or error: this run says nothing about them.
	Unchecked []BaselineFinding
}

// ExitCode is the run's exit code under the baseline: 1 when a fail is
// unexpected or an entry is stale; otherwise 2 when the report has an
// error or was interrupted; otherwise 0. Known failures, and warns (fails
// only under --strict, which the runner has applied), do not count.
func (c BaselineComparison) ExitCode(r *Report) int {
	fail := len(c.Stale) > 0
	for _, f := range c.Unexpected {
		if f.Now == verdict.Fail {
			fail = true
		}
	}
	if fail {
		return 1
	}
	if r.Interrupted || r.Teardown.Verdict == verdict.Error {
		return 2
	}
	for _, res := range r.Results {
		if res.Outcome.Verdict == verdict.Error {
			return 2
		}
	}
	return 0
}
