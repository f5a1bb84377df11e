package verdict

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpflight/mcpflight/spec"
)

// Errors of a rule that cannot be judged: each is a bug of the harness (a
// case citing the wrong row), never something the target did.
var (
	// ErrUnknownRequirement: the registry has no row with the ID.
	ErrUnknownRequirement = errors.New("no such requirement in the registry")
	// ErrNotInRevision: the row's sentence is not in the run's revision.
	ErrNotInRevision = errors.New("the requirement is not in this protocol revision")
	// ErrCompoundLevel: the row's level has more than one keyword
	// ("SHOULD / MUST"), and the rule names no clause.
	ErrCompoundLevel = errors.New("the requirement's level has more than one keyword; the rule must name the clause broken")
	// ErrNoSuchClause: the clause named is not a keyword of the row.
	ErrNoSuchClause = errors.New("the clause named is not a keyword of the requirement's level")
	// ErrUnknownLevel: the row's level is not one Severity knows.
	ErrUnknownLevel = errors.New("unknown requirement level")
	// ErrBadException: an exception without a reason, or to a verdict a
	// broken rule cannot give.
	ErrBadException = errors.New("an exception needs a reason and a verdict of fail, warn or info")
	// ErrNotCited: the case cites a requirement it does not declare.
	ErrNotCited = errors.New("the case does not declare the requirement it cites")
)

// Severity is the verdict that evidence breaking a sentence of the given
// level gives:
//
//   - MUST, MUST NOT, REQUIRED, SHALL, SHALL NOT: fail;
//   - SHOULD, SHOULD NOT, RECOMMENDED, NOT RECOMMENDED: warn;
//   - MAY, OPTIONAL: info (the spec leaves the behaviour open, so the
//     evidence records which branch the target took);
//   - DEF: fail. A DEF row has no keyword but defines what the protocol
//     is (the eight log levels, what a capability means, that tasks/get
//     is served while tasks/result blocks); a peer outside the definition
//     is not speaking the protocol, as with a schema violation;
//   - "should (lc)": warn. A lower-case "should" is not normative under
//     RFC 8174, but it is the only text on the point and it cannot weigh
//     more than an upper-case SHOULD.
//
// A compound level ("SHOULD / MUST", "MAY/SHOULD") has no single severity:
// the rule must name the clause its evidence breaks (ErrCompoundLevel).
func Severity(level string) (Verdict, error) {
	switch strings.TrimSpace(level) {
	case "MUST", "MUST NOT", "REQUIRED", "SHALL", "SHALL NOT", "DEF":
		return Fail, nil
	case "SHOULD", "SHOULD NOT", "RECOMMENDED", "NOT RECOMMENDED", "should (lc)":
		return Warn, nil
	case "MAY", "OPTIONAL":
		return Info, nil
	}
	if len(Keywords(level)) > 1 {
		return "", fmt.Errorf("%w: %q", ErrCompoundLevel, level)
	}
	return "", fmt.Errorf("%w %q", ErrUnknownLevel, level)
}

// Keywords splits a registry level into its keywords: "SHOULD NOT / MUST"
// is ["SHOULD NOT", "MUST"], "MAY" is ["MAY"].
func Keywords(level string) []string {
	var out []string
	for _, k := range strings.Split(level, "/") {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, k)
		}
	}
	return out
}

// Rule names the requirement a piece of evidence breaks: one registry ID,
// another ID under a revision whose registry row for the same behaviour
// is a different sentence (Under), the clause of a compound level
// (Clause), and a deliberate departure from the registry's severity with
// its reason (Except).
type Rule struct {
	id     string
	under  map[string]string
	clause string
	except Verdict
	reason string
}

// Req is the rule that cites the requirement id under every revision.
func Req(id string) Rule { return Rule{id: id} }

// Under cites id instead under revision: the registry has one row per
// sentence, so the same behaviour can be CAN-8 (SHOULD) under 2025-11-25
// and CAN-54 (MUST NOT) under 2026-07-28.
func (r Rule) Under(revision, id string) Rule {
	under := make(map[string]string, len(r.under)+1)
	for k, v := range r.under {
		under[k] = v
	}
	under[revision] = id
	r.under = under
	return r
}

// Clause names the keyword of a compound level that the evidence breaks:
// Req("TSK-64").Clause("MUST") for "MUST transition the task to
// cancelled", Clause("SHOULD") for "SHOULD attempt to stop". It is the
// clause of Req's own row: an ID cited instead under a revision (Under)
// is judged at its row's level.
func (r Rule) Clause(keyword string) Rule {
	r.clause = keyword
	return r
}

// Except departs from the registry's severity: the evidence gives v
// (fail, warn or info) whatever the level says, for the reason written
// here, which the Outcome carries. Use it only where the registry's level
// would misstate what the evidence shows (a heuristic that cannot prove a
// MUST broken, a sentence that does not literally cover the situation).
func (r Rule) Except(v Verdict, reason string) Rule {
	r.except, r.reason = v, reason
	return r
}

