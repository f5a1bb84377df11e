package results

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mcpflight/mcpflight/verdict"
)

// The run's outcome has a third value beside conformant and
// non-conformant: incomplete. A run in which most cases were skipped
// (the profile names no tool, the revision has no cases, the server
// declares nothing they need) tested too little to be called
// conformant, however green its few results.

// ExitIncomplete is the exit code of an incomplete run: no fail and no
// error, but fewer than half of the applicable cases ran.
const ExitIncomplete = 3

// Completeness says how much of the selected catalogue a run exercised.
type Completeness struct {
	// Selected is the number of cases the run had.
	Selected int
	// OtherTransport counts the cases skipped because they are for
	// another transport than the target's: they do not apply to it, and
	// nothing about the target would let them run.
	OtherTransport int
	// OtherRevision counts the cases skipped because they apply only to
	// another revision than the one they were run under: they are not
	// this run's rules (under --protocol both, they ran under the other).
	OtherRevision int
	// NotApplicable counts the cases skipped because the profile states
	// the server has no tool of the kind they need
	// (verdict.Outcome.NotApplicable); NotApplicableWhy lists those
	// reasons, each once, in the order met.
	NotApplicable    int
	NotApplicableWhy []string
	// Applicable is Selected minus OtherTransport, OtherRevision and
	// NotApplicable.
	Applicable int
	// Ran is the number of applicable cases that did not end in skip.
	Ran int
	// NotRun is Applicable minus Ran.
	NotRun int
	// Reason is the most common skip reason among the cases that did
	// not run, and ReasonCount how many gave it; Remedy is the one thing
	// that would let them run, in the user's terms.
	Reason      string
	ReasonCount int
	Remedy      string
	// Incomplete is set when fewer than half of the applicable cases
	// ran (or none applied at all).
	Incomplete bool
	// Rules is set when the report judged a conversation (Role
	// RoleConversation): its results are rules, which a conversation
	// exercised or gave nothing to judge.
	Rules bool
}

// otherTransport reports whether a skip's reason is the runner's for a
// case of another transport ("needs the http transport; the target uses
// stdio").
func otherTransport(summary string) bool {
	return strings.HasPrefix(summary, "needs the ") && strings.Contains(summary, " transport; the target uses ")
}

// otherRevision reports whether a skip's reason is the runner's for a
// case of another revision ("applies to 2026-07-28 only").
func otherRevision(summary string) bool {
	return strings.HasPrefix(summary, "applies to ") && strings.HasSuffix(summary, " only")
}

// Completeness counts what the run exercised. The threshold: a run is
// incomplete when fewer than half of the cases that apply to its
// transport and revision ran (a case that ran is one whose verdict is
// neither skip nor blocked), or when cases were selected and none
// applied.
func (r *Report) Completeness() Completeness {
	c := Completeness{Rules: r.Role == RoleConversation}
	reasons, excluded := map[string]int{}, map[string]int{}
	for _, res := range r.Results {
		if res.Area == AreaPassive {
			continue // no case: a finding of the passive rules
		}
		c.Selected++
		if res.Outcome.Verdict == verdict.Blocked {
			// It judged nothing of its own: another case carries the
			// finding that stopped it.
			reasons["blocked by "+res.Outcome.Blame.Case]++
			continue
		}
		if res.Outcome.Verdict != verdict.Skip {
			c.Ran++
			continue
		}
		if res.Outcome.NotApplicable {
			c.NotApplicable++
			if !slices.Contains(c.NotApplicableWhy, res.Outcome.Summary) {
				c.NotApplicableWhy = append(c.NotApplicableWhy, res.Outcome.Summary)
			}
			continue
		}
		if otherTransport(res.Outcome.Summary) {
			c.OtherTransport++
			continue
		}
		if otherRevision(res.Outcome.Summary) {
			c.OtherRevision++
			excluded[res.Outcome.Summary]++
			continue
		}
		reasons[res.Outcome.Summary]++
	}
	if c.Ran == 0 && len(reasons) == 0 {
		// Nothing applied: what would is the revision the cases are for.
		reasons = excluded
	}
	c.Applicable = c.Selected - c.OtherTransport - c.OtherRevision - c.NotApplicable
	c.NotRun = c.Applicable - c.Ran
	keys := make([]string, 0, len(reasons))
	for k := range reasons {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if reasons[keys[i]] != reasons[keys[j]] {
			return reasons[keys[i]] > reasons[keys[j]]
		}
		return keys[i] < keys[j]
	})
	if len(keys) > 0 {
		c.Reason, c.ReasonCount = keys[0], reasons[keys[0]]
		c.Remedy = remedy(c.Reason)
	}
	c.Incomplete = c.Selected > 0 && (c.Applicable == 0 || 2*c.Ran < c.Applicable)
	return c
}

// remedy turns a skip reason into the thing that would let the case
// run, as the end of "N of them would run …"; "" when there is nothing
// to say beyond the reason.
func remedy(reason string) string {
	switch {
	case strings.HasPrefix(reason, "applies to ") && strings.HasSuffix(reason, " only"):
		rev := strings.TrimSuffix(strings.TrimPrefix(reason, "applies to "), " only")
		return "under " + rev + " (--protocol " + rev + ")"
	case strings.HasPrefix(reason, "profile names no "):
		need, _, _ := strings.Cut(strings.TrimPrefix(reason, "profile names no "), ";")
		return "with a profile that names a " + need + " (mcpflight profile init drafts one; pass it with --profile)"
	}
	return ""
}

// Scope is what a run that is not incomplete says of what it left out
// of scope, so that it never reads as a full pass: "38 cases not
// applicable: the profile states the server has no long-running tool
// with progress (lacks: slow); …"; "" when no case was not applicable.
func (c Completeness) Scope() string {
	if c.NotApplicable == 0 {
		return ""
	}
	why := make([]string, len(c.NotApplicableWhy))
	for i, w := range c.NotApplicableWhy {
		why[i] = strings.TrimPrefix(w, "not applicable: ")
	}
	cases := "cases"
	if c.NotApplicable == 1 {
		cases = "case"
	}
	// "the profile states the server has no X" for several X is said
	// once: "… has no X, no Y".
	const lacks = "the profile states the server has "
	if len(why) > 1 && !slices.ContainsFunc(why, func(w string) bool { return !strings.HasPrefix(w, lacks) }) {
		for i := range why {
			why[i] = strings.TrimPrefix(why[i], lacks)
		}
		return fmt.Sprintf("%d %s not applicable: %s%s", c.NotApplicable, cases, lacks, strings.Join(why, ", "))
	}
	return fmt.Sprintf("%d %s not applicable: %s", c.NotApplicable, cases, strings.Join(why, "; "))
}

// Line is the sentence the reports print for an incomplete run: how many
// cases did not run and the one thing that would let them run.
func (c Completeness) Line() string {
	line := fmt.Sprintf("incomplete: %d of %d applicable cases did not run", c.NotRun, c.Applicable)
	if c.Rules {
		line = fmt.Sprintf("incomplete: the conversation gave %d of %d rules nothing to judge", c.NotRun, c.Applicable)
		return line
	}
	if c.Applicable == 0 {
		line = fmt.Sprintf("incomplete: none of the %d cases applies to this run", c.Selected)
	}
	switch {
	case c.Remedy != "":
		line += fmt.Sprintf("; %d of them would run %s", c.ReasonCount, c.Remedy)
	case c.Reason != "":
		line += fmt.Sprintf("; %d of them: %s", c.ReasonCount, c.Reason)
	}
	return line
}
