package results

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpflight/mcpflight/verdict"
)

func TestCompleteness(t *testing.T) {
	res := func(v verdict.Verdict, summary string) Result {
		return Result{Outcome: verdict.Outcome{Verdict: v, Summary: summary}}
	}
	na := func(why string) Result { return Result{Outcome: verdict.NotApplicable("%s", why)} }
	slow := "profile names no slow tool; pass --profile"
	http := "needs the Streamable HTTP transport; the target uses stdio"
	rev := "applies to 2025-11-25 only"
	both := []Result{res(verdict.Pass, ""), res(verdict.Skip, rev), res(verdict.Skip, "applies to 2026-07-28 only")}
	tests := []struct {
		name    string
		results []Result
		want    Completeness
		exit    int
		line    string
	}{
		{"half ran", []Result{res(verdict.Pass, ""), res(verdict.Skip, slow)},
			Completeness{Selected: 2, Applicable: 2, Ran: 1, NotRun: 1, Reason: slow, ReasonCount: 1, Remedy: remedy(slow)}, 0, ""},
		{"most skipped for the profile", []Result{res(verdict.Pass, ""), res(verdict.Skip, slow), res(verdict.Skip, slow), res(verdict.Skip, "capability \"logging\" not advertised")},
			Completeness{Selected: 4, Applicable: 4, Ran: 1, NotRun: 3, Reason: slow, ReasonCount: 2, Remedy: remedy(slow), Incomplete: true}, ExitIncomplete,
			"incomplete: 3 of 4 applicable cases did not run; 2 of them would run with a profile that names a slow tool (mcpflight profile init drafts one; pass it with --profile)"},
		{"other transport does not count", []Result{res(verdict.Pass, ""), res(verdict.Skip, http), res(verdict.Skip, http)},
			Completeness{Selected: 3, OtherTransport: 2, Applicable: 1, Ran: 1}, 0, ""},
		{"nothing for this revision", []Result{res(verdict.Skip, rev), res(verdict.Skip, rev)},
			Completeness{Selected: 2, OtherRevision: 2, Reason: rev, ReasonCount: 2, Remedy: remedy(rev), Incomplete: true}, ExitIncomplete,
			"incomplete: none of the 2 cases applies to this run; 2 of them would run under 2025-11-25 (--protocol 2025-11-25)"},
		{"cases of the other revision do not count", []Result{res(verdict.Pass, ""), res(verdict.Skip, rev), res(verdict.Skip, rev)},
			Completeness{Selected: 3, OtherRevision: 2, Applicable: 1, Ran: 1}, 0, ""},
		{"none applies", []Result{res(verdict.Skip, http)},
			Completeness{Selected: 1, OtherTransport: 1, Incomplete: true}, ExitIncomplete, "incomplete: none of the 1 cases applies to this run"},
		{"both revisions", both, Completeness{Selected: 3, OtherRevision: 2, Applicable: 1, Ran: 1}, 0, ""},
		{"a fail outranks incomplete", []Result{res(verdict.Fail, ""), res(verdict.Skip, slow), res(verdict.Skip, slow)},
			Completeness{Selected: 3, Applicable: 3, Ran: 1, NotRun: 2, Reason: slow, ReasonCount: 2, Remedy: remedy(slow), Incomplete: true}, 1, ""},
		{"not applicable does not count", []Result{res(verdict.Pass, ""), na("long-running tool with progress"), na("long-running tool with progress"), na("task tool")},
			Completeness{Selected: 4, NotApplicable: 3, NotApplicableWhy: []string{"not applicable: long-running tool with progress", "not applicable: task tool"}, Applicable: 1, Ran: 1}, 0, ""},
		{"an error outranks incomplete", []Result{res(verdict.Error, ""), res(verdict.Skip, slow), res(verdict.Skip, slow)},
			Completeness{Selected: 3, Applicable: 3, Ran: 1, NotRun: 2, Reason: slow, ReasonCount: 2, Remedy: remedy(slow), Incomplete: true}, 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Report{Results: tt.results, Teardown: TeardownGrade{Verdict: verdict.Pass}}
			got := r.Completeness()
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Completeness (-want +got):\n%s", d)
			}
			if code := r.ExitCode(); code != tt.exit {
				t.Errorf("exit code %d, want %d", code, tt.exit)
			}
			if tt.line != "" && got.Line() != tt.line {
				t.Errorf("line %q, want %q", got.Line(), tt.line)
			}
		})
	}
}

// TestScope: a run that left cases out as not applicable says how many
// and why, once each; one that left none out says nothing.
func TestScope(t *testing.T) {
	na := func(why string) Result { return Result{Outcome: verdict.NotApplicable("%s", why)} }
	r := &Report{Results: []Result{na("no slow"), {Outcome: verdict.Passf("ok")}, na("no slow"), na("no task")}}
	if got, want := r.Completeness().Scope(), "3 cases not applicable: no slow; no task"; got != want {
		t.Errorf("Scope = %q, want %q", got, want)
	}
	lacks := "the profile states the server has no %s tool"
	r = &Report{Results: []Result{{Outcome: verdict.NotApplicable(lacks, "slow")}, {Outcome: verdict.NotApplicable(lacks, "task")}}}
	if got, want := r.Completeness().Scope(), "2 cases not applicable: the profile states the server has no slow tool, no task tool"; got != want {
		t.Errorf("Scope = %q, want %q", got, want)
	}
	r = &Report{Results: []Result{{Outcome: verdict.Passf("ok")}}}
	if got := r.Completeness().Scope(); got != "" {
		t.Errorf("Scope = %q, want none", got)
	}
}
