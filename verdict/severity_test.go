package verdict

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpflight/mcpflight/spec"
)

func TestSeverity(t *testing.T) {
	for _, tc := range []struct {
		level string
		want  Verdict
		err   error
	}{
		{"MUST", Fail, nil},
		{"MUST NOT", Fail, nil},
		{"REQUIRED", Fail, nil},
		{"DEF", Fail, nil},
		{"SHOULD", Warn, nil},
		{"SHOULD NOT", Warn, nil},
		{"RECOMMENDED", Warn, nil},
		{"should (lc)", Warn, nil},
		{"MAY", Info, nil},
		{"OPTIONAL", Info, nil},
		{"SHOULD / MUST", "", ErrCompoundLevel},
		{"MAY/SHOULD", "", ErrCompoundLevel},
		{"PERHAPS", "", ErrUnknownLevel},
	} {
		got, err := Severity(tc.level)
		if got != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("Severity(%q) = %q, %v; want %q, %v", tc.level, got, err, tc.want, tc.err)
		}
	}
}

// TestEveryRegistryLevelIsKnown: each level of the registry gives a
// severity, or is compound and needs a clause whose keywords do.
func TestEveryRegistryLevelIsKnown(t *testing.T) {
	for _, r := range spec.All() {
		if _, err := Severity(r.Level); err == nil {
			continue
		} else if !errors.Is(err, ErrCompoundLevel) {
			t.Errorf("%s: %v", r.ID, err)
			continue
		}
		for _, k := range Keywords(r.Level) {
			if _, err := Severity(k); err != nil {
				t.Errorf("%s: keyword %q: %v", r.ID, k, err)
			}
		}
	}
}

func TestJudge(t *testing.T) {
	cancelRule := Req("CAN-8").Under(spec.V20260728, "CAN-54")
	for _, tc := range []struct {
		name     string
		rule     Rule
		revision string
		want     Judgement
		err      error
	}{
		{"SHOULD under 2025-11-25", cancelRule, spec.V20251125, Judgement{ID: "CAN-8", Level: "SHOULD", Verdict: Warn}, nil},
		{"the same behaviour, MUST NOT under 2026-07-28", cancelRule, spec.V20260728, Judgement{ID: "CAN-54", Level: "MUST NOT", Verdict: Fail}, nil},
		{"a 2025 row cited under 2026", Req("CAN-8"), spec.V20260728, Judgement{}, ErrNotInRevision},
		{"a row that does not exist", Req("CAN-999"), spec.V20251125, Judgement{}, ErrUnknownRequirement},
		{"a compound level without a clause", Req("TSK-64"), spec.V20251125, Judgement{}, ErrCompoundLevel},
		{"the MUST clause", Req("TSK-64").Clause("MUST"), spec.V20251125, Judgement{ID: "TSK-64", Level: "MUST", Verdict: Fail}, nil},
		{"the SHOULD clause", Req("TSK-64").Clause("SHOULD"), spec.V20251125, Judgement{ID: "TSK-64", Level: "SHOULD", Verdict: Warn}, nil},
		{"a clause the row does not have", Req("TSK-64").Clause("MAY"), spec.V20251125, Judgement{}, ErrNoSuchClause},
		{"a MAY", Req("HTTP-43"), spec.V20251125, Judgement{ID: "HTTP-43", Level: "MAY", Verdict: Info}, nil},
		{"an exception with its reason", Req("TSK-81").Except(Warn, "a heuristic"), spec.V20251125,
			Judgement{ID: "TSK-81", Level: "MUST", Verdict: Warn, Exception: "a heuristic"}, nil},
		{"an exception without a reason", Req("TSK-81").Except(Warn, " "), spec.V20251125, Judgement{}, ErrBadException},
		{"an exception to pass", Req("TSK-81").Except(Pass, "why"), spec.V20251125, Judgement{}, ErrBadException},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.rule.Judge(tc.revision)
			if !errors.Is(err, tc.err) {
				t.Fatalf("Judge: %v, want %v", err, tc.err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Judge (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBroken(t *testing.T) {
	o := Broken(spec.V20251125, Req("CAN-8"), []string{"no response"}, "a response arrived", 7)
	want := Outcome{Verdict: Warn, Requirement: "CAN-8", Level: "SHOULD", Expected: []string{"no response"},
		Actual: "a response arrived", ActualSeq: 7, Summary: "CAN-8 violated: a response arrived"}
	if diff := cmp.Diff(want, o); diff != "" {
		t.Errorf("Broken (-want +got):\n%s", diff)
	}
	bug := Broken(spec.V20260728, Req("CAN-8"), nil, "a response arrived", 7)
	if bug.Verdict != Error || bug.Requirement != "" {
		t.Errorf("a rule not in the revision gave %+v, want an error naming the harness bug", bug)
	}
	if want := "harness bug: CAN-8 (25) cited under 2026-07-28: the requirement is not in this protocol revision"; bug.Summary != want {
		t.Errorf("summary %q, want %q", bug.Summary, want)
	}
}

func TestRuleIDs(t *testing.T) {
	r := Req("CAN-8").Under(spec.V20260728, "CAN-54")
	if diff := cmp.Diff([]string{"CAN-8", "CAN-54"}, r.IDs()); diff != "" {
		t.Errorf("IDs (-want +got):\n%s", diff)
	}
	// Under copies: the first rule is unchanged.
	base := Req("STD-7")
	_ = base.Under(spec.V20260728, "STD-46")
	if base.ID(spec.V20260728) != "STD-7" {
		t.Error("Under changed the rule it was called on")
	}
}

func TestBlamed(t *testing.T) {
	o := Blamed("liveness ping", "PNG-1", "ping/empty-result", "error -32603")
	if o.Verdict != Blocked || o.Blame == nil || o.Blame.Case != "ping/empty-result" ||
		o.Summary != "blocked by ping/empty-result: liveness ping failed (PNG-1): error -32603" {
		t.Errorf("Blamed = %+v", o)
	}
}

// TestClauseIsTheBaseRows: a clause names a keyword of Req's own row; the
// row cited instead under another revision is judged at its own level
// (HTTP-22 MAY/SHOULD under 2025-11-25, LOG-46 MUST under 2026-07-28).
func TestClauseIsTheBaseRows(t *testing.T) {
	r := Req("HTTP-22").Under(spec.V20260728, "LOG-46").Clause("SHOULD")
	for _, tc := range []struct {
		rev  string
		want Judgement
	}{
		{spec.V20251125, Judgement{ID: "HTTP-22", Level: "SHOULD", Verdict: Warn}},
		{spec.V20260728, Judgement{ID: "LOG-46", Level: "MUST", Verdict: Fail}},
	} {
		got, err := r.Judge(tc.rev)
		if err != nil {
			t.Fatalf("%s: %v", tc.rev, err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.rev, diff)
		}
	}
}

// TestUnexercised: a case that could not exercise its rule is a skip that
// says so and is marked, never a pass or an info.
func TestUnexercised(t *testing.T) {
	o := Unexercised("request %d completed before the cancel could be sent", 3)
	if o.Verdict != Skip || !o.Unexercised || o.Summary != "not exercised: request 3 completed before the cancel could be sent" {
		t.Errorf("Unexercised = %+v", o)
	}
	if Skipf("no tool").Unexercised {
		t.Error("a plain skip is marked unexercised")
	}
}