// ID is the requirement the rule cites under revision.
func (r Rule) ID(revision string) string {
	if id, ok := r.under[revision]; ok {
		return id
	}
	return r.id
}

// IDs is every requirement the rule can cite, the default first.
func (r Rule) IDs() []string {
	out := []string{r.id}
	revs := make([]string, 0, len(r.under))
	for rev := range r.under {
		revs = append(revs, rev)
	}
	slices.Sort(revs)
	for _, rev := range revs {
		if !slices.Contains(out, r.under[rev]) {
			out = append(out, r.under[rev])
		}
	}
	return out
}

// Exception returns the departure from the registry, if any: the verdict
// and its reason.
func (r Rule) Exception() (Verdict, string) { return r.except, r.reason }

// Judgement is a rule resolved against the registry for one revision.
type Judgement struct {
	// ID is the requirement cited, Level the keyword that decided.
	ID, Level string
	// Verdict is what the evidence gives.
	Verdict Verdict
	// Exception is the reason when Verdict departs from Level.
	Exception string
}

// Judge resolves the rule for revision. Every error is a bug of the
// harness: a requirement that does not exist or is not in the revision, a
// compound level without a clause, an exception without a reason.
func (r Rule) Judge(revision string) (Judgement, error) {
	id := r.ID(revision)
	req, ok := spec.Lookup(id)
	if !ok {
		return Judgement{}, fmt.Errorf("%s: %w", id, ErrUnknownRequirement)
	}
	if !req.AppliesTo(revision) {
		return Judgement{}, fmt.Errorf("%s (%s) cited under %s: %w", id, req.Versions, revision, ErrNotInRevision)
	}
	level := req.Level
	if r.clause != "" && id == r.id {
		if !slices.Contains(Keywords(req.Level), r.clause) && !sentenceHasKeyword(req.Quote, r.clause) {
			return Judgement{}, fmt.Errorf("%s: clause %q of level %q: %w", id, r.clause, req.Level, ErrNoSuchClause)
		}
		level = r.clause
	}
	v, err := Severity(level)
	if err != nil {
		return Judgement{}, fmt.Errorf("%s: %w", id, err)
	}
	j := Judgement{ID: id, Level: level, Verdict: v}
	if r.except != "" || r.reason != "" {
		if strings.TrimSpace(r.reason) == "" || (r.except != Fail && r.except != Warn && r.except != Info) {
			return Judgement{}, fmt.Errorf("%s: %w", id, ErrBadException)
		}
		j.Verdict, j.Exception = r.except, r.reason
	}
	return j, nil
}

// sentenceHasKeyword reports whether the quoted sentence holds keyword
// as an upper-case RFC 2119 phrase of its own: the registry gives
// "Servers SHOULD stop work ... and MUST NOT send any further messages"
// (CAN-54, CAN-56) the level of its stricter clause, MUST NOT, and a rule
// whose evidence breaks the SHOULD names that clause. "MUST" does not
// match inside "MUST NOT", nor "SHOULD" inside "SHOULD NOT".
func sentenceHasKeyword(quote, keyword string) bool {
	if _, err := Severity(keyword); err != nil {
		return false
	}
	for rest := quote; ; {
		i := strings.Index(rest, keyword)
		if i < 0 {
			return false
		}
		before, after := rest[:i], rest[i+len(keyword):]
		rest = after
		if before != "" && isUpperLetter(before[len(before)-1]) {
			continue
		}
		if after != "" && isUpperLetter(after[0]) {
			continue
		}
		if !strings.HasSuffix(keyword, " NOT") && strings.HasPrefix(after, " NOT") {
			continue
		}
		if !strings.HasPrefix(keyword, "NOT ") && strings.HasSuffix(before, "NOT ") {
			continue
		}
		return true
	}
}

func isUpperLetter(b byte) bool { return b >= 'A' && b <= 'Z' }

// Broken is the outcome of evidence that breaks rule under revision: the
// registry's level decides the verdict. A rule that cannot be judged
// (Judge's errors) gives an error outcome naming the harness bug, never a
// verdict about the target.
func Broken(revision string, rule Rule, expected []string, actual string, seq uint64) Outcome {
	j, err := rule.Judge(revision)
	if err != nil {
		return HarnessBug(err)
	}
	o := Outcome{Verdict: j.Verdict, Requirement: j.ID, Level: j.Level, Exception: j.Exception,
		Expected: expected, Actual: actual, ActualSeq: seq,
		Summary: fmt.Sprintf("%s violated: %s", j.ID, actual)}
	if j.Verdict == Info {
		o.Summary = fmt.Sprintf("%s (%s, open): %s", j.ID, j.Level, actual)
	}
	return o
}

// HarnessBug is the error outcome of a case that cited its rule wrongly.
func HarnessBug(err error) Outcome {
	return Errorf("harness bug: %v", err)
}
