package report

import (
	"bytes"
	"html"
	"strings"
	"testing"

	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/spec"
)

// TestTeardownCitedInTheRunsRevision: a 2025-11-25 run whose server
// needed SIGTERM cites STD-7, the rule of its revision, in every format;
// STD-46, which 2026-07-28 alone has, appears only as a later revision's
// advice, never as the requirement.
func TestTeardownCitedInTheRunsRevision(t *testing.T) {
	rep := fixedReport()
	if rep.Teardown.Requirement != "STD-7" || rep.Teardown.Advice != "STD-46" {
		t.Fatalf("teardown grade cites %q with advice %q, want STD-7 and STD-46", rep.Teardown.Requirement, rep.Teardown.Advice)
	}
	render := map[string]func(*bytes.Buffer, *results.Report) error{
		"text":  func(b *bytes.Buffer, r *results.Report) error { return Text(b, r, TextOptions{}) },
		"json":  func(b *bytes.Buffer, r *results.Report) error { return JSON(b, r) },
		"junit": func(b *bytes.Buffer, r *results.Report) error { return JUnit(b, r) },
		"html":  func(b *bytes.Buffer, r *results.Report) error { return HTML(b, r) },
	}
	for name, f := range render {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := f(&buf, rep); err != nil {
				t.Fatal(err)
			}
			out := html.UnescapeString(buf.String())
			for _, bad := range []string{"Requirement: STD-46", `"requirement": "STD-46"`} {
				if strings.Contains(out, bad) {
					t.Errorf("%s quotes the 2026-07-28 rule as the requirement (%q)", name, bad)
				}
			}
			want := []string{"STD-7", "STD-46"}
			if name != "json" {
				want = append(want, "Advice: STD-46 SHOULD (2026-07-28, a later revision's rule; not a rule of 2025-11-25, applied as advice)")
			} else {
				want = append(want, `"advice": "STD-46"`)
			}
			for _, w := range want {
				if !strings.Contains(out, w) {
					t.Errorf("%s lacks %q", name, w)
				}
			}
		})
	}
}

// TestRequirementLineOutsideItsRevision: a requirement cited under a
// revision whose rules do not hold its sentence says so plainly.
func TestRequirementLineOutsideItsRevision(t *testing.T) {
	got := requirementLine("STD-46", spec.V20251125)
	if !strings.Contains(got, "2026-07-28 only, not a rule of this 2025-11-25 run: applied as advice") {
		t.Errorf("requirementLine(STD-46, 2025-11-25) = %q", got)
	}
	if got := requirementLine("STD-46", spec.V20260728); strings.Contains(got, "advice") {
		t.Errorf("requirementLine(STD-46, 2026-07-28) = %q", got)
	}
}

// TestRequirementLineOfADerivedRule: a rule of spec/DERIVED.md is cited as
// mcpflight's reading of its sentence, never as a registry row.
func TestRequirementLineOfADerivedRule(t *testing.T) {
	got := requirementLine("TSK-D1", spec.V20251125)
	if !strings.Contains(got, "derived by mcpflight from this sentence") || !strings.Contains(got, "cancelled before completion") {
		t.Errorf("requirementLine(TSK-D1) = %q", got)
	}
	if got := requirementLine("TSK-44", spec.V20251125); strings.Contains(got, "derived") {
		t.Errorf("requirementLine(TSK-44) = %q", got)
	}
}
